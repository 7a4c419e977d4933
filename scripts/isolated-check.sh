#!/usr/bin/env bash
# Runs neardup through Beam workers that share nothing with the launcher
# (issue 38), as Flink's, Spark's or Dataflow's workers share nothing with
# the machine that submits the job: a standalone Prism job server hands
# the work to a Go SDK worker pool (--environment_type=EXTERNAL) started
# in its own mount namespace, where the launcher's work folder, the
# repository (testdata) and ../shared are hidden behind empty tmpfs
# mounts, as is /tmp. Input and output live in an S3-compatible store on
# loopback (scripts/s3server), which both sides reach. It checks that:
#
#   - the sample and a shared corpus, read from and written to s3://,
#     give through those workers the tables the embedded runner gives
#     (the same s3:// input, another s3:// output);
#   - an update and an export with s3:// paths through those workers give
#     the embedded runner's tables and bytes;
#   - a local --output (or --input) with those workers is refused before
#     any job is submitted. Before the refusal (pipelines/paths.go,
#     workersReach) such a run exited 0, wrote _SUCCESS, counted 750 docs
#     rows in its summary and published a docs table of 0 rows: the
#     shards stayed in the workers' own /tmp (beam-go-facts.md, "Workers
#     that share nothing with the launcher").
#
# ISOLATED_CHECK_MEMORY=BYTES (4294967296, 4G or 4GiB) puts the worker pool, and so every worker,
# in a cgroup v1 memory group of its own with that limit (as a cluster
# manager caps a task manager), reports the group's peak after each run
# through it, and fails if the kernel killed a worker for memory. The
# workers' --memory-limit=auto reads the group's limit (internal/memlimit).
# ISOLATED_CHECK_INPUT=DIR adds DIR's *.parquet files as one more input,
# run through the workers and embedded like the others.
#
# Needs root (unshare, mount), Linux, curl, and port 50000 free (the Go
# SDK's worker pool listens there, fixed). Everything it starts (the
# store, the job server, the pool and the workers the pool starts) is
# ended by process id on every exit path, and each step is bounded by
# what is left of ISOLATED_CHECK_TIMEOUT (seconds, after the builds;
# default 900); the builds are bounded by ISOLATED_CHECK_BUILD_TIMEOUT
# (default 1800: a cold build cache on 2 cores takes minutes).
#
# The launcher stages its own binary (--worker_binary, the runner built
# here). Without that flag Beam's universal runner (runnerlib.Execute)
# cross-compiles the main package at submission, `go build -trimpath`
# with CGO_ENABLED=0, whose build cache the normal build does not share:
# on a cold cache that is a full rebuild of the module graph (10 minutes
# here, under load), and it builds whatever the working tree holds at
# that moment, not the launcher's code.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd -P)

if [ "$(id -u)" != 0 ]; then
  echo "isolated-check: needs root (unshare --mount, mount -t tmpfs)" >&2
  exit 1
fi
for tool in unshare nsenter setpriv mount curl timeout pgrep; do
  command -v "$tool" > /dev/null || { echo "isolated-check: needs $tool" >&2; exit 1; }
done

corpus_name=deb-copyright
corpus=""
if [ -f ../shared/data/deb-copyright.parquet ]; then
  corpus=$(cd ../shared/data && pwd -P)/deb-copyright.parquet
else
  echo "isolated-check: ../shared/data/deb-copyright.parquet is absent: the sample only" >&2
fi

# What this script started and must end: the store, the job server, the
# pool, and the command it waits for (fg).
work="" s3server="" server="" pool="" fg="" reserved="" cgroup=""

# descendants prints the process ids below $1, deepest first.
descendants() {
  local c
  for c in $(pgrep -P "$1" || true); do
    descendants "$c"
    echo "$c"
  done
}

