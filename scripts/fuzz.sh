#!/usr/bin/env bash
# Runs each fuzz target for a short time, one after another:
#
#   FUZZTIME=5s bash scripts/fuzz.sh          # the default, for CI
#   FUZZTIME=10m bash scripts/fuzz.sh         # a longer local run
#   bash scripts/fuzz.sh FuzzSketch           # only the named targets
#
# FUZZTIME is anything go test -fuzztime takes (a duration, or "1000x" for
# a number of inputs). FUZZMINIMIZETIME (default 1s) bounds each
# minimization: Go minimizes every new interesting input before fuzzing
# on, for up to 60s by default, which on a short run eats most of the time
# (a failing input is still written, if less minimized; rerun with a
# larger value to shrink it).
#
# The seed corpora (testdata/fuzz/<target>/) also run as ordinary tests
# under plain go test; this script goes further and mutates them. Inputs
# that grow coverage stay in Go's cache, not in the repository.
#
# It runs every target even after one fails, then exits non-zero if any
# did, printing where Go wrote each failing input: a new file in the
# package's testdata/fuzz/<target>/, which plain go test then runs (and
# fails) too. Commit it only together with the fix; otherwise delete it
# once reported.
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZTIME=${FUZZTIME:-5s}
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-1s}

# Each target: its name, then its package, found from the Fuzz functions
# themselves so that a moved or renamed target cannot drop out unseen.
targets=()
while IFS=: read -r file _ decl; do
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*)\(.*/\1/' <<<"$decl")
  targets+=("$name ./$(dirname "$file")")
done < <(git grep -n -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' -- '*_test.go' | sort)
if [ ${#targets[@]} -eq 0 ]; then
  echo "no Fuzz functions found" >&2
  exit 2
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

failed=()
summary=()
for t in "${targets[@]}"; do
  read -r name pkg <<<"$t"
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
    continue
  fi
  echo "== $name ($pkg) for $FUZZTIME"
  fuzz() { go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" "$pkg" 2>&1 | tee "$log"; }
  ok=true
  fuzz || ok=false
  # Go's fuzzer can stop with "context deadline exceeded" when -fuzztime
  # ends while a worker is still busy, with no failing input written: a
  # harness hiccup, not a finding. Such a run, and only such a run, is
  # tried once more; a real failure always writes its input.
  if ! $ok && grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
    echo "!! $name stopped at the deadline without a failing input; running it once more"
    ok=true
    fuzz || ok=false
  fi
  # go test exits 0 with "no fuzz tests to fuzz" when the pattern matches
  # nothing: that is a broken harness, not a pass.
  if $ok && ! grep -q '^fuzz: elapsed' "$log"; then
    echo "!! $name ran no fuzzing (no 'fuzz: elapsed' line)"
    ok=false
  fi
  if $ok; then
    # The last progress line, "fuzz: elapsed: 1m5s, execs: 12345 (0/sec),
    # new interesting: 3 (total: 40)", has the totals; its rate is the last
    # tick's, so report the average instead.
    last=$(grep '^fuzz: elapsed' "$log" | tail -n 1 || true)
    summary+=("$name: $(echo "$last" | awk -F', ' 'NF >= 3 {
      split($1, a, ": "); d = a[3]; split($2, b, " "); split($3, c, " ")
      secs = 0
      while (match(d, /^[0-9]+[hms]/)) {
        u = substr(d, RLENGTH, 1)
        secs += substr(d, 1, RLENGTH - 1) * (u == "h" ? 3600 : u == "m" ? 60 : 1)
        d = substr(d, RLENGTH + 1)
      }
      printf "%d execs in %ds, about %d/sec, %d new interesting inputs", b[2], secs, (secs > 0 ? b[2] / secs : b[2]), c[3]
    }')")
  else
    failed+=("$name")
    summary+=("$name: FAILED")
    # go test prints "Failing input written to testdata/fuzz/<name>/<hash>",
    # relative to the package directory.
    written=$(sed -n 's/.*Failing input written to \(.*\)$/\1/p' "$log" | tail -n 1)
    if [ -n "$written" ]; then
      echo "!! $name failed; failing input written to ${pkg#./}/$written"
      echo "!! reproduce with: go test -run '^${name}/$(basename "$written")\$' $pkg"
    else
      echo "!! $name failed before fuzzing (a seed corpus entry or a build error; see above)"
    fi
  fi
done

if [ ${#summary[@]} -eq 0 ]; then
  echo "no fuzz target named: $*" >&2
  exit 2
fi
echo "== summary (FUZZTIME=$FUZZTIME)"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing failed: ${failed[*]}" >&2
  exit 1
fi
