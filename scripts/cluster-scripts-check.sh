#!/usr/bin/env bash
# Checks what the cluster scripts would run, without a cluster: DRY_RUN=1
# prints the commands, and they must be exactly these.
set -euo pipefail
cd "$(dirname "$0")/.."
for f in scripts/run-*.sh scripts/flink-check.sh scripts/lib/launch.sh; do bash -n "$f"; done

# flink-check.sh (run through a job server by isolated-check.sh) refuses,
# before it builds or copies anything, a call without its two arguments
# and a STORE the task managers could not reach.
for args in "" "localhost:8099" "localhost:8099 /tmp/check"; do
  rc=0
  # shellcheck disable=SC2086 # the arguments are words
  scripts/flink-check.sh $args > /dev/null 2>&1 || rc=$?
  [ "$rc" = 2 ] || { echo "flink-check.sh $args: exit $rc, want 2 (refused)"; exit 1; }
done

beam=$(awk '$1 == "github.com/apache/beam/sdks/v2" {print $2}' go.mod | sed 's/^v//')

got=$(DRY_RUN=1 WORKER_BINARY=/tmp/neardup-worker PROJECT=my-project REGION=us-central1 BUCKET=my-bucket \
  scripts/run-dataflow.sh --input 'gs://my-bucket/crawl/*.parquet' --output gs://my-bucket/out)
want='env CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -o /tmp/neardup-worker ./cmd/runner
go run ./cmd/runner --runner=dataflow --project=my-project --region=us-central1 --staging_location=gs://my-bucket/neardup/staging --temp_location=gs://my-bucket/neardup/temp --worker_binary=/tmp/neardup-worker --num_workers=4 --max_num_workers=20 --worker_machine_type=n2-standard-4 --partitions=0 --input gs://my-bucket/crawl/\*.parquet --output gs://my-bucket/out'
[ "$got" = "$want" ] || { printf 'run-dataflow.sh would run:\n%s\nwant:\n%s\n' "$got" "$want"; exit 1; }

got=$(DRY_RUN=1 WORKER_BINARY=/tmp/neardup-worker scripts/run-flink.sh --input 's3://my-bucket/crawl/*.parquet' --output s3://my-bucket/out)
want="env CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -o /tmp/neardup-worker ./cmd/runner
go run ./cmd/runner --runner=flink --endpoint=localhost:8099 --environment_type=DOCKER --environment_config=apache/beam_go_sdk:$beam --worker_binary=/tmp/neardup-worker --parallelism=-1 --partitions=0 --input s3://my-bucket/crawl/\\*.parquet --output s3://my-bucket/out"
[ "$got" = "$want" ] || { printf 'run-flink.sh would run:\n%s\nwant:\n%s\n' "$got" "$want"; exit 1; }
# The export (no --partitions).
got=$(DRY_RUN=1 WORKER_BINARY=/tmp/neardup-worker PROJECT=my-project REGION=us-central1 BUCKET=my-bucket \
  scripts/run-dataflow.sh export --from gs://my-bucket/out --output gs://my-bucket/dedup --add-columns cluster_size)
want='env CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -o /tmp/neardup-worker ./cmd/runner
go run ./cmd/runner export --runner=dataflow --project=my-project --region=us-central1 --staging_location=gs://my-bucket/neardup/staging --temp_location=gs://my-bucket/neardup/temp --worker_binary=/tmp/neardup-worker --num_workers=4 --max_num_workers=20 --worker_machine_type=n2-standard-4 --from gs://my-bucket/out --output gs://my-bucket/dedup --add-columns cluster_size'
[ "$got" = "$want" ] || { printf 'run-dataflow.sh export would run:\n%s\nwant:\n%s\n' "$got" "$want"; exit 1; }
# Local paths are refused by the runner itself, whatever the script
# (workers that do not run in the launcher cannot reach them), before it
# contacts any cluster: each spelling of each path flag, every command.
go build -o "${TMPDIR:-/tmp}/neardup-scripts-check-runner" ./cmd/runner
runner="${TMPDIR:-/tmp}/neardup-scripts-check-runner"
trap 'rm -f "$runner"' EXIT
for args in "--input /tmp/x.parquet --output gs://b/o" "--input gs://b/x --output /tmp/o" "--input gs://b/x -output=/tmp/o" \
  "--input gs://b/x --output gs://b/o --dedup-output /tmp/dedup" "update --from /tmp/out --input gs://b/x --output gs://b/o" \
  "recluster --from gs://b/out --output=/tmp/o" "export --from gs://b/out --output /tmp/dedup"; do
  for runner_flags in "--runner=dataflow --project=p --region=r" "--runner=flink --endpoint=localhost:1 --environment_type=DOCKER"; do
    # shellcheck disable=SC2086 # the flags are words
    set -- $args
    sub=()
    case $1 in update | recluster | export) sub=("$1"); shift ;; esac
    # shellcheck disable=SC2086
    if msg=$(timeout 60 "$runner" ${sub[@]+"${sub[@]}"} $runner_flags "$@" 2>&1); then
      echo "the runner took a local path with $runner_flags: $args"; exit 1
    fi
    case $msg in
    *"cannot reach it"*) ;;
    *) printf 'the runner with %s %s failed, but not by refusing the local path:\n%s\n' "$runner_flags" "$args" "$msg"; exit 1 ;;
    esac
  done
done
echo "cluster scripts: dry runs as expected (Beam $beam)"
