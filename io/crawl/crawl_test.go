package crawl

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

type fineweb struct {
	Text  *string   `parquet:"text,optional"`
	ID    int64     `parquet:"id"`
	URL   string    `parquet:"url"`
	Date  time.Time `parquet:"date,timestamp(millisecond)"`
	Extra string    `parquet:"language"`
}

func write[T any](t *testing.T, name string, rows []T, perGroup int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f, parquet.MaxRowsPerRowGroup(perGroup))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

func str(s string) *string { return &s }

var defaults = Columns{Text: "text", URL: "url", ID: "id", Date: "date"}

func TestSplitsAndRows(t *testing.T) {
	date := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	rows := []fineweb{
		{Text: str("one"), ID: 10, URL: "u0", Date: date},
		{Text: nil, ID: 11, URL: "u1", Date: date},
		{Text: str("three"), ID: 12, URL: "u2", Date: date},
		{Text: str(""), ID: 13, URL: "u3", Date: date},
		{Text: str("five"), ID: 14, URL: "u4", Date: date},
	}
	path := write(t, "a.parquet", rows, 2)
	splits, err := Splits(context.Background(), 7, path, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if len(splits) != 3 {
		t.Fatalf("%d splits, want 3 row groups", len(splits))
	}
	var got []Row
	for i, sp := range splits {
		if sp.FileIndex != 7 || sp.RowGroup != i || sp.FirstRow != int64(2*i) {
			t.Errorf("split %d = %+v", i, sp)
		}
		err := ReadSplit(context.Background(), sp, defaults, func(r Row) error { got = append(got, r); return nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, want %d", len(got), len(rows))
	}
	for i, r := range got {
		want := rows[i]
		if wantID := strconv.FormatInt(want.ID, 10); r.ID != wantID {
			t.Errorf("row %d: integer id read as %q, want %q", i, r.ID, wantID)
		}
		if r.URL != want.URL || r.Index != int64(i) {
			t.Errorf("row %d: url %q index %d", i, r.URL, r.Index)
		}
		if r.Date != "2024-05-06T07:08:09Z" {
			t.Errorf("row %d: date %q, want RFC 3339", i, r.Date)
		}
		if r.Null != (want.Text == nil) || (want.Text != nil && r.Content != *want.Text) {
			t.Errorf("row %d: content %q null %v, want %v", i, r.Content, r.Null, want.Text)
		}
	}
}

// TestReadRow reads single rows from every row group, and names the
// file for a row past its end.
func TestReadRow(t *testing.T) {
	var rows []fineweb
	for i := range 7 {
		rows = append(rows, fineweb{Text: str("text " + strconv.Itoa(i)), ID: int64(i), URL: "u" + strconv.Itoa(i)})
	}
	path := write(t, "a.parquet", rows, 3)
	ctx := context.Background()
	for _, i := range []int64{0, 2, 3, 5, 6} {
		r, err := ReadRow(ctx, path, i, defaults)
		if err != nil {
			t.Fatal(err)
		}
		if r.Index != i || r.Content != *rows[i].Text || r.URL != rows[i].URL {
			t.Errorf("row %d read as %+v", i, r)
		}
	}
	if _, err := ReadRow(ctx, path, 7, defaults); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "no row 7") {
		t.Errorf("row 7 of 7: %v, want an error naming the file and the row", err)
	}
}

// TestReadRows reads chosen rows across row groups, with their splits,
// and refuses rows past the end or out of order, naming the file.
func TestReadRows(t *testing.T) {
	var rows []fineweb
	for i := range 10 {
		rows = append(rows, fineweb{Text: str("text " + strconv.Itoa(i)), ID: int64(i), URL: "u" + strconv.Itoa(i)})
	}
	path := write(t, "a.parquet", rows, 3) // row groups 0-2, 3-5, 6-8, 9
	ctx := context.Background()
	for _, want := range [][]int64{{0}, {1, 2, 4, 8, 9}, {2, 3}, {5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, nil} {
		var got []int64
		err := ReadRows(ctx, 4, path, Pin{}, want, defaults, func(sp Split, r Row) error {
			if r.Content != *rows[r.Index].Text || r.URL != rows[r.Index].URL {
				t.Errorf("row %d read as %+v", r.Index, r)
			}
			if sp.FileIndex != 4 || sp.RowGroup != int(r.Index/3) || sp.FirstRow != 3*int64(sp.RowGroup) {
				t.Errorf("row %d: split %+v", r.Index, sp)
			}
			got = append(got, r.Index)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("ReadRows(%v) read rows %v", want, got)
		}
	}
	for _, bad := range [][]int64{{3, 10}, {4, 4}, {5, 2}} {
		err := ReadRows(ctx, 0, path, Pin{}, bad, defaults, func(Split, Row) error { return nil })
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadRows(%v): %v, want an error naming the file", bad, err)
		}
	}
}

func TestColumnErrorsNameFileAndColumn(t *testing.T) {
	type noText struct {
		Body string `parquet:"body"`
		URL  string `parquet:"url"`
	}
	type intText struct {
		Text int64  `parquet:"text"`
		URL  string `parquet:"url"`
	}
	type noURL struct {
		Text string `parquet:"text"`
	}
	ctx := context.Background()
	missing := write(t, "missing.parquet", []noText{{"x", "u"}}, 10)
	if _, err := Splits(ctx, 0, missing, defaults); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), `"text"`) {
		t.Errorf("missing text column: %v", err)
	}
	wrong := write(t, "wrong.parquet", []intText{{1, "u"}}, 10)
	if _, err := Splits(ctx, 0, wrong, defaults); err == nil || !strings.Contains(err.Error(), wrong) || !strings.Contains(err.Error(), "type") {
		t.Errorf("text column of the wrong type: %v", err)
	}
	nourl := write(t, "nourl.parquet", []noURL{{"x"}}, 10)
	if _, err := Splits(ctx, 0, nourl, defaults); err != nil {
		t.Errorf("url is optional by default: %v", err)
	}
	required := defaults
	required.URLRequired = true
	if _, err := Splits(ctx, 0, nourl, required); err == nil || !strings.Contains(err.Error(), `"url"`) {
		t.Errorf("url named explicitly and missing: %v", err)
	}
	html := Columns{Text: "text", HTML: "body"}
	if _, err := Splits(ctx, 0, missing, html); err != nil {
		t.Errorf("--html-column body reads the body column instead of text: %v", err)
	}
	notParquet := filepath.Join(t.TempDir(), "x.parquet")
	os.WriteFile(notParquet, []byte("this is not parquet at all"), 0o644)
	if _, err := Splits(ctx, 0, notParquet, defaults); err == nil || !strings.Contains(err.Error(), notParquet) {
		t.Errorf("not a Parquet file: %v", err)
	}
}

// TestReadScoresMatchesReadSplit: the column-only reader gives every
// row's score as the row reader does, nulls included.
func TestReadScoresMatchesReadSplit(t *testing.T) {
	ctx := context.Background()
	const path = "../../testdata/crawl/part-00001.parquet"
	scores, has, err := ReadScores(ctx, path, "language_score")
	if err != nil {
		t.Fatal(err)
	}
	cols := Columns{Text: "text", Score: "language_score"}
	splits, err := Splits(ctx, 1, path, cols)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, sp := range splits {
		err := ReadSplit(ctx, sp, cols, func(r Row) error {
			if r.Score != scores[r.Index] || r.HasScore != has[r.Index] {
				t.Errorf("row %d: ReadSplit %v/%v, ReadScores %v/%v", r.Index, r.Score, r.HasScore, scores[r.Index], has[r.Index])
			}
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 || n != len(scores) {
		t.Errorf("%d rows read, %d scores", n, len(scores))
	}
	if _, _, err := ReadScores(ctx, path, "url"); err == nil || !strings.Contains(err.Error(), "want a number") {
		t.Errorf("a string column read as scores: %v", err)
	}
}

// TestSplitContentBytes: each split knows about how many bytes of text its
// row group holds, from the footer alone, within the length prefixes and
// page headers of what was written.
func TestSplitContentBytes(t *testing.T) {
	var rows []fineweb
	perGroup, text := 50, make([]int64, 2)
	for i := range 2 * perGroup {
		s := strings.Repeat(strconv.Itoa(i*7919)+" words ", 20+i)
		rows = append(rows, fineweb{Text: str(s), ID: int64(i)})
		text[i/perGroup] += int64(len(s))
	}
	path := write(t, "a.parquet", rows, int64(perGroup))
	splits, err := Splits(context.Background(), 0, path, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if len(splits) != 2 {
		t.Fatalf("%d splits, want 2", len(splits))
	}
	for i, sp := range splits {
		if sp.ContentBytes < text[i] || sp.ContentBytes > text[i]+text[i]/10 {
			t.Errorf("split %d: ContentBytes %d, want about the %d bytes of text written", i, sp.ContentBytes, text[i])
		}
	}
}
