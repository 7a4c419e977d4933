package faults

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
)

// corruptRowGroup overwrites bytes inside the first data page of the given
// row group's first column, leaving the footer intact.
func corruptRowGroup(t *testing.T, path string, rg int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata().RowGroups[rg].Columns[0].MetaData
	start, size := md.DataPageOffset, md.TotalCompressedSize
	for i := start + size/4; i < start+size-8; i++ {
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	pipelinetest.WritePages(t, dir, "a-good.parquet", 40, 10, func(i int) string { return pipelinetest.Words(i, 60) })
	notParquet := filepath.Join(dir, "b-not.parquet")
	os.WriteFile(notParquet, []byte("<html>this is not a parquet file</html>"), 0o644)
	truncated := pipelinetest.WritePages(t, dir, "c-truncated.parquet", 20, 10, func(i int) string { return pipelinetest.Words(i+100, 60) })
	b, _ := os.ReadFile(truncated)
	os.WriteFile(truncated, b[:len(b)/2], 0o644)
	corrupt := pipelinetest.WritePages(t, dir, "d-corrupt.parquet", 30, 10, func(i int) string { return pipelinetest.Words(i+200, 60) })
	corruptRowGroup(t, corrupt, 1)
	input := filepath.Join(dir, "*.parquet")

	// Failing is the default, and the error names the file.
	_, err := pipelines.Run(context.Background(), pipelines.Options{Input: input, Output: beamtest.FailedRunOutput(t), Config: pipelinetest.DefaultConfig()})
	if err == nil || !strings.Contains(err.Error(), "b-not.parquet") && !strings.Contains(err.Error(), "c-truncated.parquet") && !strings.Contains(err.Error(), "d-corrupt.parquet") {
		t.Errorf("a run over bad files failed with %v; want an error naming a bad file", err)
	}

	cfg := pipelinetest.DefaultConfig()
	cfg.SkipBadFiles = true
	r := pipelinetest.Run(t, input, cfg)
	// The good file's 40 rows and the corrupt file's 30 (20 readable, 10
	// rejected) are accounted for; the unreadable files are listed.
	pipelinetest.CheckInvariants(t, r, 70)
	var rejected int
	for _, d := range r.Docs {
		if d.Status == tables.StatusRejected {
			rejected++
			if d.SourceFile != corrupt || d.SourceRow < 10 || d.SourceRow >= 20 || d.Reason == nil || !strings.Contains(*d.Reason, "unreadable") {
				t.Errorf("rejected doc %+v: want rows 10-19 of %s with a reason", d, corrupt)
			}
		}
	}
	if rejected != 10 {
		t.Errorf("%d rows rejected, want the 10 rows of the corrupt row group", rejected)
	}
	listed := map[string]int{}
	for _, bf := range r.Manifest.BadFiles {
		listed[filepath.Base(bf.Path)] = bf.RowGroup
		if bf.Error == "" {
			t.Errorf("bad file %s listed without a reason", bf.Path)
		}
	}
	want := map[string]int{"b-not.parquet": -1, "c-truncated.parquet": -1, "d-corrupt.parquet": 1}
	if fmt.Sprint(listed) != fmt.Sprint(want) {
		t.Errorf("manifest lists bad files %v, want %v", listed, want)
	}
}

func TestMaxDocBytes(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("lorem ipsum dolor sit amet ", 2_000_000) // 54 MB
	pipelinetest.WritePages(t, dir, "big.parquet", 3, 10, func(i int) string {
		if i == 1 {
			return big
		}
		return pipelinetest.Words(i, 50)
	})
	cfg := pipelinetest.DefaultConfig()
	cfg.MaxDocBytes = 4 << 20 // the command's default
	r := pipelinetest.Run(t, filepath.Join(dir, "big.parquet"), cfg)
	pipelinetest.CheckInvariants(t, r, 3)
	d := r.ByID["big.parquet-1"]
	if d == nil || d.Status != tables.StatusRejected || d.Reason == nil || !strings.Contains(*d.Reason, "max-doc-bytes") {
		t.Errorf("the 54 MB document: %+v, want rejected for --max-doc-bytes", d)
	}
	if got := r.Manifest.Counts["docs_rejected"]; got != 1 {
		t.Errorf("%d docs rejected, want 1", got)
	}
}

type nullablePage struct {
	Text *string `parquet:"text,optional"`
	ID   string  `parquet:"id"`
	URL  string  `parquet:"url"`
	HTML string  `parquet:"html"`
}

// TestAwkwardRows: every awkward row gets a docs row with the status users
// would expect, and duplicate ids or URLs are separate documents.
func TestAwkwardRows(t *testing.T) {
	str := func(s string) *string { return &s }
	long := pipelinetest.Words(1, 40)
	deep := strings.Repeat("<div>", 20000) + long + strings.Repeat("</div>", 3)
	rows := []nullablePage{
		{Text: nil, ID: "null", URL: "u"},
		{Text: str(""), ID: "empty", URL: "u"},
		{Text: str(" \t\n "), ID: "space", URL: "u"},
		{Text: str("one two three"), ID: "short", URL: "u"},
		{Text: str("caf\xe9 \xff\xfe " + long), ID: "badutf8", URL: "u"},
		{Text: str("nul\x00bytes\x00 " + long), ID: "nul", URL: "u"},
		{Text: str(long), ID: "dup", URL: "same"},
		{Text: str(pipelinetest.Words(2, 40)), ID: "dup", URL: "same"},
	}
	htmls := []string{"<html><head><title>t</title></head></html>", deep, "<p>unclosed <b>" + long, "", "<!-- only a comment -->", "<script>var x</script>", long, long}
	for i := range rows {
		rows[i].HTML = htmls[i]
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "awkward.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[nullablePage](f)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.Close()

	r := pipelinetest.Run(t, path, pipelinetest.DefaultConfig())
	pipelinetest.CheckInvariants(t, r, len(rows))
	byRow := func(r *pipelinetest.Result) {
		slices.SortFunc(r.Docs, func(x, y tables.Doc) int { return cmp.Compare(x.SourceRow, y.SourceRow) })
	}
	byRow(r)
	want := []string{tables.StatusEmpty, tables.StatusEmpty, tables.StatusEmpty, tables.StatusTooShort, tables.StatusOK, tables.StatusOK, tables.StatusOK, tables.StatusOK}
	for i, d := range r.Docs {
		if d.SourceRow != int64(i) {
			t.Fatalf("docs not in row order at %d", i)
		}
		if d.Status != want[i] {
			t.Errorf("row %d (%s): status %q, want %q", i, rows[i].ID, d.Status, want[i])
		}
	}
	if r.Docs[0].Reason == nil || !strings.Contains(*r.Docs[0].Reason, "null") {
		t.Errorf("null text: reason %v", r.Docs[0].Reason)
	}
	if r.Docs[6].DocID == r.Docs[7].DocID {
		t.Error("rows with the same id and URL share a doc_id")
	}

	cfg := pipelinetest.DefaultConfig()
	cfg.Columns.Text, cfg.Columns.HTML = "", "html"
	h := pipelinetest.Run(t, path, cfg)
	pipelinetest.CheckInvariants(t, h, len(rows))
	byRow(h)
	wantHTML := []string{tables.StatusTooShort, tables.StatusOK, tables.StatusOK, tables.StatusEmpty, tables.StatusEmpty, tables.StatusEmpty, tables.StatusOK, tables.StatusOK}
	for i, d := range h.Docs {
		if d.Status != wantHTML[i] {
			t.Errorf("html row %d: status %q, want %q", i, d.Status, wantHTML[i])
		}
	}
	// The deeply nested page and the page without closing tags keep their text.
	if h.Docs[1].TokenCount != 40 || h.Docs[2].TokenCount != 41 {
		t.Errorf("tokens of nested / unclosed HTML: %d, %d; want 40, 41", h.Docs[1].TokenCount, h.Docs[2].TokenCount)
	}
}

func TestInputErrorsBeforeThePipeline(t *testing.T) {
	out := t.TempDir()
	for _, in := range []string{filepath.Join(t.TempDir(), "*.parquet"), "/nonexistent/crawl.parquet"} {
		_, err := pipelines.Run(context.Background(), pipelines.Options{Input: in, Output: out, Config: pipelinetest.DefaultConfig()})
		if err == nil || !strings.Contains(err.Error(), "matches no files") {
			t.Errorf("input %s: %v, want an error saying it matches no files", in, err)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("a run that never started wrote %d entries into the output folder", len(entries))
	}
}

// TestMillionTinyRows: one row group of a million one-word rows, every one
// accounted for, none clustered (identical one-word pages are copies).
func TestMillionTinyRows(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping the million-row test in -short mode")
	}
	const n = 1_000_000
	dir := t.TempDir()
	pipelinetest.WritePages(t, dir, "tiny.parquet", n, n, func(i int) string { return fmt.Sprintf("w%d", i%1000) })
	r := pipelinetest.Run(t, filepath.Join(dir, "tiny.parquet"), pipelinetest.DefaultConfig())
	pipelinetest.CheckInvariants(t, r, n)
	c := r.Manifest.Counts
	if c["docs_too_short"] != n || c["identical_groups"] != 1000 || c["identical_skipped"] != n-1000 {
		t.Errorf("counts %v: want %d too short, 1000 identical groups, %d copies", c, n, n-1000)
	}
}
