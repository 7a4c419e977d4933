// Command addredirects turns a share of a crawl's rows into redirects, for
// benchmarks of --redirect-column at scale (BENCHMARKS.md): it copies the
// Parquet files of -in to -out with a fetch_redirect column, and each
// chosen row (-share of them, by a hash of its position) keeps its URL but
// becomes a redirect: its text a crawler's stub (one shared by half of
// them, a per-row one for the others), its fetch_redirect the URL of
// another row chosen the same way (a redirect itself a -share of the time,
// so chains form), or, for -outside of them, a URL the crawl lacks. The
// other rows are as they were, fetch_redirect null. The output is a
// function of the input and the flags alone. It never writes into the
// repository.
//
// Usage (from the module root):
//
//	go run ./scripts/addredirects -in '/tmp/crawl/*.parquet' -out /tmp/redirect-crawl -share 0.1
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// row is a crawl row with the columns the benchmark crawls have.
type row struct {
	Text          string  `parquet:"text"`
	ID            string  `parquet:"id"`
	URL           string  `parquet:"url"`
	Date          string  `parquet:"date"`
	FetchRedirect *string `parquet:"fetch_redirect,optional"`
}

// mix is a 64-bit finalizer (SplitMix64's): position to pseudo-random.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func main() {
	in := flag.String("in", "", "glob of the crawl's Parquet files (text, id, url, date)")
	out := flag.String("out", "", "output folder (created)")
	share := flag.Float64("share", 0.1, "share of rows made redirects")
	outside := flag.Float64("outside", 0.02, "share of redirects pointing outside the crawl")
	rowGroup := flag.Int64("rowgroup", 5000, "rows per row group")
	flag.Parse()
	files, err := filepath.Glob(*in)
	if err != nil || len(files) == 0 || *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	// Every row's URL, by global position, for the targets.
	var urls []string
	all := make([][]row, len(files))
	for i, f := range files {
		if all[i], err = parquet.ReadFile[row](f); err != nil {
			log.Fatal(err)
		}
		for _, r := range all[i] {
			urls = append(urls, r.URL)
		}
	}
	chosen := func(pos uint64) bool { return float64(mix(pos)%1_000_000) < *share*1e6 }
	const stub = "301 Moved Permanently. The document has moved here."
	pos, redirects := uint64(0), 0
	for i, rows := range all {
		for j := range rows {
			if chosen(pos) {
				h := mix(pos ^ 0x5eed)
				to := urls[h%uint64(len(urls))]
				if float64(mix(h)%1_000_000) < *outside*1e6 {
					to = fmt.Sprintf("https://gone.example/%d", pos)
				}
				rows[j].Text = stub
				if pos%2 == 1 {
					rows[j].Text = fmt.Sprintf("Moved Permanently. The document has moved to %s.", to)
				}
				rows[j].FetchRedirect = &to
				redirects++
			}
			pos++
		}
		name := filepath.Join(*out, filepath.Base(files[i]))
		f, err := os.Create(name)
		if err != nil {
			log.Fatal(err)
		}
		w := parquet.NewGenericWriter[row](f, parquet.Compression(&zstd.Codec{}), parquet.MaxRowsPerRowGroup(*rowGroup))
		if _, err := w.Write(rows); err != nil {
			log.Fatal(err)
		}
		if err := w.Close(); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
		all[i] = nil
	}
	fmt.Printf("addredirects: %d of %d rows made redirects, in %d files in %s\n", redirects, pos, len(files), *out)
}
