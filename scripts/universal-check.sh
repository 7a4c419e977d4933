#!/usr/bin/env bash
# Runs the sample pipeline through a standalone Prism job server, the same
# job-API path (--runner=universal) the Flink and Spark runners use, and
# checks its tables equal the embedded runner's. The server is stopped by
# its own process id, whatever happens.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# A free port on loopback: one nothing answers on.
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  echo "no free port found" >&2; return 1
}

go build -o "$work/prism" github.com/apache/beam/sdks/v2/go/cmd/prism
go build -o "$work/runner" ./cmd/runner
go build -o "$work/tablediff" ./scripts/tablediff

job_port=$(free_port)
web_port=$(free_port)
"$work/prism" --job_port "$job_port" --web_port "$web_port" > "$work/prism.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$job_port") 2>/dev/null; then break; fi
  kill -0 "$server" 2>/dev/null || { cat "$work/prism.log"; echo "prism job server died" >&2; exit 1; }
  sleep 0.1
done

input='testdata/crawl/*.parquet'
# One sweep date for every run, so that runs on either side of midnight
# (UTC) still compare equal.
"$work/runner" --sweep-date=2026-01-01 --input "$input" --output "$work/universal" \
  --runner=universal --endpoint="localhost:$job_port" --environment_type=LOOPBACK --beam_strict \
  2> "$work/universal.log" || { tail -30 "$work/universal.log"; exit 1; }
"$work/runner" --sweep-date=2026-01-01 --input "$input" --output "$work/embedded" --beam_strict \
  2> "$work/embedded.log" || { tail -30 "$work/embedded.log"; exit 1; }
"$work/tablediff" "$work/universal" "$work/embedded"
# The distributed components (many more stages, CoGroupByKeys, tallies)
# through the job server too: the same tables.
"$work/runner" --sweep-date=2026-01-01 --input "$input" --output "$work/universal-distributed" --components=distributed \
  --runner=universal --endpoint="localhost:$job_port" --environment_type=LOOPBACK --beam_strict \
  2> "$work/universal-distributed.log" || { tail -30 "$work/universal-distributed.log"; exit 1; }
"$work/tablediff" "$work/universal-distributed" "$work/embedded"
# The site-template step (its own shuffles and tallies) through the job
# server too: the same tables as the embedded run with the same flag.
"$work/runner" --sweep-date=2026-01-01 --input "$input" --output "$work/universal-templates" --template-shingles=auto \
  --runner=universal --endpoint="localhost:$job_port" --environment_type=LOOPBACK --beam_strict \
  2> "$work/universal-templates.log" || { tail -30 "$work/universal-templates.log"; exit 1; }
"$work/runner" --sweep-date=2026-01-01 --input "$input" --output "$work/embedded-templates" --template-shingles=auto --beam_strict \
  2> "$work/embedded-templates.log" || { tail -30 "$work/embedded-templates.log"; exit 1; }
"$work/tablediff" "$work/universal-templates" "$work/embedded-templates"
# Redirects (URL claims, eight rounds of hops over URL partitions, the
# join with the clusters) through the job server: the embedded run's.
"$work/runner" --sweep-date=2026-01-01 --input 'testdata/redirects/*.parquet' --output "$work/universal-redirects" --redirect-column fetch_redirect \
  --runner=universal --endpoint="localhost:$job_port" --environment_type=LOOPBACK --beam_strict \
  2> "$work/universal-redirects.log" || { tail -30 "$work/universal-redirects.log"; exit 1; }
"$work/runner" --sweep-date=2026-01-01 --input 'testdata/redirects/*.parquet' --output "$work/embedded-redirects" --redirect-column fetch_redirect --beam_strict \
  2> "$work/embedded-redirects.log" || { tail -30 "$work/embedded-redirects.log"; exit 1; }
"$work/tablediff" "$work/universal-redirects" "$work/embedded-redirects"
# A run writing some tables only (--tables: the steps of the others not
# built) through the job server: those tables as the embedded full run's.
"$work/runner" --sweep-date=2026-01-01 --input "$input" --output "$work/universal-tables" --tables=docs,clusters,urls \
  --runner=universal --endpoint="localhost:$job_port" --environment_type=LOOPBACK --beam_strict \
  2> "$work/universal-tables.log" || { tail -30 "$work/universal-tables.log"; exit 1; }
