#!/usr/bin/env bash
# Runs the SQL block of the README (between the duckdb-queries markers) with
# DuckDB over an output folder, so the documented queries are known to work.
# Usage: scripts/duckdb/check.sh OUTPUT_DIR
# DuckDB comes from the npm registry (@duckdb/node-api, prebuilt per platform).
set -euo pipefail
out=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=${NEARDUP_DUCKDB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/neardup-duckdb}
if [ ! -d "$cache/node_modules/@duckdb/node-api" ]; then
  mkdir -p "$cache"
  (cd "$cache" && npm init -y >/dev/null 2>&1 && npm install --silent --no-audit --no-fund @duckdb/node-api@1.5.6-r.1 >/dev/null)
fi
sql=$(mktemp)
trap 'rm -f "$sql"' EXIT
awk '/<!-- duckdb-queries -->/{f=1;next} /<!-- \/duckdb-queries -->/{f=0} f && !/^```/' "$root/README.md" > "$sql"
[ -s "$sql" ] || { echo "no duckdb-queries block in README.md"; exit 1; }
cp "$root/scripts/duckdb/query.mjs" "$cache/query.mjs"
node "$cache/query.mjs" "$sql" "$out"
