package main

import (
	"context"
	"hash/maphash"
	"runtime"
	"sync"

	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/features/shingle"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/text/canon"
)

// corpus is one input glob, read as cmd/quality reads it.
type corpus struct {
	name    string
	glob    string
	html    bool
	extract string // HTML: "main" (the pipeline's default) or "visible"
}

// doc is a document with shingles: its ID as the pipeline numbers it, its
// full sorted shingle set, and the hash of its raw content (the
// pipeline's identical-document shortcut groups by it).
type doc struct {
	ID      uint64
	Set     []uint64
	Content uint64

	// Big mode keeps sketches instead of the set (see big): Set is then
	// the mod:25 floor 100 sketch, Below its rate sample's size, N the
	// set's size and Mod the MOD_25 sketch.
	Below, N int
	Mod      []uint64
}

// readDocs reads every row of c, tokenizes and shingles it exactly as
// cmd/quality's exact side does (canon.Tokens, shingle.Fingerprints with
// the -seed flag, default the pipeline's, w words), and keeps the documents with shingles: the
// pipeline's status-ok documents. keep, when not nil, stores what is kept
// of a set (which is reused after the call) in the doc; by default its Set
// is the set.
func readDocs(ctx context.Context, c corpus, w int, keep func(*doc, []uint64)) ([]doc, int, error) {
	cols := crawl.Columns{Text: "text", URL: "url", ID: "id", Date: "date"}
	if c.html {
		cols.Text, cols.HTML = "", "html"
	}
	files, err := store.Match(ctx, c.glob)
	if err != nil {
		return nil, 0, err
	}
	type row struct {
		id      uint64
		content string
	}
	contentSeed := maphash.MakeSeed()
	var (
		mu    sync.Mutex
		docs  []doc
		total int
	)
	work := make(chan []row, 4)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := fingerprint.New(*seed)
			var out []doc
			var buf []uint64
			for rows := range work {
				out = out[:0]
				for _, r := range rows {
					text := r.content
					if c.html {
						text = rowsketch.ExtractText(text, c.extract)
					}
					d := doc{ID: r.id, Content: maphash.String(contentSeed, r.content)}
					if keep == nil {
						d.Set = shingle.Fingerprints(nil, h, canon.Tokens(text), w)
						if len(d.Set) == 0 {
							continue
						}
					} else {
						buf = shingle.Fingerprints(buf, h, canon.Tokens(text), w)
						if len(buf) == 0 {
							continue
						}
						keep(&d, buf)
					}
					out = append(out, d)
				}
				mu.Lock()
				docs = append(docs, out...)
				mu.Unlock()
			}
		}()
	}
	var readErr error
	for i, f := range files {
		splits, err := crawl.Splits(ctx, i, f, cols)
		if err != nil {
			readErr = err
			break
		}
		for _, sp := range splits {
			var batch []row
			err := crawl.ReadSplit(ctx, sp, cols, func(r crawl.Row) error {
				total++
				batch = append(batch, row{crawl.DocID(i, r.Index), r.Content})
				if len(batch) == 256 {
					work <- batch
					batch = nil
				}
				return nil
			})
			if len(batch) > 0 {
				work <- batch
			}
			if err != nil {
				readErr = err
				break
			}
		}
		if readErr != nil {
			break
		}
	}
	close(work)
	wg.Wait()
	if readErr != nil {
		return nil, 0, readErr
	}
	sortDocs(docs)
	return docs, total, nil
}
