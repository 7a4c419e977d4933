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
# flags, so a repeated flag there overrides the script's value. "recluster",
# "update" or "export" may come first, as with the runner itself. Inputs
# and outputs must be paths the harness containers can reach (gs://, s3://,
# or a mounted folder).
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib/launch.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"

subcommand "$@"
shift ${#sub[@]}
for a in "$@"; do
  case $a in
  -h | --help | -help) usage ;;
  esac
done
refuse_async "$@"

worker_binary flink
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
partitions

launch "$@"
