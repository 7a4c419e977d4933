#!/usr/bin/env bash
# Golden check: every table a run writes must hold the same rows as the
# reference runner wrote (testdata/golden/digests.txt), for a matrix of
# inputs and flag sets. It exists so that restructuring the code can be
# shown to change nothing a user sees, row for row.
#
#   bash scripts/golden/check.sh                  # build ./cmd/runner, run the matrix, compare
#   bash scripts/golden/check.sh record RUNNER    # run the matrix with RUNNER, write the digests
#
# Environment:
#   RUNNER=PATH        check mode: use this runner binary instead of building ./cmd/runner
#   EXTRA_FLAGS="..."  appended to every full run and update (not recluster, which
#                      takes few flags); e.g. EXTRA_FLAGS=--seed=7 must make the check fail
#   SHARED_DATA=DIR    the shared corpora (default: ../shared/data beside the repository);
#                      when absent the cases on them are skipped, or fail the check if CI is set
#   GOLDEN_NOTE="..."  record mode: a comment saying what the digests were recorded from
#   KEEP=1             keep the outputs and logs even when the check passes
#
# Each output is reduced to one line per table by scripts/golden (CASE TABLE
# ROWS SHA256, rows in canonical order), with the repository and shared data
# folders stripped from string values, so the digests do not depend on where
# the repository is checked out. Runs use a fixed --sweep-date: its default
# is today, which lands in the docs, urls and manifest.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
digests=$root/testdata/golden/digests.txt
sweep=2020-01-01

usage() {
	sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

mode=check
runner=${RUNNER:-}
case ${1:-} in
record)
	[[ $# -eq 2 ]] || usage
	mode=record
	runner=$2
	;;
"") ;;
*) usage ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/neardup-golden.XXXXXX")
keep_tmp=${KEEP:-}
trap '[[ -n $keep_tmp ]] || rm -rf "$tmp"' EXIT
mkdir -p "$tmp/out" "$tmp/log"

t_start=$EPOCHREALTIME
elapsed() { # seconds since $1 (an $EPOCHREALTIME), one decimal
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'
}

# The digest tool comes from the tree being checked in both modes: it
# imports nothing of neardup, so it reads the reference's and the new
# runner's tables the same way.
(cd "$root" && go build -o "$tmp/golden" ./scripts/golden)

if [[ -n $runner ]]; then
	[[ -x $runner ]] || { echo "golden: runner $runner is not an executable" >&2; exit 2; }
	runner=$(cd "$(dirname "$runner")" && pwd)/$(basename "$runner")
else
	t=$EPOCHREALTIME
	if ! (cd "$root" && go build -o "$tmp/runner" ./cmd/runner) >"$tmp/log/build.log" 2>&1; then
		echo "golden: go build ./cmd/runner failed:" >&2
		cat "$tmp/log/build.log" >&2
		exit 1
	fi
	runner=$tmp/runner
	echo "golden: built ./cmd/runner in $(elapsed "$t")s"
fi
echo "golden: $mode with $runner"

# The shared corpora live beside the repository, not in it (a user's
# clone does not have them).
shared=${SHARED_DATA:-$root/../shared/data}
if [[ -d $shared ]]; then
	shared=$(cd "$shared" && pwd)
else
	if [[ $mode == record || -n ${CI:-} ]]; then
		echo "golden: the shared corpora are missing at $shared (set SHARED_DATA);" \
			"$([[ $mode == record ]] && echo "recording" || echo "CI") needs every case" >&2
		exit 1
	fi
	echo "golden: no shared corpora at $shared: skipping the cases on them (CI would fail)"
	shared=
