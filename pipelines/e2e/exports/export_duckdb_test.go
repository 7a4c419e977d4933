package exports

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/pipelines"
)

// TestExportDuckDB: on the sample crawl, every shared corpus and the HTML
// corpus, the export is, file by file, DuckDB's semi join of the input
// with the run's docs table: the same rows (EXCEPT ALL both ways, equal
// counts), in the input's order, with the input's columns and types. The
// reference is SQL over the input and the docs table alone, never the
// code under test. One corpus is also exported with --drop=identical and
// one with --drop-invalid; the redirect crawl with both rules that treat
// redirect rows apart.
func TestExportDuckDB(t *testing.T) {
	pipelinetest.DuckDB(t, "SELECT 1") // skip (or, in CI, fail) at once without DuckDB
	type corpus struct {
		name, file string // file: a shared corpus, or a glob of testdata; else the sample crawl
		html       bool
		redirects  bool // --redirect-column fetch_redirect
		rules      []export.Rule
	}
	dup := export.Rule{Drop: export.DropDuplicates}
	corpora := []corpus{
		{name: "sample", rules: []export.Rule{dup}},
		// Redirect rows: dropped by duplicates, kept by identical.
		{name: "redirects", file: "../../../testdata/redirects/*.parquet", redirects: true, rules: []export.Rule{dup, {Drop: export.DropIdentical}}},
		{name: "deb-copyright", file: "deb-copyright.parquet", rules: []export.Rule{dup, {Drop: export.DropIdentical}}},
		{name: "deb-manpages", file: "deb-manpages.parquet", rules: []export.Rule{dup}},
		{name: "cc-main-2019-30-sample", file: "cc-main-2019-30-sample.parquet", rules: []export.Rule{dup, {Drop: export.DropDuplicates, DropInvalid: true}}},
		{name: "multilingual-docs", file: "multilingual-docs.parquet", rules: []export.Rule{dup}},
		{name: "clough-stevenson", file: "clough-stevenson.parquet", rules: []export.Rule{dup}},
		{name: "python-3.11-docs-html", file: "python-3.11-docs-html.parquet", html: true, rules: []export.Rule{dup}},
	}
	var read, kept int64
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			glob := pipelinetest.SampleGlob
			switch {
			case strings.HasPrefix(c.file, "../../../testdata/"):
				glob = c.file
			case c.file != "":
				glob = shareddata.Path(t, c.file)
			}
			cfg := pipelinetest.DefaultConfig()
			if c.redirects {
				cfg.Columns.Redirect, cfg.Columns.URLRequired = "fetch_redirect", true
			}
			if c.html {
				cfg.Columns.Text, cfg.Columns.HTML = "", "html"
			}
			r := pipelinetest.Run(t, glob, cfg)
			n, k := exportsMatchDuckDB(t, r, c.rules)
			for i, rule := range c.rules {
				t.Logf("%s, %+v: %d of %d rows kept", c.name, rule, k[i], n[i])
				if rule == dup {
					read += n[i]
					kept += k[i]
				} else if k[i] == k[0] {
					t.Errorf("%s: %+v keeps what %+v keeps, %d rows: the corpus does not test it", c.name, rule, c.rules[0], k[i])
				}
			}
		})
	}
	if !t.Failed() && (kept == 0 || kept == read) {
		t.Errorf("the exports kept %d of %d rows: the corpora do not test the export", kept, read)
	}
}

// keptSQL is the reference condition on a docs row d for keeping its
// input row under rule, as docs/export.md words it.
func keptSQL(t *testing.T, rule export.Rule) string {
	t.Helper()
	const invalid = "coalesce(d.status IN ('empty', 'rejected'), false)"
	var valid string
	switch rule.Drop {
	case export.DropDuplicates:
		// A redirect is never one to keep (docs/export.md).
		valid = "d.is_representative AND d.status <> 'redirect'"
	case export.DropIdentical:
		valid = "d.identical_to IS NULL"
	case export.DropNone:
		valid = "true"
	default:
		t.Fatalf("no reference for %+v", rule)
	}
	if rule.DropInvalid {
		return fmt.Sprintf("NOT %s AND %s", invalid, valid)
	}
	return fmt.Sprintf("(%s OR %s)", invalid, valid)
}

// sqlString quotes s as a DuckDB string literal.
func sqlString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// exportCheck is one output file to check against its input.
type exportCheck struct {
	rule    export.Rule
	source  string // the input as the docs table names it
	in, out string // absolute paths
}

