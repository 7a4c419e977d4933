#!/usr/bin/env bash
# Checks what the cluster scripts would run, without a cluster: DRY_RUN=1
# prints the commands, and they must be exactly these.
set -euo pipefail
cd "$(dirname "$0")/.."
for f in scripts/run-*.sh scripts/lib/launch.sh; do bash -n "$f"; done

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
# The export (no --partitions), and a local --dedup-output refused.
got=$(DRY_RUN=1 WORKER_BINARY=/tmp/neardup-worker PROJECT=my-project REGION=us-central1 BUCKET=my-bucket \
  scripts/run-dataflow.sh export --from gs://my-bucket/out --output gs://my-bucket/dedup --add-columns cluster_size)
want='env CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go build -o /tmp/neardup-worker ./cmd/runner
go run ./cmd/runner export --runner=dataflow --project=my-project --region=us-central1 --staging_location=gs://my-bucket/neardup/staging --temp_location=gs://my-bucket/neardup/temp --worker_binary=/tmp/neardup-worker --num_workers=4 --max_num_workers=20 --worker_machine_type=n2-standard-4 --from gs://my-bucket/out --output gs://my-bucket/dedup --add-columns cluster_size'
[ "$got" = "$want" ] || { printf 'run-dataflow.sh export would run:\n%s\nwant:\n%s\n' "$got" "$want"; exit 1; }
if DRY_RUN=1 PROJECT=p REGION=r BUCKET=b scripts/run-dataflow.sh --input gs://b/x --output gs://b/o --dedup-output /tmp/dedup >/dev/null 2>&1; then
  echo "run-dataflow.sh took a local --dedup-output"; exit 1
fi
echo "cluster scripts: dry runs as expected (Beam $beam)"
