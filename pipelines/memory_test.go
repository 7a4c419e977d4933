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

// TestInputTextBytes: the footers' figure for the sample crawl is its
// text's bytes as read, row by row, within the length prefixes and page
// headers.
func TestInputTextBytes(t *testing.T) {
	ctx := context.Background()
	files, err := filepath.Glob("../testdata/crawl/*.parquet")
	if err != nil || len(files) == 0 {
		t.Fatalf("the sample crawl: %v, %d files", err, len(files))
	}
	cols := crawl.Columns{Text: "text", URL: "url", ID: "id", Date: "date"}
	var read int64
	for i, f := range files {
		splits, err := crawl.Splits(ctx, i, f, cols)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range splits {
			if err := crawl.ReadSplit(ctx, sp, cols, func(r crawl.Row) error { read += int64(len(r.Content)); return nil }); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := inputTextBytes(ctx, files, cols); got < read || got > read+read/10 {
		t.Errorf("inputTextBytes = %d, want about the %d bytes of text read", got, read)
	}
}