# stop ends the process $1 and every process below it, by id: TERM, then
# KILL to what is left after 5 s. $1 must be a child of this shell.
stop() {
  local pid=$1 pids p alive=""
  pids="$(descendants "$pid") $pid"
  # shellcheck disable=SC2086 # a list of ids
  kill -TERM $pids 2> /dev/null || true
  for _ in $(seq 1 50); do
    alive=""
    for p in $pids; do if kill -0 "$p" 2> /dev/null; then alive="$alive $p"; fi; done
    [ -z "$alive" ] && break
    sleep 0.1
  done
  # shellcheck disable=SC2086
  if [ -n "$alive" ]; then kill -KILL $alive 2> /dev/null || true; fi
  wait "$pid" 2> /dev/null || true
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$fg" ]; then stop "$fg"; fi
  # The pool before the job server: its workers (in its pid namespace)
  # go with it.
  if [ -n "$pool" ]; then stop "$pool"; fi
  if [ -n "$cgroup" ]; then rmdir "$cgroup" 2> /dev/null || true; fi
  if [ -n "$server" ]; then stop "$server"; fi
  if [ -n "$s3server" ]; then stop "$s3server"; fi
  if [ -n "$work" ]; then rm -rf "$work"; fi
  if [ -n "$reserved" ]; then echo "$reserved_before" > "$reserved" || true; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
work=$(mktemp -d)
work=$(cd "$work" && pwd -P)

# A command after these dies with this script, however the script ends
# (even by SIGKILL, which no trap sees): the kernel sends it the signal
# when its parent, this shell, goes.
tied_kill=(setpriv --pdeathsig KILL)
tied_term=(setpriv --pdeathsig TERM)

# bounded SECONDS CMD...: runs CMD, ended after SECONDS or with this
# script. It runs in the background, waited for, so that a signal to the
# script is handled at once (bash defers traps while a foreground command
# runs).
bounded() {
  local limit=$1 rc=0
  shift
  if ((limit <= 0)); then
    echo "isolated-check: out of time before: $*" >&2
    return 124
  fi
  "${tied_term[@]}" timeout -k 10 "$limit" "$@" &
  fg=$!
  wait "$fg" || rc=$?
  fg=""
  if [ "$rc" = 124 ]; then echo "isolated-check: timed out: $*" >&2; fi
  return "$rc"
}

# A free port on loopback: one nothing answers on.
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null; then
      echo "$p"
      return
    fi
  done
  echo "isolated-check: no free port found" >&2
  return 1
}

listens() { (exec 3<> "/dev/tcp/127.0.0.1/$1") 2> /dev/null; }

# Port 50000 is the pool's, fixed: a pool left there by someone else
# would take our jobs (and its workers would see other folders). Checked
# before the builds, to fail at once, and again before the pool starts.
port_50000_free() {
  if listens 50000; then
    echo "isolated-check: something already listens on port 50000, where the Go SDK worker pool must listen:" >&2
    ss -ltnp 2> /dev/null | awk 'NR == 1 || /:50000 /' >&2 || true
    echo "isolated-check: end it (a worker pool left behind?) and run again" >&2
    return 1
  fi
}
port_50000_free

# Port 50000 lies in this machine class's ephemeral range
# (ip_local_port_range 32768-60999): any outgoing connection made before
# the pool starts (the builds, the launchers) may take it as its local
# port, and then the pool's bind fails though nothing listens ("address
# already in use", seen once in CI). Reserved for the check, given back
# at exit; a machine that will not let us only runs the small risk.
if [ -w /proc/sys/net/ipv4/ip_local_reserved_ports ]; then
  reserved_before=$(cat /proc/sys/net/ipv4/ip_local_reserved_ports)
  if echo "${reserved_before:+$reserved_before,}50000" > /proc/sys/net/ipv4/ip_local_reserved_ports 2> /dev/null; then
    reserved=/proc/sys/net/ipv4/ip_local_reserved_ports
  fi
fi

t0=$SECONDS
build_deadline=$((SECONDS + ${ISOLATED_CHECK_BUILD_TIMEOUT:-1800}))
build() { bounded $((build_deadline - SECONDS)) go build "$@"; }
build -o "$work/prism" github.com/apache/beam/sdks/v2/go/cmd/prism
build -o "$work/boot" github.com/apache/beam/sdks/v2/go/container
build -o "$work/runner" ./cmd/runner
build -o "$work/tablediff" ./scripts/tablediff
build -o "$work/s3server" ./scripts/s3server
# The worker binary scripts/flink-check.sh builds (as run-flink.sh does):
# built here, within the build time, so that its own build finds it done.
CGO_ENABLED=0 GOOS=linux GOARCH=amd64 build -o "$work/flink-worker" ./cmd/runner
echo "isolated-check: built in $((SECONDS - t0)) s" >&2

