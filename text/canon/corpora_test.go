package canon

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/text/htmltext"
)

// TestRealCorporaMatchWhole is the differential test of the fast paths on
// real text: every document of every table in ../shared/data (the HTML
// table as its visible text) must give, through Tokens and AppendHashes,
// exactly the tokens and hashes of the reference rule applied to the whole
// document (appendSlow). It skips when the shared corpora are absent
// (and fails under CI).
func TestRealCorporaMatchWhole(t *testing.T) {
	corpora := []struct{ file, text, html string }{
		{"multilingual-docs.parquet", "text", ""},
		{"cc-main-2019-30-sample.parquet", "text", ""},
		{"deb-manpages.parquet", "text", ""},
		{"deb-copyright.parquet", "text", ""},
		{"clough-stevenson.parquet", "text", ""},
		{"python-3.11-docs-html.parquet", "", "html"},
	}
	paths := make([]string, len(corpora))
	for i, c := range corpora {
		paths[i] = shareddata.Path(t, c.file)
	}
	ctx := context.Background()
	var hashes []uint64
	for i, c := range corpora {
		path := paths[i]
		cols := crawl.Columns{Text: c.text, HTML: c.html}
		splits, err := crawl.Splits(ctx, 0, path, cols)
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		var docs, bytes int
		for _, sp := range splits {
			err := crawl.ReadSplit(ctx, sp, cols, func(r crawl.Row) error {
				text := r.Content
				if c.html != "" {
					text = htmltext.Extract(text)
				}
				want := appendSlow(nil, text)
				if got := Tokens(text); !slices.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Fatalf("%s row %d: token %d is %+q, the whole-text rule gives %+q", c.file, r.Index, i, got[i:min(i+3, len(got))], want[i:min(i+3, len(want))])
				}
				hashes = AppendHashes(hashes[:0], testHasher, text)
				checkHashes(t, fmt.Sprintf("%s row %d", c.file, r.Index), hashes, want)
				docs++
				bytes += len(text)
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
		}
		t.Logf("%s: %d documents, %.1f MB: fast paths equal the whole-text rule", c.file, docs, float64(bytes)/1e6)
	}
}

// BenchmarkCorpusHashes is phase 1's tokenizing step on real text:
// AppendHashes over every document of a shared table, reported in bytes
// of text per second. The sub-benchmarks split multilingual-docs by
// language (the id's prefix: man-ja, man-zh_CN, ...), so a change that
// only affects one script shows where it costs. It skips when the shared
// corpora are absent (and fails under CI).
func BenchmarkCorpusHashes(b *testing.B) {
	path := shareddata.Path(b, "multilingual-docs.parquet")
	ctx := context.Background()
	cols := crawl.Columns{Text: "text", ID: "id"}
	splits, err := crawl.Splits(ctx, 0, path, cols)
	if err != nil {
		b.Fatal(err)
	}
	groups := map[string][]string{}
	for _, sp := range splits {
		err := crawl.ReadSplit(ctx, sp, cols, func(r crawl.Row) error {
			lang, _, _ := strings.Cut(r.ID, "/")
			if strings.HasPrefix(lang, "perl") {
				lang = "perl"
			}
			groups["all"] = append(groups["all"], r.Content)
			groups[lang] = append(groups[lang], r.Content)
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range []string{"all", "man-ja", "man-zh_CN", "man-zh_TW", "man-de", "man-ru", "perl"} {
		docs := groups[name]
		b.Run(name, func(b *testing.B) {
			var n int
			for _, d := range docs {
				n += len(d)
			}
			b.SetBytes(int64(n))
			var dst []uint64
			for b.Loop() {
				for _, d := range docs {
					dst = AppendHashes(dst[:0], testHasher, d)
				}
			}
		})
	}
}
