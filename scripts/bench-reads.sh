#!/usr/bin/env bash
# Measures what a run reads from its object store, as a cluster pays for
# it: the input and output on s3:// (scripts/s3server, in memory), the
# run's own count (the manifest's reads, printed by the runner) beside the
# store's (every GET it answered, by object, written when it stops), by
# kind of object, and the whole against the input's bytes (issue 56's
# target: at most 1.5x, the input at most 1.1x).
#
# Usage (from the module root):
#
#	scripts/bench-reads.sh FILE.parquet...
#
# e.g. on a crawl of `go run ./cmd/bench gen --docs 300000 --text unicode`.
# Environment: BENCH (work folder, default /tmp/reads-bench), EXTRA (more
# runner flags), RUNNER (a runner binary to measure instead of this
# tree's, for a before and after). The store holds the input and the output in memory:
# about twice the input's size.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: $0 FILE.parquet..." >&2; exit 2; }
BENCH=${BENCH:-/tmp/reads-bench}
mkdir -p "$BENCH"
if [ -n "${RUNNER:-}" ]; then cp "$RUNNER" "$BENCH/runner"; else go build -o "$BENCH/runner" ./cmd/runner; fi
go build -o "$BENCH/s3server" ./scripts/s3server
files=()
for f in "$@"; do files+=("$(realpath "$f")"); done

cd "$BENCH"
rm -f s3.env reads.json
./s3server --addr 127.0.0.1:0 --bucket input --bucket output --reads "$BENCH/reads.json" >s3.env 2>s3.log &
srv=$!
trap 'kill $srv 2>/dev/null || true' EXIT
until [ -s s3.env ]; do kill -0 $srv; sleep 0.1; done
. ./s3.env
for f in "${files[@]}"; do
	curl -fsS -X PUT --data-binary "@$f" "$AWS_ENDPOINT_URL/input/run/$(basename "$f")" -o /dev/null
done
# shellcheck disable=SC2086 # EXTRA is flags, split on purpose
/usr/bin/time -v ./runner --verbose --input "s3://input/run/*.parquet" --output s3://output/run ${EXTRA:-} >run.out 2>run.err
kill $srv
wait $srv || true
trap - EXIT
grep -E '^neardup: read ' run.out
grep -E 'Elapsed|Maximum resident' run.err
# The store's count, by kind (the keys' folders, as the manifest's kinds)
# and by object family (numbers folded).
python3 - "$BENCH/reads.json" "${files[@]}" <<'PY'
import collections, json, os, re, sys
reads = json.load(open(sys.argv[1]))
inp = sum(os.path.getsize(f) for f in sys.argv[2:])
kinds, families = collections.Counter(), collections.defaultdict(lambda: [0, 0, 0])
for key, r in reads.items():
    kind = ("input" if key.startswith("input/") else
            "features" if "/_temporary/" in key and "/features/" in key else
            "temporary" if "/_temporary/" in key else "other")
    kinds[kind + " requests"] += r["Requests"]; kinds[kind + " bytes"] += r["Bytes"]
    fam = re.sub(r"\d+", "N", re.sub(r"_temporary/[^/]+", "_temporary/T", key))
    f = families[fam]; f[0] += 1; f[1] += r["Requests"]; f[2] += r["Bytes"]
total = sum(v for k, v in kinds.items() if k.endswith("bytes"))
print(f"the store served {total/1e6:.1f} MB, {total/inp:.2f}x the input's {inp/1e6:.1f} MB; "
      f"the input {kinds['input bytes']/inp:.3f}x")
for k in sorted(kinds):
    print(f"  {k:22s} {kinds[k]:>14,}")
print("| objects | count | requests | MB |\n|---|---|---|---|")
for fam, (n, q, b) in sorted(families.items(), key=lambda x: -x[1][2])[:12]:
    print(f"| {fam} | {n} | {q:,} | {b/1e6:.2f} |")
PY
