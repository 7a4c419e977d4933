package layouts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/transforms"
)

// samplePage is a row of the sample crawl, every column of it.
type samplePage struct {
	Text          string  `parquet:"text" json:"text"`
	ID            string  `parquet:"id" json:"id"`
	Dump          string  `parquet:"dump" json:"dump"`
	URL           string  `parquet:"url" json:"url"`
	Date          string  `parquet:"date" json:"date"`
	FilePath      string  `parquet:"file_path" json:"file_path"`
	Language      string  `parquet:"language" json:"language"`
	LanguageScore float64 `parquet:"language_score" json:"language_score"`
	TokenCount    int64   `parquet:"token_count" json:"token_count"`
}

// TestJSONLinesSameTables writes the sample crawl's four Parquet files as
// JSON lines, each in another form (plain, gzip, zstd, C4's .json.gz),
// and checks that a run over them gives the Parquet run's tables row for
// row, but for the input file each row names.
func TestJSONLinesSameTables(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/crawl/*.parquet")
	if err != nil || len(files) != 4 {
		t.Fatalf("the sample crawl: %v, %v", files, err)
	}
	dir := t.TempDir()
	exts := []string{".jsonl", ".jsonl.gz", ".jsonl.zst", ".json.gz"}
	for i, f := range files {
		rows, err := parquet.ReadFile[samplePage](f)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
		}
		var out bytes.Buffer
		switch {
		case strings.HasSuffix(exts[i], ".gz"):
			w := gzip.NewWriter(&out)
			w.Write(b.Bytes())
			w.Close()
		case strings.HasSuffix(exts[i], ".zst"):
			w, _ := zstd.NewWriter(&out)
			w.Write(b.Bytes())
			w.Close()
		default:
			out.Write(b.Bytes())
		}
		name := filepath.Join(dir, strings.TrimSuffix(filepath.Base(f), ".parquet")+exts[i])
		if err := os.WriteFile(name, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exact := pipelinetest.DefaultConfig()
	// Verified pairs, and the kept document by a column: its scores
	// read from every row's JSON number.
	exact.Verify = settings.VerifyExact
	exact.Keep, _ = keep.Parse("max:language_score")
	exact.Columns.Score = exact.Keep.NeedsColumn()
	for _, cfg := range []transforms.Config{pipelinetest.DefaultConfig(), exact} {
		t.Run(string(cfg.Verify), func(t *testing.T) { sameAsParquet(t, dir, cfg) })
	}
}

// sameAsParquet runs the sample crawl and its JSON lines in dir with cfg
// and compares their tables.
func sameAsParquet(t *testing.T, dir string, cfg transforms.Config) {
	want := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", cfg)
	got := pipelinetest.Run(t, filepath.Join(dir, "part-*"), cfg)
	if got.Manifest.Counts["input_rows"] != want.Manifest.Counts["input_rows"] || len(got.Docs) != 3000 {
		t.Fatalf("%d docs rows, %d input rows; the Parquet run %d and %d", len(got.Docs), got.Manifest.Counts["input_rows"], len(want.Docs), want.Manifest.Counts["input_rows"])
	}
	// Every table but those that name the input file, as they are.
	var others []string
	for _, table := range tables.Tables {
		if table != tables.DocsTable && table != tables.MembersTable {
			others = append(others, table)
		}
	}
	if err := tables.Diff(context.Background(), want.Dir, got.Dir, others...); err != nil {
		t.Fatal(err)
	}
	// The docs and members tables, with each row's input file named by
	// its base name, the format's extension aside.
	stem := func(f string) string {
		f = filepath.Base(f)
		return f[:strings.IndexByte(f, '.')]
	}
	if err := sameRows(want.Docs, got.Docs, func(d *tables.Doc) { d.SourceFile = stem(d.SourceFile) }); err != "" {
		t.Errorf("docs: %s", err)
	}
	ctx := context.Background()
	wantMembers, err := tables.ReadTable[tables.Member](ctx, want.Dir, tables.MembersTable)
	if err != nil {
		t.Fatal(err)
	}
	gotMembers, err := tables.ReadTable[tables.Member](ctx, got.Dir, tables.MembersTable)
	if err != nil {
		t.Fatal(err)
	}
	if len(wantMembers) == 0 {
		t.Fatal("no members: the comparison proves nothing")
	}
	if err := sameRows(wantMembers, gotMembers, func(m *tables.Member) { m.SourceFile = stem(m.SourceFile) }); err != "" {
		t.Errorf("members: %s", err)
	}
	// An export would write Parquet in the JSON lines' place: refused,
	// saying so, before any job.
	dedup := filepath.Join(t.TempDir(), "dedup")
	if _, err := pipelines.Export(ctx, pipelines.ExportOptions{From: got.Dir, Output: dedup}); err == nil || !strings.Contains(err.Error(), "is JSON lines, and export writes Parquet only") {
		t.Errorf("export of JSON lines input: %v", err)
	}
	if _, err := os.Stat(dedup); !os.IsNotExist(err) {
		t.Errorf("the refused export left %s: %v", dedup, err)
	}
}

// sameRows says how rows a and b differ, as sets, once norm has been
// applied to a copy of each row ("" when they do not).
func sameRows[T any](a, b []T, norm func(*T)) string {
	key := func(rows []T) map[string]int {
		m := map[string]int{}
		for _, r := range rows {
			norm(&r)
			m[fmt.Sprintf("%+v", deref(r))]++
		}
		return m
	}
	ka, kb := key(a), key(b)
	for k, n := range ka {
		if kb[k] != n {
			return fmt.Sprintf("%d rows, %d in the Parquet run's: %s", kb[k], n, k)
		}
	}
	if len(a) != len(b) {
		return fmt.Sprintf("%d rows, %d in the Parquet run's", len(b), len(a))
	}
	return ""
}

// deref is row r with its pointer fields replaced by what they point to,
// so that rows print by value.
func deref(r any) []any {
	v := reflect.ValueOf(r)
	out := make([]any, v.NumField())
	for i := range out {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				out[i] = nil
				continue
			}
			f = f.Elem()
		}
		out[i] = f.Interface()
	}
	return out
}