// exportsMatchDuckDB exports the run r under each rule and checks, with
// DuckDB (one process for them all: it takes a second to start), every
// output file against its input: the rows, their order and the schema.
// It returns, per rule, the input rows read and the rows DuckDB keeps.
func exportsMatchDuckDB(t *testing.T, r *pipelinetest.Result, rules []export.Rule) (read, kept []int64) {
	t.Helper()
	if len(r.Manifest.Inputs) == 0 {
		t.Fatal("the run's manifest lists no inputs")
	}
	var checks []exportCheck
	for i, rule := range rules {
		out := filepath.Join(t.TempDir(), fmt.Sprintf("dedup%d", i))
		if _, err := pipelines.Export(context.Background(), pipelines.ExportOptions{From: r.Dir, Output: out, Rule: rule}); err != nil {
			t.Fatalf("Export %+v: %v", rule, err)
		}
		for _, in := range r.Manifest.Inputs {
			path, err := filepath.Abs(in.Path) // DuckDB runs in another folder
			if err != nil {
				t.Fatal(err)
			}
			got := filepath.Join(out, filepath.Base(in.Path))
			if _, err := os.Stat(got); err != nil {
				t.Fatalf("%s under %+v: %v", in.Path, rule, err)
			}
			checks = append(checks, exportCheck{rule: rule, source: in.Path, in: path, out: got})
		}
	}
	// One row per check: the input's rows and those without a docs row;
	// the rows of ref, the semi join, and of got, the export, each with its
	// position; the rows of each missing from the other (EXCEPT ALL both
	// ways); and the positions where got's row is not ref's (misplaced),
	// the first of them. Then DESCRIBE of each input and its output.
	var rowsSQL []string
	for k, c := range checks {
		rowsSQL = append(rowsSQL, fmt.Sprintf(`SELECT * FROM (
WITH docs AS (
  SELECT source_row, status, identical_to, is_representative
  FROM read_parquet(%[2]s) WHERE source_file = %[3]s),
input AS MATERIALIZED (SELECT * FROM read_parquet(%[4]s, file_row_number = true)),
ref AS MATERIALIZED (
  SELECT row_number() OVER (ORDER BY i.file_row_number) - 1 AS pos, i.* EXCLUDE (file_row_number)
  FROM input i SEMI JOIN docs d ON d.source_row = i.file_row_number AND %[6]s),
got AS MATERIALIZED (SELECT file_row_number AS pos, * EXCLUDE (file_row_number) FROM read_parquet(%[5]s, file_row_number = true)),
misplaced AS MATERIALIZED (SELECT coalesce(g.pos, r.pos) AS pos FROM got g FULL JOIN ref r ON g.pos = r.pos WHERE g IS DISTINCT FROM r)
SELECT %[1]d AS k,
  (SELECT count(*) FROM input),
  (SELECT count(*) FROM input i ANTI JOIN docs d ON d.source_row = i.file_row_number),
  (SELECT count(*) FROM ref),
  (SELECT count(*) FROM got),
  (SELECT count(*) FROM (SELECT * EXCLUDE (pos) FROM got EXCEPT ALL SELECT * EXCLUDE (pos) FROM ref)),
  (SELECT count(*) FROM (SELECT * EXCLUDE (pos) FROM ref EXCEPT ALL SELECT * EXCLUDE (pos) FROM got)),
  (SELECT count(*) FROM misplaced),
  (SELECT coalesce(min(pos), -1) FROM misplaced))`,
			k, sqlString(filepath.Join(r.Dir, "docs", "*.parquet")), sqlString(c.source), sqlString(c.in), sqlString(c.out), keptSQL(t, c.rule)))
	}
	query := strings.Join(rowsSQL, "\nUNION ALL\n") + "\nORDER BY k;\n"
	for _, c := range checks {
		query += fmt.Sprintf("DESCRIBE SELECT * FROM read_parquet(%s);\nDESCRIBE SELECT * FROM read_parquet(%s);\n", sqlString(c.in), sqlString(c.out))
	}
	lines := pipelinetest.DuckDB(t, query)
	if len(lines) < len(checks) {
		t.Fatalf("duckdb printed %q", lines)
	}
	// The DESCRIBE results, each after its header line.
	var schemas [][]string
	for _, l := range lines[len(checks):] {
		if strings.HasPrefix(l, "column_name | column_type") {
			schemas = append(schemas, nil)
		} else if len(schemas) > 0 {
			schemas[len(schemas)-1] = append(schemas[len(schemas)-1], l)
		}
	}
	if len(schemas) != 2*len(checks) {
		t.Fatalf("duckdb printed %d DESCRIBE results for %d files: %q", len(schemas), len(checks), lines)
	}
	read, kept = make([]int64, len(rules)), make([]int64, len(rules))
	for k, c := range checks {
		var idx, n, noDoc, want, wrote, extra, missing, misplaced, first int64
		if _, err := fmt.Sscanf(lines[k], "%d | %d | %d | %d | %d | %d | %d | %d | %d", &idx, &n, &noDoc, &want, &wrote, &extra, &missing, &misplaced, &first); err != nil || idx != int64(k) {
			t.Fatalf("duckdb printed %q for check %d: %v", lines[k], k, err)
		}
		if noDoc != 0 || n == 0 {
			t.Fatalf("%s: %d input rows, %d of them without a docs row", c.source, n, noDoc)
		}
		if wrote != want || extra != 0 || missing != 0 {
			t.Errorf("%s under %+v: %d rows written, DuckDB's semi join keeps %d; %d written rows not in it, %d of its rows not written", c.source, c.rule, wrote, want, extra, missing)
		}
		if misplaced != 0 {
			t.Errorf("%s under %+v: %d output rows differ from the reference row at their position, the first at row %d", c.source, c.rule, misplaced, first)
		}
		if in, out := schemas[2*k], schemas[2*k+1]; len(in) == 0 || !slices.Equal(in, out) {
			t.Errorf("%s under %+v: the export's columns\n%s\nthe input's\n%s", c.source, c.rule, strings.Join(out, "\n"), strings.Join(in, "\n"))
		}
		i := slices.Index(rules, c.rule)
		read[i] += n
		kept[i] += want
	}
	return read, kept
}
