package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/features/shingle"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/text/canon"
)

// ErrNoSketch is the error of a page whose sketch is empty: there is
// nothing to compare it by.
var ErrNoSketch = errors.New("the page's sketch is empty")

// Page is a page to look up: its text, or its raw HTML.
type Page struct {
	Content string
	HTML    bool
}

// Match is an indexed document a page resembles or is contained in.
type Match struct {
	Doc
	Similarity
}

// Text sketches the page as the run sketched its documents (the same
// sketch, shingle size, seed and HTML extraction) and lists the indexed
// documents it resembles, or is contained in, at or above threshold:
// best first (the larger of the two, then the resemblance), at most limit
// of them (0: all). An
// identical copy is listed beside its representative, with the same
// figures. With exact, each match also gets its similarity over the full
// shingle sets, its text read from the input files.
//
// It finds the documents sharing a sketch value with the page in the
// postings table, one lookup a value (an output without the lookup
// tables scans every representative's sketch).
func (ix *Index) Text(ctx context.Context, page Page, threshold float64, limit int, exact bool) ([]Match, error) {
	if t := ix.Manifest.Settings["template_shingles"]; t != "" && t != "off" {
		return nil, fmt.Errorf("%s was written with --template-shingles=%s: its sketches lack each site's template shingles, which one page cannot tell; query it by URL", ix.Dir, t)
	}
	if ix.Manifest.Settings["mode"] == "exact" {
		return nil, fmt.Errorf("%s was written with --mode=exact: its sketches are each document's ppjoin+ prefix, not a sample a page's sketch compares with; query it by URL", ix.Dir)
	}
	q, tokens, err := ix.sketchPage(page)
	if err != nil {
		return nil, err
	}
	switch {
	case len(q) == 0 && ix.cfg.Chunks == 0 && tokens < int64(ix.cfg.ShingleWords):
		return nil, fmt.Errorf("%w: the page has %d tokens, too few for one shingle of %d words", ErrNoSketch, tokens, ix.cfg.ShingleWords)
	case len(q) == 0:
		return nil, fmt.Errorf("%w: %s keeps none of the page's features (%s; short pages may have none that it samples)", ErrNoSketch, ix.cfg.Sketch, ix.cfg.Features())
	}
	type hit struct {
		doc   int64
		sim   Similarity
		score float64
	}
	cands, err := ix.src.candidates(ctx, q)
	if err != nil {
		return nil, err
	}
	if err := ix.fillSketches(ctx, cands); err != nil {
		return nil, err
	}
	var hits []hit
	for _, c := range cands {
		sim := ix.candidateSimilarity(q, c)
		score := sim.Resemblance
		if sim.OfQuery != nil {
			score = max(score, *sim.OfQuery)
		}
		if score >= threshold {
			hits = append(hits, hit{c.doc, sim, score})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(b.sim.Resemblance, a.sim.Resemblance), cmp.Compare(a.doc, b.doc))
	})
	var qSet []uint64
	if exact {
		if qSet, err = ix.shingles(ix.text(page)); err != nil {
			return nil, err
		}
	}
	if limit > 0 {
		hits = hits[:min(len(hits), limit)] // each lists one document or more
	}
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.doc
	}
	copies, err := ix.withCopies(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []Match
	for _, h := range hits {
		for _, d := range copies[h.doc] {
			if limit > 0 && len(out) == limit {
				break
			}
			m := Match{Doc: docOf(&d), Similarity: h.sim}
			if exact {
				set, err := ix.shinglesOf(ctx, &d)
				if err != nil {
					return nil, err
				}
				e := exactOf(qSet, set)
				m.Exact = &e
			}
			out = append(out, m)
		}
	}
	return out, nil
}

