package layouts

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/transforms"
)

// jsonlExts are the forms the sample's four files take, in order.
var jsonlExts = []string{".jsonl", ".jsonl.gz", ".jsonl.zst", ".json.gz"}

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
		case strings.HasSuffix(jsonlExts[i], ".gz"):
			w := gzip.NewWriter(&out)
			w.Write(b.Bytes())
			w.Close()
		case strings.HasSuffix(jsonlExts[i], ".zst"):
			w, _ := zstd.NewWriter(&out)
			w.Write(b.Bytes())
			w.Close()
		default:
			out.Write(b.Bytes())
		}
		name := filepath.Join(dir, strings.TrimSuffix(filepath.Base(f), ".parquet")+jsonlExts[i])
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
	// The export, in the input's format: the same kept rows, with the
	// same added columns, in files named and compressed as their inputs.
	if cfg.Verify != settings.VerifyNone {
		return
	}
	add := export.Added{Columns: export.Columns, Prefix: export.DefaultPrefix}
	wantExport, gotExport := filepath.Join(t.TempDir(), "dedup"), filepath.Join(t.TempDir(), "dedup")
	for _, e := range []struct{ from, to string }{{want.Dir, wantExport}, {got.Dir, gotExport}} {
		if _, err := pipelines.Export(ctx, pipelines.ExportOptions{From: e.from, Output: e.to, Add: add}); err != nil {
			t.Fatal(err)
		}
	}
	var wantRows, gotRows []exportedPage
	parquets, _ := filepath.Glob(filepath.Join(wantExport, "*.parquet"))
	for _, f := range parquets {
		rows, err := parquet.ReadFile[exportedPage](f)
		if err != nil {
			t.Fatal(err)
		}
		wantRows = append(wantRows, rows...)
	}
	magic := map[string][]byte{".gz": {0x1f, 0x8b}, ".zst": {0x28, 0xb5, 0x2f, 0xfd}, ".jsonl": []byte("{")}
	for _, ext := range jsonlExts {
		name := filepath.Join(gotExport, "part-0000"+fmt.Sprint(slices.Index(jsonlExts, ext))+ext)
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatalf("the export of a %s file: %v", ext, err)
		}
		if m := magic[filepath.Ext(ext)]; !bytes.HasPrefix(raw, m) {
			t.Errorf("%s begins % x, not % x", name, raw[:min(4, len(raw))], m)
		}
		var r io.Reader = bytes.NewReader(raw)
		switch filepath.Ext(ext) {
		case ".gz":
			if r, err = gzip.NewReader(r); err != nil {
				t.Fatal(err)
			}
		case ".zst":
			zr, err := zstd.NewReader(r)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		}
		dec := json.NewDecoder(r)
		dec.UseNumber()
		for {
			var p exportedPage
			if err := dec.Decode(&p); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			gotRows = append(gotRows, p)
		}
	}
	if len(wantRows) == 0 || len(wantRows) == 3000 {
		t.Fatalf("the Parquet export holds %d rows: the comparison proves nothing", len(wantRows))
	}
	if err := sameRows(wantRows, gotRows, func(*exportedPage) {}); err != "" {
		t.Errorf("export: %s", err)
	}
}

// exportedPage is a row of an export of the sample crawl with every
// added column.
type exportedPage struct {
	samplePage
	DocID       int64    `parquet:"neardup_doc_id" json:"neardup_doc_id"`
	ClusterID   *int64   `parquet:"neardup_cluster_id,optional" json:"neardup_cluster_id"`
	ClusterSize int64    `parquet:"neardup_cluster_size" json:"neardup_cluster_size"`
	KeptDocID   *int64   `parquet:"neardup_kept_doc_id,optional" json:"neardup_kept_doc_id"`
	Resemblance *float64 `parquet:"neardup_resemblance_to_kept,optional" json:"neardup_resemblance_to_kept"`
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
// and its embedded structs by their fields, so that rows print by value.
func deref(r any) []any { return derefValue(reflect.ValueOf(r)) }

func derefValue(v reflect.Value) []any {
	var out []any
	for i := range v.NumField() {
		f := v.Field(i)
		switch {
		case v.Type().Field(i).Anonymous && f.Kind() == reflect.Struct:
			out = append(out, derefValue(f)...)
		case f.Kind() == reflect.Pointer && f.IsNil():
			out = append(out, nil)
		case f.Kind() == reflect.Pointer:
			out = append(out, f.Elem().Interface())
		default:
			out = append(out, f.Interface())
		}
	}
	return out
}