"$work/tablediff" "$work/universal-tables" "$work/embedded" docs clusters urls
# An update (the index's tables read back, the new half sketched) through
# the job server: the same tables as the embedded full run over both halves.
"$work/runner" --sweep-date=2026-01-01 --input 'testdata/crawl/part-0000[01].parquet' --output "$work/index" --beam_strict \
  2> "$work/index.log" || { tail -30 "$work/index.log"; exit 1; }
"$work/runner" update --sweep-date=2026-01-01 --from "$work/index" --input 'testdata/crawl/part-0000[23].parquet' --output "$work/universal-update" \
  --runner=universal --endpoint="localhost:$job_port" --environment_type=LOOPBACK --beam_strict \
  2> "$work/universal-update.log" || { tail -30 "$work/universal-update.log"; exit 1; }
"$work/tablediff" "$work/universal-update" "$work/embedded"
# An update of a crawl with redirects (the index's claims on URLs read
# back, the chains followed again over old and new rows): the embedded
# full run's tables.
"$work/runner" --sweep-date=2026-01-01 --input 'testdata/redirects/part-00000.parquet' --output "$work/index-redirects" --redirect-column fetch_redirect --beam_strict \
  2> "$work/index-redirects.log" || { tail -30 "$work/index-redirects.log"; exit 1; }
"$work/runner" update --sweep-date=2026-01-01 --from "$work/index-redirects" --input 'testdata/redirects/part-00001.parquet' --output "$work/universal-update-redirects" \
  --redirect-column fetch_redirect --runner=universal --endpoint="localhost:$job_port" --environment_type=LOOPBACK --beam_strict \
  2> "$work/universal-update-redirects.log" || { tail -30 "$work/universal-update-redirects.log"; exit 1; }
"$work/tablediff" "$work/universal-update-redirects" "$work/embedded-redirects"
# The verification engines and the exact join (their own shuffles: the
# features to the pairs that want them) through the job server too.
for flags in "--mode=exact" "--verify=bloom --features=chunks:256 --stopwords=en" "--mode=supershingle --sketch=min:100 --verify=exact"; do
  name=$(echo "$flags" | tr -c 'a-z0-9' '-')
  # shellcheck disable=SC2086 # the flags are words
  "$work/runner" --sweep-date=2026-01-01 --input "$input" --output "$work/universal$name" $flags \
    --runner=universal --endpoint="localhost:$job_port" --environment_type=LOOPBACK --beam_strict \
    2> "$work/universal$name.log" || { tail -30 "$work/universal$name.log"; exit 1; }
  # shellcheck disable=SC2086
  "$work/runner" --sweep-date=2026-01-01 --input "$input" --output "$work/embedded$name" $flags --beam_strict \
    2> "$work/embedded$name.log" || { tail -30 "$work/embedded$name.log"; exit 1; }
  "$work/tablediff" "$work/universal$name" "$work/embedded$name"
done
# The export (docs shards read one at a time, cluster sizes counted by
# partition, one writer per input file), with every added column,
# through the job server: the same bytes as the embedded export.
"$work/runner" export --from "$work/embedded" --output "$work/export-universal" --add-columns all \
  --runner=universal --endpoint="localhost:$job_port" --environment_type=LOOPBACK --beam_strict \
  2> "$work/export-universal.log" || { tail -30 "$work/export-universal.log"; exit 1; }
"$work/runner" export --from "$work/embedded" --output "$work/export-embedded" --beam_strict --add-columns all \
  2> "$work/export-embedded.log" || { tail -30 "$work/export-embedded.log"; exit 1; }
for f in "$work"/export-embedded/*.parquet; do
  cmp "$f" "$work/export-universal/$(basename "$f")" || { echo "export differs through the job server: $(basename "$f")" >&2; exit 1; }
done
ls "$work"/export-embedded/*.parquet > /dev/null
echo "universal-check: the export through the job server is the embedded export, byte for byte"
