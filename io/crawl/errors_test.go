package crawl

import (
	"context"
	"strings"
	"testing"
)

// TestMissingColumnError checks that a file without a wanted column fails
// with an error that names the file, the column and the columns it has,
// so that users can pick the right one without opening the file.
func TestMissingColumnError(t *testing.T) {
	path := write(t, "a.parquet", []fineweb{{Text: str("one"), ID: 1, URL: "u"}}, 10)
	for _, c := range []struct {
		cols    Columns
		missing string
	}{
		{Columns{Text: "body"}, "body"},
		{Columns{Text: "text", HTML: "html"}, "html"},
		{Columns{Text: "text", URL: "link", URLRequired: true}, "link"},
		{Columns{Text: "text", Score: "rank"}, "rank"},
	} {
		cols, missing := c.cols, c.missing
		_, err := Splits(context.Background(), 0, path, cols)
		if err == nil {
			t.Fatalf("%+v: no error", cols)
		}
		for _, want := range []string{path, `column "` + missing + `" not found`, "text, id, url, date, language"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%+v: %v; want it to say %q", cols, err, want)
			}
		}
	}
}
