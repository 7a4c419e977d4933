package transforms

import (
	"context"
	"testing"

	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/settings"
)

// BenchmarkPhase1 is phase 1 on one core over the real corpora of
// ../shared/data: reading the Parquet row groups, then RowSketcher (canonical
// tokens, shingles, fingerprints, the MOD_25 sketch, the content and lexical
// fingerprints) on every row, as the Sketch transform does. MB/s is of
// document text (HTML for the HTML table). Run with -cpu 1 for the per-core
// figure.
func BenchmarkPhase1(b *testing.B) {
	for _, c := range []struct{ file, html string }{
		{"multilingual-docs", ""},
		{"cc-main-2019-30-sample", ""},
		{"deb-manpages", ""},
		{"deb-copyright", ""},
		{"python-3.11-docs-html", "html"},
	} {
		path := shareddata.Path(b, c.file+".parquet")
		cfg := benchConfig()
		if c.html != "" {
			cfg.Columns = crawl.Columns{HTML: c.html, URL: "url", ID: "id", Date: "date"}
		}
		b.Run(c.file, func(b *testing.B) {
			ctx := context.Background()
			splits, err := crawl.Splits(ctx, 0, path, cfg.Columns)
			if err != nil {
				b.Fatal(err)
			}
			var textBytes int64
			for _, sp := range splits {
				if err := crawl.ReadSplit(ctx, sp, cfg.Columns, func(r crawl.Row) error {
					textBytes += int64(len(r.Content))
					return nil
				}); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(textBytes)
			rs, err := rowsketch.New(cfg.Config)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				for _, sp := range splits {
					if err := crawl.ReadSplit(ctx, sp, cfg.Columns, func(r crawl.Row) error {
						rs.Sketch(sp, r)
						return nil
					}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// benchConfig is cmd/runner's defaults.
func benchConfig() Config {
	return Config{Config: settings.Default()}
}