fi
shared_corpora=(cc-main-2019-30-sample clough-stevenson deb-copyright deb-manpages multilingual-docs python-3.11-docs-html)
# Names in the matrix, not a glob: a corpus added to the shared folder
# should enter the goldens by a re-record, not break the check.
if [[ -n $shared ]]; then
	for f in "$shared"/*.parquet; do
		n=$(basename "$f" .parquet)
		[[ " ${shared_corpora[*]} " == *" $n "* ]] || echo "golden: note: $f is not in the matrix"
	done
fi

strips=(--strip "$root/")
[[ -z $shared ]] || strips+=(--strip "$shared/")

common=(--sweep-date="$sweep")
recluster_common=()
# A runner without --progress would refuse the flag; the reference has it.
help=$("$runner" --help 2>&1 || true)
if [[ $help == *--progress* ]]; then
	common+=(--progress=never)
	recluster_common+=(--progress=never)
fi
read -r -a extra <<<"${EXTRA_FLAGS:-}"
[[ ${#extra[@]} -eq 0 ]] || echo "golden: EXTRA_FLAGS: ${extra[*]}"

declare -A outdir
n_case=0
failed=()
actual=$tmp/actual.txt
: >"$actual"

# run_case NAME RUNNER_ARGS...: runs the runner into a fresh output folder
# and appends its digests, each line prefixed with NAME. The folder is
# numbered rather than named after the case: case names hold : and , .
run_case() {
	local name=$1
	shift
	local out=$tmp/out/$n_case log=$tmp/log/$n_case.log t=$EPOCHREALTIME
	n_case=$((n_case + 1))
	outdir[$name]=$out
	echo "$name $out $log" >>"$tmp/cases.txt"
	if ! "$runner" "$@" --output "$out" >"$log" 2>&1 ||
		! "$tmp/golden" "${strips[@]}" "$out" 2>>"$log" | sed "s|^|$name |" >>"$actual"; then
		printf '%-52s FAILED after %ss; %s\n' "$name" "$(elapsed "$t")" "runner $*" >&2
		tail -n 25 "$log" | sed 's/^/    /' >&2
		failed+=("$name")
		[[ $mode != record ]] || exit 1
		return 0
	fi
	printf '%-52s %6ss\n' "$name" "$(elapsed "$t")"
}

# full NAME INPUT FLAGS...: a full run.
full() {
	local name=$1 in=$2
	shift 2
	run_case "$name" --input "$in" "${common[@]}" "$@" "${extra[@]}"
}

sample="$root/testdata/crawl/*.parquet"
half1="$root/testdata/crawl/part-0000[01].parquet"
half2="$root/testdata/crawl/part-0000[23].parquet"

flagsets=(
	--mode=supershingle
	--sketch=min:50
	--mode=exact
	--verify=exact
	--verify=bloom
	--features=chunks:256
	--clusters=centered
	--keep=longest
	--components=distributed
	--policy=resemblance:0.5,containment:0.8
	--pairs=linked
	--equivalence=lexical
	--stopwords=en
)

# The sample crawl: default flags, every flag set, incremental runs.
full sample/default "$sample"
for f in "${flagsets[@]}" --template-shingles=auto; do
	full "sample/$f" "$sample" "$f"
done
run_case sample/recluster--threshold=0.7 recluster --from "${outdir[sample/default]}" \
	--threshold=0.7 "${recluster_common[@]}"
run_case sample/recluster--policy=containment:0.8 recluster --from "${outdir[sample/default]}" \
	--policy=containment:0.8 "${recluster_common[@]}"
full sample/update-index "$half1"
run_case sample/update update --from "${outdir[sample/update-index]}" --input "$half2" \
	"${common[@]}" "${extra[@]}"
# A later sweep date makes the index's URLs lost, so the lost table has rows.
run_case sample/update--sweep-date=2020-02-01 update --from "${outdir[sample/update-index]}" \
	--input "$half2" "${common[@]}" --sweep-date=2020-02-01 "${extra[@]}"

# The shared corpora: default flags on each; every flag set on the short
# manual pages; site templates on the Python docs, the one corpus with
# many pages per site (deb-manpages' URLs are man: names, with no host).
if [[ -n $shared ]]; then
	for c in "${shared_corpora[@]}"; do
		html=()
		[[ $c != python-3.11-docs-html ]] || html=(--html-column=html)
		full "$c/default" "$shared/$c.parquet" "${html[@]}"
	done
	for f in "${flagsets[@]}"; do
		full "deb-manpages/$f" "$shared/deb-manpages.parquet" "$f"
	done
	full python-3.11-docs-html/--template-shingles=auto "$shared/python-3.11-docs-html.parquet" \
		--html-column=html --template-shingles=auto
fi

echo "golden: $n_case cases; total $(elapsed "$t_start")s, builds included"

if [[ ${#failed[@]} -gt 0 ]]; then
	keep_tmp=1
	echo "golden: FAIL: ${#failed[@]} cases did not run: ${failed[*]} (logs in $tmp/log)" >&2
	exit 1
fi

if [[ $mode == record ]]; then
	mkdir -p "$(dirname "$digests")"
	{
		echo "# neardup golden digests, written by: bash scripts/golden/check.sh record RUNNER"
		[[ -z ${GOLDEN_NOTE:-} ]] || echo "# recorded with: $GOLDEN_NOTE"
		echo "# CASE TABLE ROWS SHA256: see scripts/golden/main.go"
		cat "$actual"
	} >"$digests"
	echo "golden: wrote $(grep -vc '^#' "$digests") digests to ${digests#"$root/"}"
	exit 0
fi

[[ -f $digests ]] || { echo "golden: no ${digests#"$root/"}; record it first" >&2; exit 1; }
# Without the shared corpora only the sample's cases ran: compare those.
expected=$tmp/expected.txt
grep -v '^#' "$digests" | awk -v skip="$([[ -n $shared ]] || echo "${shared_corpora[*]}")" '
	BEGIN { n = split(skip, s, " "); for (i = 1; i <= n; i++) skipped[s[i]] = 1 }
	{ c = $1; sub(/\/.*/, "", c); if (!(c in skipped)) print }' >"$expected"

if diff -u --label "expected (${digests#"$root/"})" --label "actual" "$expected" "$actual" >"$tmp/diff.txt"; then
	echo "golden: PASS: $(wc -l <"$actual") digests equal"
	exit 0
fi
keep_tmp=1
cat "$tmp/diff.txt"
echo "golden: FAIL: these case and table digests differ:" >&2
grep -E '^[-+][^-+]' "$tmp/diff.txt" | awk '{ print "  " substr($1, 2), $2 }' | sort -u >&2
echo "golden: outputs, logs and the case list are kept in $tmp (cases.txt: CASE OUTPUT LOG);" \
	"see a table's rows with: $tmp/golden --dump TABLE OUTPUT" >&2
exit 1
