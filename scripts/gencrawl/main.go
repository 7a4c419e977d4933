// Command gencrawl deterministically generates the synthetic sample crawl used
// by the neardup tests: testdata/crawl (FineWeb-schema Parquet files with
// planted exact, lexical, near and contained duplicates, boilerplate sites and
// edge rows, plus truth.json), testdata/html (raw HTML pages with planted
// markup variants, near copies and shared script/style blocks, plus
// truth.json) and testdata/redirects (the sample's pages and redirects to
// them, with chains, shared stub bodies, cycles and dead ends: see
// BuildRedirects).
//
// Usage (from the module root; these are the defaults):
//
//	go run ./scripts/gencrawl -out testdata/crawl -html-out testdata/html -redirects-out testdata/redirects -seed 1
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/scripts/gencrawl/synth"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// Output is everything the generator produces, in memory.
type Output struct {
	CrawlFiles [][]Row
	CrawlTruth *Truth
	HTMLRows   []HTMLRow
	HTMLTruth  *HTMLTruth
	// HTMLVisible[i] is the expected visible token sequence of HTMLRows[i].
	HTMLVisible [][]string
}

// Build generates all data for seed in memory.
func Build(seed uint64) (*Output, error) {
	v := NewVocab(rand.New(rand.NewPCG(seed, 0x766f636162)), 20000, 400) // "vocab"
	files, tr, err := BuildCrawl(seed, v, DefaultCrawlConfig())
	if err != nil {
		return nil, err
	}
	rows, htr, vis, err := BuildHTML(seed, v)
	if err != nil {
		return nil, err
	}
	return &Output{CrawlFiles: files, CrawlTruth: tr, HTMLRows: rows, HTMLTruth: htr, HTMLVisible: vis}, nil
}

// Generate builds the data for seed and writes it to crawlDir and htmlDir.
func Generate(crawlDir, htmlDir string, seed uint64) (*Output, error) {
	out, err := Build(seed)
	if err != nil {
		return nil, err
	}
	return out, out.Write(crawlDir, htmlDir)
}

// Write writes the parquet files and truth.json files.
func (o *Output) Write(crawlDir, htmlDir string) error {
	for _, d := range []string{crawlDir, htmlDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for i, rows := range o.CrawlFiles {
		if err := writeParquet(filepath.Join(crawlDir, synth.PartName(i)), rows, DefaultCrawlConfig().RowsPerGroup); err != nil {
			return err
		}
	}
	if err := synth.WriteJSON(filepath.Join(crawlDir, "truth.json"), o.CrawlTruth); err != nil {
		return err
	}
	if err := writeParquet(filepath.Join(htmlDir, HTMLPages), o.HTMLRows, 250); err != nil {
		return err
	}
	return synth.WriteJSON(filepath.Join(htmlDir, "truth.json"), o.HTMLTruth)
}

func writeParquet[T any](path string, rows []T, rowsPerGroup int64) error {
	var buf bytes.Buffer
	w := synth.NewWriter[T](&buf, zstd.SpeedBestCompression, rowsPerGroup, "neardup-gencrawl", "1.0.0", "synthetic")
	if _, err := w.Write(rows); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func main() {
	out := flag.String("out", "testdata/crawl", "output directory of the crawl parquet files and truth.json")
	htmlOut := flag.String("html-out", "testdata/html", "output directory of the html parquet file and truth.json")
	redirectsOut := flag.String("redirects-out", "testdata/redirects", "output directory of the redirect crawl's parquet files")
	recrawlOut := flag.String("recrawl-out", "testdata/redirects-recrawl", "output directory of the redirect crawl's second sweep")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	o, err := Generate(*out, *htmlOut, *seed)
	for _, w := range []struct {
		dir   string
		write func(string) error
	}{{*redirectsOut, o.WriteRedirects}, {*recrawlOut, o.WriteRecrawl}} {
		if err == nil {
			err = os.MkdirAll(w.dir, 0o755)
		}
		if err == nil {
			err = w.write(w.dir)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gencrawl:", err)
		os.Exit(1)
	}
	n := 0
	for _, f := range o.CrawlFiles {
		n += len(f)
	}
	fmt.Printf("wrote %d crawl rows in %d files to %s, %d html pages to %s, the redirect crawl to %s and its second sweep to %s\n", n, len(o.CrawlFiles), *out, len(o.HTMLRows), *htmlOut, *redirectsOut, *recrawlOut)
}
