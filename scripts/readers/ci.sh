#!/usr/bin/env bash
# CI's readers stage: every table and export that users open with pandas,
# pyarrow, polars and Spark, checked against DuckDB (check.sh):
#
# - the sample crawl's output, and its export with every added column,
#   and the README's DuckDB queries run in each reader;
# - docs/redirects.md's outputs (a sweep and its update), and its queries;
# - a crawl of 8,194 files (scripts/readers/manyfiles), whose doc IDs
#   (file << 40 | row) pass 2^53 from file 8,192 on: its output, a
#   recluster of it, an update of it with two more files, and the
#   update's export, so that every id is read exactly by each reader
#   after each command that writes ids.
#
#   bash scripts/readers/ci.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
work=$(mktemp -d "${TMPDIR:-/tmp}/neardup-readers.XXXXXX")
trap 'rm -rf "$work"' EXIT
go build -o "$work/runner" ./cmd/runner
run() { # run NAME ARGS...: the runner, its log kept for a failure
  local name=$1
  shift
  if ! "$work/runner" "$@" 2> "$work/$name.log"; then
    cat "$work/$name.log"
    echo "readers: runner $* failed"
    exit 1
  fi
  tail -n 1 "$work/$name.log"
}

run sample --input 'testdata/crawl/*.parquet' --output "$work/sample"
run sample-export export --from "$work/sample" --output "$work/sample-dedup" --add-columns all
bash scripts/readers/check.sh --queries README.md "$work/sample" "$work/sample-dedup" 2> "$work/check.log" || { grep -Ev 'WARN|Warning|require_minimum' "$work/check.log" | tail -20; exit 1; }

# docs/redirects.md's outputs, and its queries in every reader.
run redirects-1 --input 'testdata/redirects/*.parquet' --output "$work/redirects-1" --redirect-column fetch_redirect --sweep-date 2026-10-01
run redirects-2 update --from "$work/redirects-1" --input 'testdata/redirects-recrawl/*.parquet' --output "$work/redirects-2" \
  --redirect-column fetch_redirect --sweep-date 2026-11-01
run neardup-redirects --input 'testdata/redirects/*.parquet' --output "$work/neardup-redirects" --redirect-column fetch_redirect
bash scripts/readers/check.sh --queries docs/redirects.md --output redirects-1="$work/redirects-1" --output redirects-2="$work/redirects-2" \
  --output neardup-redirects="$work/neardup-redirects" "$work/redirects-2" 2> "$work/check.log" || { grep -Ev 'WARN|Warning|require_minimum' "$work/check.log" | tail -20; exit 1; }

go run ./scripts/readers/manyfiles -out "$work/many" -files 8194
go run ./scripts/readers/manyfiles -out "$work/many-new" -from 8194 -files 2
run many --input "$work/many/*.parquet" --output "$work/many-out"
run many-recluster recluster --from "$work/many-out" --output "$work/many-recluster" --threshold 0.8
run many-update update --from "$work/many-out" --input "$work/many-new/*.parquet" --output "$work/many-update"
run many-export export --from "$work/many-update" --output "$work/many-dedup" --add-columns all
for out in many-out many-recluster; do
  bash scripts/readers/check.sh "$work/$out" 2> "$work/check.log" || { grep -Ev 'WARN|Warning|require_minimum' "$work/check.log" | tail -20; exit 1; }
done
bash scripts/readers/check.sh "$work/many-update" "$work/many-dedup" 2> "$work/check.log" || { grep -Ev 'WARN|Warning|require_minimum' "$work/check.log" | tail -20; exit 1; }
