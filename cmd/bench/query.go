package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/views/query"
)

// queryMain is "bench query": how long runner query takes to load an
// output and to answer, by URL and by a page's text, for --n documents
// spread over the docs table (their texts read from the input first, and
// cut to their first two thirds so that they are near copies, not
// copies).
func queryMain(args []string) error {
	fs := flag.NewFlagSet("query", flag.ExitOnError)
	from := fs.String("from", "", "a finished neardup output")
	n := fs.Int("n", 100, "documents to query")
	threshold := fs.Float64("threshold", 0.5, "text queries' threshold")
	fs.Parse(args)
	if *from == "" {
		return fmt.Errorf("query needs --from")
	}
	ctx := context.Background()
	start := time.Now()
	ix, err := query.Open(ctx, *from)
	if err != nil {
		return err
	}
	load := time.Since(start)
	docs, err := tables.ReadTable[tables.Doc](ctx, *from, tables.DocsTable)
	if err != nil {
		return err
	}
	slices.SortFunc(docs, func(a, b tables.Doc) int { return int(a.DocID - b.DocID) })
	var picked []tables.Doc
	for i := 0; i < len(docs) && len(picked) < *n; i += max(1, len(docs) / *n) {
		if d := docs[i]; d.URL != nil && d.Status == tables.StatusOK {
			picked = append(picked, d)
		}
	}
	cols := crawl.Columns{Text: "text"}
	if c := ix.Manifest.Flags["text-column"]; c != "" {
		cols.Text = c
	}
	var byURL, byText []time.Duration
	matches := 0
	for _, d := range picked {
		t := time.Now()
		if _, err := ix.URL(ctx, *d.URL, false); err != nil {
			return err
		}
		byURL = append(byURL, time.Since(t))
		row, err := crawl.ReadRow(ctx, d.SourceFile, d.SourceRow, cols)
		if err != nil {
			return err
		}
		t = time.Now()
		m, err := ix.Text(ctx, query.Page{Content: row.Content[:len(row.Content)*2/3]}, *threshold, 20, false)
		if errors.Is(err, query.ErrNoSketch) {
			continue // a short page none of whose shingles the sketch keeps
		}
		if err != nil {
			return err
		}
		byText = append(byText, time.Since(t))
		matches += len(m)
	}
	fmt.Printf("## Query\n\n%s: %d documents, loaded in %.2f s; %d queries of each kind (%.1f matches per text query)\n\n",
		*from, len(docs), load.Seconds(), len(picked), float64(matches)/float64(max(1, len(picked))))
	fmt.Printf("| query | p50 ms | p90 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|\n")
	for _, q := range []struct {
		name string
		d    []time.Duration
	}{{"--url", byURL}, {fmt.Sprintf("--text-file (2/3 of an indexed page; %d with a sketch)", len(byText)), byText}} {
		slices.Sort(q.d)
		at := func(p float64) float64 { return float64(q.d[int(p*float64(len(q.d)-1))]) / 1e6 }
		fmt.Printf("| %s | %.2f | %.2f | %.2f | %.2f |\n", q.name, at(0.5), at(0.9), at(0.99), at(1))
	}
	return nil
}
