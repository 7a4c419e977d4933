# shellcheck shell=bash
# What the cluster scripts (scripts/run-dataflow.sh, scripts/run-flink.sh)
# share, sourced by them right after their `set -euo pipefail`: their help
# and errors, the DRY_RUN switch, the refusal of --async, the "recluster"
# subcommand, the worker binary and the build and launch of ./cmd/runner.

# launch_script is the sourcing script, absolute: usage reads its header
# after the script has changed folder.
launch_script=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)/$(basename "${BASH_SOURCE[1]}")

# usage prints the script's header (its comment lines up to its
# `set -euo`); with a message, as an error (status 2).
usage() {
  if (($#)); then
    echo "$(basename "$launch_script"): $*" >&2
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p;}' "$launch_script" >&2
    exit 2
  fi
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p;}' "$launch_script"
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

# subcommand sets sub to (recluster), (update) or (export) when the
# script's arguments start with it, else to (); the script then shifts
# ${#sub[@]} arguments.
subcommand() {
  sub=()
  case ${1:-} in
  recluster | update | export) sub=("$1") ;;
  esac
}

# worker_binary sets worker, the absolute path to build the worker binary
# at: WORKER_BINARY (kept; relative to the current folder), else in a
# temporary folder named after $1 and removed on exit. The script calls it
# before it moves to the module root.
worker_binary() {
  if [[ -n ${WORKER_BINARY:-} ]]; then
    worker=$WORKER_BINARY
    [[ $worker == /* ]] || worker=$PWD/$worker
  else
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/neardup-$1.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    worker=$tmp/neardup-worker
  fi
}

# partitions adds --partitions (PARTITIONS; 0: neardup sizes them from the
# input) to flags for a run or an update; recluster and export take none.
partitions() {
  if ((${#sub[@]} == 0)) || [[ ${sub[0]} == update ]]; then
    flags+=(--partitions="${PARTITIONS:-0}")
  fi
}

# launch builds the worker binary for linux (WORKER_GOARCH, amd64 by
# default) and runs the runner: sub, the script's flags, then its arguments
# "$@" (so a repeated flag there overrides the script's value).
launch() {
  # Not stripped (-s): Beam finds the pipeline's functions in the symbol table.
  run env CGO_ENABLED=0 GOOS=linux GOARCH="${WORKER_GOARCH:-amd64}" go build -o "$worker" ./cmd/runner
  run go run ./cmd/runner ${sub[@]+"${sub[@]}"} "${flags[@]}" "$@"
}
