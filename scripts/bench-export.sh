#!/usr/bin/env bash
# Measures `runner export` against DuckDB doing the same semi join and copy
# on a crawl grown from the real corpora in ../shared/data (about 1 GB of
# text by default), interleaved, and prints a markdown table: wall time,
# user+sys CPU, peak RSS, peak RSS per byte of input text, output size.
# Then checks that the two outputs hold the same rows, file by file.
#
# Usage (from the module root):
#
#	scripts/bench-export.sh
#
# Environment: BENCH (work folder, default /tmp/export-bench), MB (text to
# grow, default 1000), FILES (10), ROWGROUP (rows per input row group,
# 2000), REPS (3), DUCKDB_DIR (where npm installed @duckdb/node-api, default
# ~/.cache/neardup-duckdb). The input and the run's output are built once
# and reused; delete $BENCH/in or $BENCH/out to rebuild them.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH=${BENCH:-/tmp/export-bench}
MB=${MB:-1000}
FILES=${FILES:-10}
ROWGROUP=${ROWGROUP:-2000}
REPS=${REPS:-3}
DUCKDB_DIR=${DUCKDB_DIR:-$HOME/.cache/neardup-duckdb}
mkdir -p "$BENCH/logs"

duck() { (cd "$DUCKDB_DIR" && node query.mjs "$@"); }

if [ ! -f "$BENCH/in/.done" ]; then
	rm -rf "$BENCH/in" "$BENCH/out"
	go run ./scripts/growcorpus -out "$BENCH/in" -mb "$MB" -files "$FILES" -rowgroup "$ROWGROUP"
	touch "$BENCH/in/.done"
fi
go build -o "$BENCH/runner" ./cmd/runner
if [ ! -f "$BENCH/out/_SUCCESS" ]; then
	echo "bench-export: running neardup on $BENCH/in (minutes)" >&2
	"$BENCH/runner" --input "$BENCH/in/*.parquet" --output "$BENCH/out" >"$BENCH/logs/run.out" 2>"$BENCH/logs/run.err"
	tail -5 "$BENCH/logs/run.out"
fi

# The input's text bytes (for RSS per byte), once.
if [ ! -s "$BENCH/text-bytes" ]; then
	echo "SELECT sum(strlen(text)) AS text_bytes FROM read_parquet('$BENCH/in/*.parquet');" >"$BENCH/text.sql"
	duck "$BENCH/text.sql" x | awk 'NR==3' >"$BENCH/text-bytes"
fi
TEXT=$(cat "$BENCH/text-bytes")

# DuckDB's job: the kept (source_file, source_row) once, then per input
# file the rows whose 0-based row number is kept, in the input's order,
# zstd, row groups of the input's.
SQL=$BENCH/duckdb-export.sql
{
	echo "CREATE TEMP TABLE keep AS SELECT source_file, source_row FROM read_parquet('/tmp/neardup-out/docs/*.parquet') WHERE is_representative OR status IN ('empty', 'rejected');"
	for f in "$BENCH"/in/*.parquet; do
		echo "COPY (SELECT i.* EXCLUDE (file_row_number) FROM read_parquet('$f', file_row_number = true) i SEMI JOIN (SELECT source_row FROM keep WHERE source_file = '$f') d ON i.file_row_number = d.source_row ORDER BY i.file_row_number) TO '$BENCH/duck/$(basename "$f")' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE $ROWGROUP);"
	done
} >"$SQL"

# wall s, user+sys s, peak RSS KB from a /usr/bin/time -v log.
stats() {
	awk -F': ' '
		/Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i] }
		/User time/ { c += $2 } /System time/ { c += $2 }
		/Maximum resident set size/ { r = $2 }
		END { printf "%.2f %.2f %d", w, c, r }' "$1"
}
row() { # tool, log, output folder
	read -r wall cpu rss < <(stats "$2")
	out=$(cat "$3"/*.parquet | wc -c)
	printf '| %s | %.2f | %.2f | %.0f | %.2f | %.1f |\n' "$1" "$wall" "$cpu" "$((rss / 1024))" "$(echo "$rss * 1024 / $TEXT" | bc -l)" "$(echo "$out / 1000000" | bc -l)"
}

rows=()
for i in $(seq 1 "$REPS"); do
	/usr/bin/time -v "$BENCH/runner" export --from "$BENCH/out" --output "$BENCH/dedup" --overwrite \
		>"$BENCH/logs/export-$i.out" 2>"$BENCH/logs/export-$i.err"
	rows+=("$(row "runner export (run $i)" "$BENCH/logs/export-$i.err" "$BENCH/dedup")")
	rm -rf "$BENCH/duck" && mkdir -p "$BENCH/duck"
	/usr/bin/time -v node "$DUCKDB_DIR/query.mjs" "$SQL" "$BENCH/out" \
		>"$BENCH/logs/duckdb-$i.out" 2>"$BENCH/logs/duckdb-$i.err"
	rows+=("$(row "DuckDB $(duck /dev/stdin x <<<'SELECT version() AS v;' | awk 'NR==3') (run $i)" "$BENCH/logs/duckdb-$i.err" "$BENCH/duck")")
done

echo
echo "input: $(ls "$BENCH"/in/*.parquet | wc -l) files, $(cat "$BENCH"/in/*.parquet | wc -c | awk '{printf "%.1f", $1/1e6}') MB of Parquet, $(awk '{printf "%.1f", $1/1e6}' "$BENCH/text-bytes") MB of text; $(nproc) cores"
echo
echo "| tool | wall s | CPU s | peak RSS MB | B/B | output MB |"
echo "|---|---:|---:|---:|---:|---:|"
printf '%s\n' "${rows[@]}"

# The same rows in both, file by file: counts and EXCEPT ALL both ways.
cat >"$BENCH/verify.sql" <<EOF
SELECT (SELECT count(*) FROM read_parquet('$BENCH/dedup/*.parquet')) AS export_rows,
       (SELECT count(*) FROM read_parquet('$BENCH/duck/*.parquet')) AS duckdb_rows,
       (SELECT count(*) FROM (SELECT parse_filename(filename) AS f, * EXCLUDE (filename) FROM read_parquet('$BENCH/dedup/*.parquet', filename = true)
                              EXCEPT ALL SELECT parse_filename(filename) AS f, * EXCLUDE (filename) FROM read_parquet('$BENCH/duck/*.parquet', filename = true))) AS export_not_duckdb,
       (SELECT count(*) FROM (SELECT parse_filename(filename) AS f, * EXCLUDE (filename) FROM read_parquet('$BENCH/duck/*.parquet', filename = true)
                              EXCEPT ALL SELECT parse_filename(filename) AS f, * EXCLUDE (filename) FROM read_parquet('$BENCH/dedup/*.parquet', filename = true))) AS duckdb_not_export;
EOF
echo
duck "$BENCH/verify.sql" x | sed -n 2,3p
