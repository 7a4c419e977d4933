#!/usr/bin/env bash
# Runs neardup on Google Cloud Dataflow: builds a linux/amd64 worker binary of
# ./cmd/runner (CGO_ENABLED=0, into a temporary folder removed on exit), then
# launches the job from this machine with `go run ./cmd/runner
# --runner=dataflow`, which stages the binary and waits for the job to end.
#
#   PROJECT=my-project REGION=us-central1 BUCKET=my-bucket \
#     scripts/run-dataflow.sh --input 'gs://my-bucket/crawl/*.parquet' --output gs://my-bucket/neardup-out
#   scripts/run-dataflow.sh --project my-project --region us-central1 --bucket my-bucket \
#     recluster --from gs://my-bucket/neardup-out --policy containment:0.8 --output gs://my-bucket/contained
#
# Required, from the environment or as --project/--region/--bucket (both
# --flag=value and --flag value; these three are taken by the script):
#   PROJECT   Google Cloud project
#   REGION    Dataflow region (e.g. us-central1)
#   BUCKET    staging bucket: gs://BUCKET/neardup/staging and .../temp,
#             unless STAGING_LOCATION and TEMP_LOCATION are both set
# Optional:
#   NUM_WORKERS (4), MAX_NUM_WORKERS (20), MACHINE_TYPE (n2-standard-4),
#   PARTITIONS (0: neardup sizes them from the input), JOB_NAME,
#   WORKER_BINARY (where to build the worker, kept; default a temp file),
#   WORKER_GOARCH (amd64; arm64 for Arm machine types),
#   DRY_RUN=1 prints the build and launch commands instead of running them.
# Every other argument passes through to the runner after the script's own
# flags, so a repeated flag there overrides the script's value. "recluster"
# may come first, as with the runner itself.
set -euo pipefail

# usage prints the header above; with a message, as an error (status 2).
usage() {
  if (($#)); then
    echo "run-dataflow.sh: $*" >&2
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

# remote refuses local paths: the workers run in Google Cloud.
remote() {
  local flag=$1 part
  local -a parts
  IFS=, read -ra parts <<<"$2"
  for part in ${parts[@]+"${parts[@]}"}; do
    part=${part// /}
    if [[ -n $part && ($part != *://* || $part == file://*) ]]; then
      usage "$flag $part: Dataflow workers cannot read this machine's files; use gs://"
    fi
  done
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

project=${PROJECT:-}
region=${REGION:-}
bucket=${BUCKET:-}
sub=()
if [[ ${1:-} == recluster ]]; then
  sub=(recluster)
  shift
fi
args=()
while (($#)); do
  case $1 in
  -h | --help | -help) usage ;;
  --project=*) project=${1#*=} ;;
  --region=*) region=${1#*=} ;;
  --bucket=*) bucket=${1#*=} ;;
  --project | --region | --bucket)
    (($# >= 2)) || usage "$1 needs a value"
    case $1 in
    --project) project=$2 ;;
    --region) region=$2 ;;
    --bucket) bucket=$2 ;;
    esac
    shift
    ;;
  --input=* | --output=* | --from=*)
    remote "${1%%=*}" "${1#*=}"
    args+=("$1")
    ;;
  --input | --output | --from)
    (($# >= 2)) || usage "$1 needs a value"
    remote "$1" "$2"
    args+=("$1" "$2")
    shift
    ;;
  *) args+=("$1") ;;
  esac
  shift
done

refuse_async ${args[@]+"${args[@]}"}
[[ -n $project ]] || usage "no project: set PROJECT or pass --project"
[[ -n $region ]] || usage "no region: set REGION or pass --region"
staging=${STAGING_LOCATION:-}
temp=${TEMP_LOCATION:-}
if [[ -z $staging || -z $temp ]]; then
  [[ -n $bucket ]] || usage "no bucket: set BUCKET or pass --bucket (or set STAGING_LOCATION and TEMP_LOCATION)"
  bucket=${bucket#gs://}
  bucket=${bucket%%/*}
  staging=${staging:-gs://$bucket/neardup/staging}
  temp=${temp:-gs://$bucket/neardup/temp}
fi

if [[ -n ${WORKER_BINARY:-} ]]; then
  worker=$WORKER_BINARY
  [[ $worker == /* ]] || worker=$PWD/$worker
else
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/neardup-dataflow.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  worker=$tmp/neardup-worker
fi

cd "$(dirname "${BASH_SOURCE[0]}")/.."

flags=(
  --runner=dataflow
  --project="$project"
  --region="$region"
  --staging_location="$staging"
  --temp_location="$temp"
  --worker_binary="$worker"
  --num_workers="${NUM_WORKERS:-4}"
  --max_num_workers="${MAX_NUM_WORKERS:-20}"
  --worker_machine_type="${MACHINE_TYPE:-n2-standard-4}"
)
if ((${#sub[@]} == 0)); then
  flags+=(--partitions="${PARTITIONS:-0}") # recluster takes no --partitions
fi
if [[ -n ${JOB_NAME:-} ]]; then
  flags+=(--job_name="$JOB_NAME")
fi

# Not stripped (-s): Beam finds the pipeline's functions in the symbol table.
run env CGO_ENABLED=0 GOOS=linux GOARCH="${WORKER_GOARCH:-amd64}" go build -o "$worker" ./cmd/runner
run go run ./cmd/runner ${sub[@]+"${sub[@]}"} "${flags[@]}" ${args[@]+"${args[@]}"}
