// Command manyfiles writes a crawl of many small Parquet files, for the
// readers' check of ids past 2^53 (scripts/readers/check.sh): doc IDs are
// file << 40 | row, so from file 8,192 on they pass 2^53, where a float64
// reader would round them to a neighbour's.
//
//	go run ./scripts/readers/manyfiles -out DIR [-files 8194] [-from 0]
//
// Each file holds two rows (id, url, text) of pseudo-words
// (scripts/gencrawl/synth). The second rows of the last two files are
// identical, and the first row of every 1,000th file is a near copy of
// file 0's first row, so the docs, members, clusters and pairs tables all
// hold ids past 2^53. -from numbers the files from another index, for an
// update's new files beside a first run's.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/neardup/neardup/scripts/gencrawl/synth"
)

type page struct {
	ID   string `parquet:"id"`
	URL  string `parquet:"url"`
	Text string `parquet:"text"`
}

func main() {
	out := flag.String("out", "", "the folder to write the files into")
	files := flag.Int("files", 8194, "how many files")
	from := flag.Int("from", 0, "the first file's number")
	flag.Parse()
	if *out == "" || *files < 2 {
		log.Fatal("manyfiles: -out is required, and -files at least 2")
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	vocab := synth.ASCII.Words(rand.New(rand.NewPCG(1, 2)), 5000, func(r *rand.Rand) int { return 1 + r.IntN(3) })
	text := func(seed uint64) string {
		r := rand.New(rand.NewPCG(seed, 7))
		w := make([]string, 80)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	base := text(1 << 40)
	twin := text(1<<40 + 1)
	last := *from + *files - 1
	for i := *from; i <= last; i++ {
		rows := []page{
			{ID: fmt.Sprintf("f%d-0", i), URL: fmt.Sprintf("https://site%d.example/a", i), Text: text(uint64(2 * i))},
			{ID: fmt.Sprintf("f%d-1", i), URL: fmt.Sprintf("https://site%d.example/b", i), Text: text(uint64(2*i + 1))},
		}
		if i%1000 == 0 {
			// A near copy of the base text: its last word changed.
			words := strings.Fields(base)
			words[len(words)-1] = vocab[i%len(vocab)]
			rows[0].Text = strings.Join(words, " ")
		}
		if i >= last-1 {
			rows[1].Text = twin
		}
		f, err := os.Create(filepath.Join(*out, synth.PartName(i)))
		if err != nil {
			log.Fatal(err)
		}
		w := synth.NewWriter[page](f, zstd.SpeedFastest, 2, "manyfiles", "1", "")
		if _, err := w.Write(rows); err != nil {
			log.Fatal(err)
		}
		if err := w.Close(); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}
