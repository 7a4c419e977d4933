#!/usr/bin/env bash
# Checks neardup on a Flink cluster you have: runs the sample crawl
# through your Beam Flink job server as scripts/run-flink.sh does (the Go
# SDK harness in Docker on the task managers), brings the tables back, and
# compares every table and the manifest's settings with the golden
# digests of the same run on the embedded runner
# (testdata/golden/digests.txt, case sample/default). It passes only if
# every digest is equal.
#
#   scripts/flink-check.sh ENDPOINT STORE [RUNNER FLAGS...]
#   e.g. scripts/flink-check.sh jobserver:8099 s3://my-bucket/neardup-check
#
# ENDPOINT is the job server's job endpoint (FLINK_JOB_SERVER of
# run-flink.sh). STORE is a folder on an object store (s3://, gs://) that
# both this machine and the harness containers reach with their
# credentials (AWS_* or Google's application credentials): the check puts
# the sample below STORE/RUN/testdata/crawl, the job writes STORE/RUN/out,
# and both are removed when the check passes (KEEP=1 keeps them; a failed
# check keeps them, and says where). RUN is the time and this process's id,
# so that checks never share a folder.
#
# Settings as for run-flink.sh: PARALLELISM, SDK_IMAGE, WORKER_BINARY,
# WORKER_GOARCH. PARTITIONS is 4, the golden run's (its manifest settings
# say partitions="4"); another gives the same tables but another settings
# digest. RUNNER FLAGS pass through to the runner after the check's own,
# as run-flink.sh passes them.
#
# No Flink has run this here: Beam's Flink job server and runner are not
# served by the package registries this project's machines reach (see
# docs/cluster.md, "A check on your Flink"). CI runs this very script
# against a standalone Prism job server through --runner=flink (the Go SDK's
# Flink runner is its universal runner, the job-API path a Flink job server
# takes), with an EXTERNAL worker pool in place of the Docker harness
# (scripts/isolated-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)

if (($# < 2)) || [[ $1 == -* ]]; then
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p;}' "$0" >&2
  exit 2
fi
endpoint=$1 store=${2%/}
shift 2
case $store in
*://*) ;;
*) echo "flink-check: STORE must be on an object store the task managers reach (s3://, gs://), not $store" >&2; exit 2 ;;
esac
digests=$root/testdata/golden/digests.txt
case_name=sample/default
sweep=2020-01-01 # the golden runs' --sweep-date (scripts/golden/check.sh)

work=$(mktemp -d "${TMPDIR:-/tmp}/neardup-flink-check.XXXXXX")
base="$store/$(date -u +%Y%m%dT%H%M%SZ)-$$"
passed=""
cleanup() {
  if [[ -n $passed && -z ${KEEP:-} ]]; then
    "$work/objcopy" -remove "$base" || echo "flink-check: could not remove $base" >&2
    rm -rf "$work"
  else
    echo "flink-check: kept $base (the sample and the job's output) and $work (logs, local copy)" >&2
  fi
}
trap cleanup EXIT

go build -o "$work/objcopy" ./scripts/objcopy
go build -o "$work/golden" ./scripts/golden

"$work/objcopy" testdata/crawl "$base/testdata/crawl"
echo "flink-check: running the sample on $endpoint, output $base/out" >&2
FLINK_JOB_SERVER=$endpoint PARTITIONS=${PARTITIONS:-4} scripts/run-flink.sh \
  --input "$base/testdata/crawl/*.parquet" --output "$base/out" --sweep-date="$sweep" --progress=auto "$@" \
  2> >(tee "$work/run.log" >&2)

"$work/objcopy" "$base/out" "$work/out"
[[ -f $work/out/_SUCCESS ]] || { echo "flink-check: the output has no _SUCCESS" >&2; exit 1; }
# The docs rows name their input files: below $base as below the
# repository in the golden run, both stripped to testdata/crawl/....
"$work/golden" --strip "$base/" "$work/out" | sed "s|^|$case_name |" > "$work/actual.txt"
grep "^$case_name " "$digests" > "$work/expected.txt"
[[ -s $work/expected.txt ]] || { echo "flink-check: $digests has no $case_name case" >&2; exit 1; }
if ! diff -u --label "expected (${digests#"$root/"})" --label "actual (Flink)" "$work/expected.txt" "$work/actual.txt"; then
  echo "flink-check: FAIL: the tables above differ from the embedded runner's" >&2
  exit 1
fi
passed=1
echo "flink-check: PASS: $(wc -l < "$work/actual.txt") digests of $case_name equal the embedded runner's (${digests#"$root/"})"
