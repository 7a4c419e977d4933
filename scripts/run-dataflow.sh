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
# flags, so a repeated flag there overrides the script's value. "recluster",
# "update" or "export" may come first, as with the runner itself.
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib/launch.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/launch.sh"

project=${PROJECT:-}
region=${REGION:-}
bucket=${BUCKET:-}
subcommand "$@"
shift ${#sub[@]}
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

worker_binary dataflow
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
partitions
if [[ -n ${JOB_NAME:-} ]]; then
  flags+=(--job_name="$JOB_NAME")
fi

launch ${args[@]+"${args[@]}"}
