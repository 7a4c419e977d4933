package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/simjoin"
)

// BenchmarkInsideALargeRun is issue 39's quality target inside a large
// run: each shared text corpus alone and inside NEARDUP_FILLER (a glob of
// a crawl of a gigabyte or more, such as cmd/bench gen's), its linked
// pairs with the defaults against the exact join of the corpus alone at
// resemblance 0.5. It prints precision and recall both ways.
//
//	NEARDUP_FILLER='/tmp/bc/crawl-300000-seed1-v1-unicode1/*.parquet' \
//	    go test ./cmd/quality -run XXX -bench InsideALargeRun -benchtime 1x
func BenchmarkInsideALargeRun(b *testing.B) {
	filler := os.Getenv("NEARDUP_FILLER")
	if filler == "" {
		b.Skip("set NEARDUP_FILLER to the glob of a large crawl")
	}
	fillers, err := filepath.Glob(filler)
	if err != nil || len(fillers) == 0 {
		b.Fatalf("NEARDUP_FILLER %q matches nothing (%v)", filler, err)
	}
	ctx := context.Background()
	for range b.N {
		for _, name := range []string{"multilingual-docs.parquet", "deb-copyright.parquet", "deb-manpages.parquet", "cc-main-2019-30-sample.parquet", "clough-stevenson.parquet"} {
			path := shareddata.Path(b, name)
			docs, err := readCorpus(ctx, path, columns(corpus{glob: path}), "")
			if err != nil {
				b.Fatal(err)
			}
			names := map[string]bool{}
			byID := map[uint64]string{}
			for _, d := range docs {
				names[d.Name] = true
				byID[d.ID] = d.Name
			}
			exactPairs, _, err := simjoin.Join(records(shingleSets(docs, *seed, *shingleWords)), 0.5)
			if err != nil {
				b.Fatal(err)
			}
			exact := map[[2]string]bool{}
			for _, p := range exactPairs {
				x, y := byID[p.A], byID[p.B]
				exact[[2]string{min(x, y), max(x, y)}] = true
			}
			dir := b.TempDir()
			for i, f := range fillers {
				if err := os.Symlink(f, filepath.Join(dir, fmt.Sprintf("a-filler-%03d.parquet", i))); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.Symlink(path, filepath.Join(dir, "b-corpus.parquet")); err != nil {
				b.Fatal(err)
			}
			inside := filepath.Join(dir, "*.parquet")
			for _, run := range []struct {
				name, input string
				verify      settings.Verify
			}{
				{"alone", path, settings.VerifyAuto},
				{"inside", inside, settings.VerifyAuto},
				{"inside, unverified (the default above 128 MiB before issue 39)", inside, settings.VerifyNone},
			} {
				linked, dense := linkedVerified(b, run.input, names, run.verify)
				both := 0
				for _, p := range linked {
					if exact[p] {
						both++
					}
				}
				fmt.Printf("%s %s: %d exact pairs, %d linked (%d pairs settled on dense samples), precision %s, recall %s\n",
					name, run.name, len(exact), len(linked), dense, ratio(both, len(linked)), ratio(both, len(exact)))
			}
		}
	}
}