t0=$SECONDS
deadline=$((SECONDS + ${ISOLATED_CHECK_TIMEOUT:-900}))
# within runs a command, ended when the check's time is up.
within() { bounded $((deadline - SECONDS)) "$@"; }
# wait_for waits up to $2 tenths of a second for the command after it to
# succeed while the process $1 lives.
wait_for() {
  local pid=$1 n=$2
  shift 2
  for _ in $(seq 1 "$n"); do
    "$@" && return 0
    kill -0 "$pid" 2> /dev/null || return 1
    sleep 0.1
  done
  return 1
}

# The object store, with its environment (endpoint, region, credentials)
# exported to everything started from here on: the launchers,
# the job server and the worker pool.
bucket=neardup-check
s3="s3://$bucket"
"${tied_kill[@]}" "$work/s3server" --addr 127.0.0.1:0 --bucket "$bucket" > "$work/s3.env" 2> "$work/s3server.log" &
s3server=$!
wait_for "$s3server" 100 test -s "$work/s3.env" || { cat "$work/s3server.log" >&2; echo "isolated-check: s3server did not start" >&2; exit 1; }
# shellcheck disable=SC1091
. "$work/s3.env"

# put FILE s3://BUCKET/KEY
put() {
  within curl -fsS -X PUT --data-binary "@$1" "$AWS_ENDPOINT_URL/${2#s3://}" -o /dev/null || s3_gone
}
# s3_gone says why the store did not answer, and fails. Seen once in
# CI (2026-12-04): connection refused on the store's port at the first
# put, after it had printed its address; a rerun passed.
s3_gone() {
  if kill -0 "$s3server" 2> /dev/null; then
    echo "isolated-check: the s3server (pid $s3server) runs but did not answer at $AWS_ENDPOINT_URL" >&2
  else
    wait "$s3server" && rc=0 || rc=$?
    echo "isolated-check: the s3server (pid $s3server) has ended, exit $rc" >&2
  fi
  cat "$work/s3server.log" >&2
  return 1
}
# keys s3://BUCKET/PREFIX/: the keys below it, one a line.
keys() {
  local b=${1#s3://} list
  list=$(within curl -fsS "$AWS_ENDPOINT_URL/${b%%/*}?list-type=2&prefix=${b#*/}")
  case $list in *"<IsTruncated>true</IsTruncated>"*) echo "isolated-check: listing $1 is truncated" >&2; return 1 ;; esac
  grep -o '<Key>[^<]*</Key>' <<< "$list" | sed -e 's/^<Key>//' -e 's/<\/Key>$//' || true
}
# download s3://BUCKET/PREFIX/ DIR: every object below PREFIX into DIR.
download() {
  local b=${1#s3://} k n=0 list
  mkdir -p "$2"
  list=$(keys "$1")
  for k in $list; do
    mkdir -p "$2/$(dirname "${k#"${b#*/}"}")"
    within curl -fsS "$AWS_ENDPOINT_URL/${b%%/*}/$k" -o "$2/${k#"${b#*/}"}"
    n=$((n + 1))
  done
  ((n > 0)) || { echo "isolated-check: no object below $1" >&2; return 1; }
}

# same_tables s3://A s3://B: the two outputs hold the same rows in every
# table, compared from local copies (the downloads also show that every
# table's files can be fetched whole).
same_tables() {
  local a b
  a="$work/copy/${1#"$s3/"}" b="$work/copy/${2#"$s3/"}"
  [ -d "$a" ] || download "$1/" "$a"
  [ -d "$b" ] || download "$2/" "$b"
  within "$work/tablediff" "$a" "$b" >&2
}

for f in testdata/crawl/*.parquet; do put "$f" "$s3/crawl/$(basename "$f")"; done
if [ -n "$corpus" ]; then put "$corpus" "$s3/corpus/$corpus_name.parquet"; fi
extra=""
if [ -n "${ISOLATED_CHECK_INPUT:-}" ]; then
  for f in "$ISOLATED_CHECK_INPUT"/*.parquet; do
    [ -e "$f" ] || { echo "isolated-check: no .parquet file in $ISOLATED_CHECK_INPUT" >&2; exit 1; }
    put "$f" "$s3/extra/$(basename "$f")"
  done
  extra="extra=$s3/extra/*.parquet"
fi

# The worker pool, in its own mount namespace (and pid namespace, so that
# no worker outlives it): the repository, ../shared, the work folder and
# /tmp are empty tmpfs mounts there. The boot binary is held open before
# its folder is hidden and copied into the pool's /tmp. The workers the
# pool starts fetch the worker binary from the job server (the launcher
# staged it), into that /tmp; the tmpfs goes with the namespace. Each job
# leaves its worker process behind until the pool ends (the Go harness
# sleeps after its job until it is killed, and the pool kills only the
# boot process above it), with its copy of the binary (about 200 MB) in
# that /tmp: a few hundred MB of memory a job, given back at the end.
if [ -n "${ISOLATED_CHECK_MEMORY:-}" ]; then
  if [ ! -w /sys/fs/cgroup/memory ]; then
    echo "isolated-check: ISOLATED_CHECK_MEMORY needs a writable cgroup v1 memory hierarchy at /sys/fs/cgroup/memory" >&2
    exit 1
  fi
  cgroup=/sys/fs/cgroup/memory/neardup-isolated-$$
  mkdir "$cgroup"
  # cgroup v1 takes 4G or 4096M, not 4GiB: the binary suffixes lose "iB".
  echo "${ISOLATED_CHECK_MEMORY%iB}" > "$cgroup/memory.limit_in_bytes"
  echo "isolated-check: the worker pool runs under a memory limit of $(cat "$cgroup/memory.limit_in_bytes") bytes ($cgroup)" >&2
fi
# pool_memory NAME: the pool's peak memory so far, and a failure if the
# kernel killed a worker for memory during run NAME.
pool_memory() {
  [ -n "$cgroup" ] || return 0
  local kills
  kills=$(awk '$1 == "oom_kill" { print $2 }' "$cgroup/memory.oom_control")
  echo "isolated-check: $1: the worker pool's peak memory $(cat "$cgroup/memory.max_usage_in_bytes") bytes of $(cat "$cgroup/memory.limit_in_bytes"), ${kills:-0} workers killed for memory" >&2
  if [ "${kills:-0}" != 0 ]; then
    echo "isolated-check: $1: a worker was killed for memory under the pool's limit" >&2
    return 1
  fi
}

port_50000_free
# A connection made before the reservation above may still hold 50000 as
# its local port (no listener, yet the pool's bind fails: "address already
# in use", seen again in CI after the universal check): wait, up to a
# minute, for no socket to use it.
for _ in $(seq 600); do
  ss -tan 2> /dev/null | awk '$4 ~ /:50000$/ { found = 1 } END { exit !found }' || break
  sleep 0.1
done
hide=("$repo")
if [ -d ../shared ]; then hide+=("$(cd ../shared && pwd -P)"); fi
hide+=("$work" /tmp)
# shellcheck disable=SC2016 # expanded by the pool's shell
NEARDUP_POOL_CGROUP=$cgroup "${tied_kill[@]}" unshare --mount --propagation private --pid --fork --kill-child --mount-proc sh -c '
  set -e
  # Into the memory group before anything starts: its children follow.
  if [ -n "$NEARDUP_POOL_CGROUP" ]; then echo 0 > "$NEARDUP_POOL_CGROUP/cgroup.procs"; fi
  exec 3< "$1"
  shift
  for d in "$@"; do mount -t tmpfs tmpfs "$d"; done
  mkdir /tmp/pool
  cat <&3 > /tmp/pool/boot
  exec 3<&-
  chmod 755 /tmp/pool/boot
  cd /tmp/pool
  exec ./boot --worker_pool
' pool "$work/boot" "${hide[@]}" > "$work/pool.log" 2>&1 &
pool=$!
if ! wait_for "$pool" 300 grep -qs "starting Process server" "$work/pool.log" || ! listens 50000; then
  cat "$work/pool.log" >&2
  echo "isolated-check: the worker pool did not start on port 50000" >&2
  exit 1
fi
# The workers' view: none of the launcher's files.
boot_pid=$(pgrep -P "$pool" | head -1)
for d in "$repo/go.mod" "$repo/testdata/crawl" "$work/runner" ${corpus:+"$corpus"}; do
  if nsenter --target "$boot_pid" --mount test -e "$d"; then
    echo "isolated-check: the worker pool sees $d: its mount namespace hides nothing" >&2
    exit 1
  fi
done

job_port=$(free_port)
web_port=$(free_port)
"${tied_kill[@]}" "$work/prism" --job_port "$job_port" --web_port "$web_port" > "$work/prism.log" 2>&1 &
server=$!
wait_for "$server" 100 listens "$job_port" || { cat "$work/prism.log" >&2; echo "isolated-check: the prism job server did not start" >&2; exit 1; }
echo "isolated-check: store, pool and job server up in $((SECONDS - t0)) s" >&2

common=(--sweep-date=2026-01-01 --beam_strict)
isolated=(--runner=universal "--endpoint=localhost:$job_port" --environment_type=EXTERNAL
  --environment_config=localhost:50000 "--worker_binary=$work/runner")

# The launchers' temporary files go to the work folder: the embedded
# runner (LOOPBACK underneath) leaves an empty $TMPDIR/beamloopbackworker-*
# file per run (Beam's runnerlib.Execute never removes it).
mkdir "$work/tmp"

# run NAME ARGS...: the runner, its log in $work/NAME.log, timed.
run() {
  local name=$1 t=$SECONDS
  shift
  if ! TMPDIR="$work/tmp" within "$work/runner" "$@" > "$work/$name.out" 2> "$work/$name.log"; then
    tail -40 "$work/$name.log" >&2
    pool_memory "$name" || true
    echo "isolated-check: $name failed" >&2
    return 1
  fi
  echo "isolated-check: $name: $((SECONDS - t)) s" >&2
}

# A local --output (or --input) with these workers: refused before any
# job is submitted, at once, naming the flag. Before the refusal a local
# --output exited 0 and published empty tables under _SUCCESS.
refused() {
  local name=$1 t=$SECONDS rc=0 page
  shift
  TMPDIR="$work/tmp" within "$work/runner" "$@" > "$work/$name.out" 2> "$work/$name.log" || rc=$?
  if [ "$rc" = 0 ] || [ "$rc" = 124 ] || ! grep -q "cannot reach it" "$work/$name.log"; then
    tail -20 "$work/$name.log" >&2
    echo "isolated-check: $name: a local path with isolated workers was not refused (exit $rc)" >&2
    return 1
  fi
  # No job reached the job server (its web page lists none yet: these
  # run first) nor the pool.
  page=$(within curl -fsS "http://127.0.0.1:$web_port/")
  if ! grep -q "No jobs have been run" <<< "$page" || grep -q "starting worker" "$work/pool.log"; then
    echo "isolated-check: $name: refused, but only after a job was submitted" >&2
    return 1
  fi
  echo "isolated-check: $name: refused in $((SECONDS - t)) s" >&2
}
refused refused-output --input "$s3/crawl/*.parquet" --output "$work/local" "${isolated[@]}" "${common[@]}"
[ ! -e "$work/local" ] || { echo "isolated-check: the refused run wrote $work/local" >&2; exit 1; }
refused refused-input --input "$repo/testdata/crawl/*.parquet" --output "$s3/refused" "${isolated[@]}" "${common[@]}"

# remote_progress NAME: the launcher of NAME, whose workers ran in the
# pool, printed a line for each phase from the job server's reports
# (GetJobMetrics), the last with every row read. Before the launcher
# followed the job there, it printed no phase line at all.
remote_progress() {
  local log="$work/$1.log" phase
  for phase in "phase 1 read/sketch" "phase 2 shingle merge" "phase 3 pair counting" "phase 4 clustering"; do
    grep -q "^neardup: $phase started at " "$log" || { grep "^neardup:" "$log" >&2; echo "isolated-check: $1: no progress line for $phase" >&2; return 1; }
  done
  grep -Eq '^neardup: output started at .*, ([0-9]+)/\1 rows read$' "$log" || { grep "^neardup:" "$log" >&2; echo "isolated-check: $1: no output line with every row read" >&2; return 1; }
  grep "^neardup: .* started at " "$log" | sed "s/^/isolated-check: $1: /" >&2
}

# The sample, then the corpus: through the isolated workers, then on the
# embedded runner, the same s3:// input into another s3:// output.
inputs=("sample=$s3/crawl/*.parquet")
if [ -n "$corpus" ]; then inputs+=("$corpus_name=$s3/corpus/*.parquet"); fi
if [ -n "$extra" ]; then inputs+=("$extra"); fi
for named in "${inputs[@]}"; do
  name=${named%%=*} input=${named#*=}
  run "isolated-$name" --input "$input" --output "$s3/isolated/$name" "${isolated[@]}" "${common[@]}"
  pool_memory "isolated-$name"
  remote_progress "isolated-$name"
  run "embedded-$name" --input "$input" --output "$s3/embedded/$name" "${common[@]}"
  same_tables "$s3/isolated/$name" "$s3/embedded/$name"
done

# An update through the isolated workers (the index's tables read back
# from s3://, the new half sketched): the embedded full run's tables.
# The globs start with a "*": Beam's s3 (and gcs) List takes as its
# listing prefix everything before the first "*" (util/fsx.GetPrefix),
# so "part-0000[01].parquet" lists the literal prefix and matches no
# files, while "part-*[01].parquet" lists "part-" and matches as wanted.
run embedded-index --input "$s3/crawl/part-*[01].parquet" --output "$s3/embedded/index" "${common[@]}"
run isolated-update update --from "$s3/embedded/index" --input "$s3/crawl/part-*[23].parquet" \
  --output "$s3/isolated/update" "${isolated[@]}" "${common[@]}"
same_tables "$s3/isolated/update" "$s3/embedded/sample"

# An export through the isolated workers (the input files named by the
# docs table read from s3://, one writer per file): the embedded export,
# byte for byte.
run isolated-export export --from "$s3/embedded/sample" --output "$s3/isolated/export" --add-columns all "${isolated[@]}" --beam_strict
run embedded-export export --from "$s3/embedded/sample" --output "$s3/embedded/export" --add-columns all --beam_strict
download "$s3/isolated/export/" "$work/export-isolated"
download "$s3/embedded/export/" "$work/export-embedded"
n=0
for f in "$work"/export-embedded/*.parquet; do
  [ -e "$f" ] || break
  cmp "$f" "$work/export-isolated/$(basename "$f")" || { echo "isolated-check: the export through isolated workers differs: $(basename "$f")" >&2; exit 1; }
  n=$((n + 1))
done
((n > 0)) || { echo "isolated-check: the embedded export wrote no .parquet file" >&2; exit 1; }
if [ "$(cd "$work/export-embedded" && ls ./*.parquet)" != "$(cd "$work/export-isolated" && ls ./*.parquet)" ]; then
  echo "isolated-check: the exports hold different files" >&2
  exit 1
fi

# scripts/flink-check.sh, the check a Flink user runs on their cluster,
# here through this job server: --runner=flink is the Go SDK's universal
# runner, the job-API path a Flink job server takes, and the pool stands
# in for the task managers' Docker harness. Its tables must equal the
# golden digests, and its launcher print the phase lines.
t=$SECONDS
if ! WORKER_BINARY="$work/flink-worker" TMPDIR="$work/tmp" within scripts/flink-check.sh "localhost:$job_port" "$s3/flink-check" \
  --environment_type=EXTERNAL --environment_config=localhost:50000 --beam_strict > "$work/flink-check.out" 2> "$work/flink-check.log"; then
  tail -40 "$work/flink-check.log" >&2
  cat "$work/flink-check.out" >&2
  echo "isolated-check: scripts/flink-check.sh failed" >&2
  exit 1
fi
grep "^flink-check: PASS" "$work/flink-check.out" | sed "s/^/isolated-check: /" >&2
remote_progress flink-check
echo "isolated-check: flink-check: $((SECONDS - t)) s" >&2
echo "isolated-check: checks took $((SECONDS - t0)) s" >&2

echo "isolated-check: the sample${corpus:+ and $corpus_name} through workers that share nothing with the launcher, input and output on s3://, give the embedded runner's tables (an update too), the export its bytes, scripts/flink-check.sh the golden digests, the launchers their phase lines, and a local path is refused before submission"
