#!/usr/bin/env bash
# Runs neardup on Apache Flink through a Beam Flink job server: builds a
# linux/amd64 worker binary of ./cmd/runner (CGO_ENABLED=0, into a temporary
# folder removed on exit), then submits the job with `go run ./cmd/runner
# --runner=flink`. Flink's task managers start the Go SDK harness in Docker
# (apache/beam_go_sdk at the Beam version in go.mod), which runs the binary.
#
#   FLINK_JOB_SERVER=jobserver:8099 PARALLELISM=8 \
#     scripts/run-flink.sh --input 's3://my-bucket/crawl/*.parquet' --output s3://my-bucket/neardup-out
#
# Settings, all optional:
#   FLINK_JOB_SERVER   the job server's job endpoint (localhost:8099)
#   PARALLELISM        Flink parallelism (-1: the cluster's default)
#   PARTITIONS         neardup's hash partitions per shuffle (0: sized from
#                      the input); keep it at least PARALLELISM
#   SDK_IMAGE          the SDK harness image (apache/beam_go_sdk:VERSION,
#                      VERSION from go.mod's Beam require line)
#   WORKER_BINARY      where to build the worker, kept (default a temp file)
#   WORKER_GOARCH      amd64; arm64 for Arm task managers
#   DRY_RUN=1          print the build and launch commands instead of running
# Every other argument passes through to the runner after the script's own
# flags, so a repeated flag there overrides the script's value. "recluster"
# may come first, as with the runner itself. Inputs and outputs must be
# paths the harness containers can reach (gs://, s3://, or a mounted folder).
set -euo pipefail

# usage prints the header above; with a message, as an error (status 2).
usage() {
  if (($#)); then
    echo "run-flink.sh: $*" >&2
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p;}' "${BASH_SOURCE[0]}" >&2
    exit 2
  fi
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p;}' "${BASH_SOURCE[0]}"
  exit 0
}

# run prints its command (shell-quoted, one line) under DRY_RUN, else runs it.
run() {
  if [[ ${DRY_RUN:-0} != 0 ]]; then
    local line
    line=$(printf '%q ' "$@")
    printf '%s\n' "${line% }"
  else
    "$@"
  fi
}

# refuse_async stops --async: neardup publishes its tables from this process
# once the job has ended, so a launcher returning at submission would
# publish (and write _SUCCESS) before the job has written anything.
refuse_async() {
  local a
  for a in "$@"; do
    case $a in
    -async | --async | -execute_async | --execute_async | \
      -async=[!0fF]* | --async=[!0fF]* | -execute_async=[!0fF]* | --execute_async=[!0fF]*)
      usage "$a: neardup publishes the output when the job ends, so it must wait for it"
      ;;
    *) ;;
    esac
  done
}

sub=()
if [[ ${1:-} == recluster ]]; then
  sub=(recluster)
  shift
fi
for a in "$@"; do
  case $a in
  -h | --help | -help) usage ;;
  esac
done
refuse_async "$@"

if [[ -n ${WORKER_BINARY:-} ]]; then
  worker=$WORKER_BINARY
  [[ $worker == /* ]] || worker=$PWD/$worker
else
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/neardup-flink.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  worker=$tmp/neardup-worker
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The harness image must be the SDK version the binary is built with.
beam_version=$(awk '$1 != "replace" { for (i = 1; i < NF; i++) if ($i == "github.com/apache/beam/sdks/v2") { v = $(i + 1); sub(/^v/, "", v); print v; exit } }' go.mod)
[[ $beam_version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || usage "cannot read the Beam version from go.mod (got '$beam_version')"

flags=(
  --runner=flink
  --endpoint="${FLINK_JOB_SERVER:-localhost:8099}"
  --environment_type=DOCKER
  --environment_config="${SDK_IMAGE:-apache/beam_go_sdk:$beam_version}"
  --worker_binary="$worker"
  --parallelism="${PARALLELISM:--1}"
)
if ((${#sub[@]} == 0)); then
  flags+=(--partitions="${PARTITIONS:-0}") # recluster takes no --partitions
fi

# Not stripped (-s): Beam finds the pipeline's functions in the symbol table.
run env CGO_ENABLED=0 GOOS=linux GOARCH="${WORKER_GOARCH:-amd64}" go build -o "$worker" ./cmd/runner
run go run ./cmd/runner ${sub[@]+"${sub[@]}"} "${flags[@]}" "$@"
