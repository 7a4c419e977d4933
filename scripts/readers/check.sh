#!/usr/bin/env bash
# Opens every table of a neardup output, and a deduplicated export, with
# the readers analysts use (pandas, pyarrow, polars, Spark) as they would,
# and checks each against DuckDB value for value and against the column
# types of docs/tables.md (scripts/readers/check.py says how).
#
#   bash scripts/readers/check.sh OUTPUT [EXPORT]
#
# The readers come from PyPI, pinned in requirements.txt, into a virtual
# environment made once per machine under ~/.cache/neardup-readers; Spark
# runs on the machine's Java (17 or later).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${NEARDUP_READERS_CACHE:-$HOME/.cache/neardup-readers}
key=$(sha256sum "$here/requirements.txt" | cut -c1-12)
venv=$cache/venv-$key
if [ ! -x "$venv/bin/python" ] || [ ! -f "$venv/.complete" ]; then
  echo "readers: making $venv from scripts/readers/requirements.txt"
  rm -rf "$venv"
  mkdir -p "$cache"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
  touch "$venv/.complete"
fi
if ! command -v java >/dev/null 2>&1; then
  echo "readers: Spark needs Java 17 or later, and java is not on PATH"
  exit 1
fi
exec "$venv/bin/python" "$here/check.py" --tables-doc "$here/../../docs/tables.md" "$@"
