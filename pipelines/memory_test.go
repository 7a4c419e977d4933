package pipelines

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/io/crawl"
)

// TestFitWarning: the launcher says nothing when the run fits, and when
// it does not, the figures (need = 400 MiB + 0.85 × text) and a slice
// that would fit ((free - 400 MiB) / 0.85).
func TestFitWarning(t *testing.T) {
	const gbytes = 1_000_000_000
	if w := fitWarning(1*gbytes, 16*gbytes); w != "" {
		t.Errorf("1 GB of text on 16 GB free: warned %q", w)
	}
	if w := fitWarning(100*gbytes, 0); w != "" {
		t.Errorf("nothing known of the machine: warned %q", w)
	}
	// 10 GB of text: 0.419 + 8.5 = 8.9 GB needed; 6 GB free: a slice of
	// (6 - 0.419) / 0.85 = 6.6 GB.
	w := fitWarning(10*gbytes, 6*gbytes)
	for _, want := range []string{"10.0 GB of text", "needs about 8.9 GB", "6.0 GB free", "at most about 6.6 GB of text", "cluster runner", "runner update"} {
		if !strings.Contains(w, want) {
			t.Errorf("warning does not say %q:\n%s", want, w)
		}
	}
}

// TestInputTextBytes: the footers' figures for the sample crawl are its
// rows and its text's bytes as read, row by row, the latter within the
// length prefixes and page headers.
func TestInputTextBytes(t *testing.T) {
	ctx := context.Background()
	files, err := filepath.Glob("../testdata/crawl/*.parquet")
	if err != nil || len(files) == 0 {
		t.Fatalf("the sample crawl: %v, %d files", err, len(files))
	}
	cols := crawl.Columns{Text: "text", URL: "url", ID: "id", Date: "date"}
	var read, rows int64
	for i, f := range files {
		splits, err := crawl.Splits(ctx, i, f, cols)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range splits {
			if err := crawl.ReadSplit(ctx, sp, cols, func(r crawl.Row) error { read, rows = read+int64(len(r.Content)), rows+1; return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	gotRows, got := readFooters(ctx, files, cols)
	if got < read || got > read+read/10 {
		t.Errorf("readFooters: %d bytes of text, want about the %d bytes read", got, read)
	}
	if gotRows != rows {
		t.Errorf("readFooters: %d rows, want the %d read", gotRows, rows)
	}
}