// fillSketches reads the candidates' sketches where their estimates need
// them: under every kind of sketch but mod:M, whose estimates are the
// shared values' count over the sketches' sizes, which the postings give.
func (ix *Index) fillSketches(ctx context.Context, cands []candidate) error {
	if k := ix.cfg.Sketch.Kind; k != sketch.Min && k != sketch.MinHash {
		return nil
	}
	var ids []int64
	for _, c := range cands {
		if c.sketch == nil {
			ids = append(ids, c.doc)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	got, err := ix.src.sketches(ctx, ids)
	if err != nil {
		return err
	}
	for i := range cands {
		if cands[i].sketch == nil {
			cands[i].sketch = got[cands[i].doc]
		}
	}
	return nil
}

// candidateSimilarity is how alike a candidate is to the page of sketch
// q: from the two sketches, as similarity; under mod:M, from the counts
// the postings give (see fillSketches).
func (ix *Index) candidateSimilarity(q []uint64, c candidate) Similarity {
	if k := ix.cfg.Sketch.Kind; c.sketch != nil || k == sketch.Min || k == sketch.MinHash {
		return ix.similarity(q, c.sketch)
	}
	// clusters.EstimateSketches(m, q) of the mod:M kind.
	in, of := sketch.Containment(c.shared, c.size), sketch.Containment(c.shared, len(q))
	return Similarity{Shared: c.shared, Resemblance: sketch.ModResemblance(c.shared, c.size, len(q)), InQuery: &in, OfQuery: &of}
}

// withCopies is each representative's document and its identical
// copies, by doc ID (they are in its cluster), by representative.
func (ix *Index) withCopies(ctx context.Context, reps []int64) (map[int64][]tables.Doc, error) {
	docs, err := ix.src.docs(ctx, reps)
	if err != nil {
		return nil, err
	}
	out := map[int64][]tables.Doc{}
	var clusters []int64
	for _, d := range docs {
		out[d.DocID] = []tables.Doc{d}
		if d.ClusterID != nil {
			clusters = append(clusters, *d.ClusterID)
		}
	}
	slices.Sort(clusters)
	members, err := ix.src.members(ctx, slices.Compact(clusters)...)
	if err != nil {
		return nil, err
	}
	for _, m := range members {
		if m.IdenticalTo != nil && out[*m.IdenticalTo] != nil {
			out[*m.IdenticalTo] = append(out[*m.IdenticalTo], m.Doc())
		}
	}
	for _, docs := range out {
		slices.SortFunc(docs[1:], func(a, b tables.Doc) int { return cmp.Compare(a.DocID, b.DocID) })
	}
	return out, nil
}

// sketchPage is the page's sketch under the index's settings, and its
// token count.
func (ix *Index) sketchPage(page Page) ([]uint64, int64, error) {
	cfg := ix.cfg
	cfg.Columns = crawl.Columns{Text: "text"}
	if page.HTML {
		cfg.Columns = crawl.Columns{HTML: "html"}
	}
	rs, err := rowsketch.New(cfg)
	if err != nil {
		return nil, 0, err
	}
	doc, rec, _ := rs.Sketch(crawl.Split{}, crawl.Row{Content: page.Content})
	if rec == nil {
		return nil, doc.TokenCount, nil
	}
	return slices.Clone(rec.Values), doc.TokenCount, nil
}

// text is the page's text as the run would read it.
func (ix *Index) text(page Page) string {
	if page.HTML {
		return rowsketch.ExtractText(page.Content, ix.cfg.Extract)
	}
	return page.Content
}

// shingles is the sorted set of the text's features as the run made
// them: its w-word shingles, or its chunks.
func (ix *Index) shingles(text string) ([]uint64, error) {
	rs, err := rowsketch.New(ix.cfg)
	if err != nil {
		return nil, err
	}
	h := fingerprint.New(ix.cfg.Seed)
	hashes := canon.AppendHashes(nil, h, text)
	return rs.Features(nil, text, hashes), nil
}

// wordShingles is the sorted set of the text's w-word shingles, whatever
// the run's features: what SharedSpans marks.
func (ix *Index) wordShingles(text string) []uint64 {
	h := fingerprint.New(ix.cfg.Seed)
	hashes := canon.AppendHashes(nil, h, text)
	return shingle.FromHashes(hashes[:0], h, hashes, ix.cfg.ShingleWords)
}

// shinglesOf reads a document's text back from its input file (the run's
// text or HTML column) and returns its shingle set.
func (ix *Index) shinglesOf(ctx context.Context, d *tables.Doc) ([]uint64, error) {
	text, err := ix.textOf(ctx, d)
	if err != nil {
		return nil, fmt.Errorf("doc %d: its text is read from its input file for --exact: %w", d.DocID, err)
	}
	return ix.shingles(text)
}

// exactOf compares the query's shingle set q with a document's, m.
func exactOf(q, m []uint64) Exact {
	shared := sketch.IntersectCount(q, m)
	return Exact{Resemblance: sketch.ModResemblance(shared, len(q), len(m)),
		InQuery: sketch.Containment(shared, len(m)), OfQuery: sketch.Containment(shared, len(q))}
}
