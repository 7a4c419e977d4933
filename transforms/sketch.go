package transforms

import (
	"context"
	"fmt"
	"math"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/bloom"
	"github.com/neardup/neardup/canon"
	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/fingerprint"
	"github.com/neardup/neardup/htmltext"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/keep"
	"github.com/neardup/neardup/packed"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simjoin"
	"github.com/neardup/neardup/sitetemplate"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/stopword"
	"github.com/neardup/neardup/supershingle"
)

var (
	docsRead     = beam.NewCounter(Namespace, "docs")
	docsOK       = beam.NewCounter(Namespace, "docs_ok")
	docsEmpty    = beam.NewCounter(Namespace, "docs_empty")
	docsTooShort = beam.NewCounter(Namespace, "docs_too_short")
	docsRejected = beam.NewCounter(Namespace, "docs_rejected")
	shinglesSeen = beam.NewCounter(Namespace, "shingles")
	sketchValues = beam.NewCounter(Namespace, "sketch_values")
	phase1Time   = newPhaseTimer("phase1_sketch")
	metaElements = beam.NewCounter(Namespace, "shuffled_docs_meta_elements")
	metaBytes    = beam.NewCounter(Namespace, "shuffled_docs_meta_bytes")
)

func init() {
	register.DoFn8x1[context.Context, crawl.Split, func(int, []byte), func(int, []byte), func(int, []byte), func(int, []byte), func(int, []byte), func(int, []byte), error](&sketchFn{})
	register.Emitter2[int, []byte]()
}

// DocID is a document's ID: the position of its file in the sorted list of
// matched files in the high 24 bits, its row in the file in the low 40. It is
// the same on every run over the same input, with no global counter, and
// orders documents as the input does.
func DocID(fileIndex int, row int64) uint64 { return uint64(fileIndex)<<40 | uint64(row) }

// Sketch is phase 1. It takes PCollection<crawl.Split> and reads and sketches
// every row: canonical tokens, w-word shingles, their fingerprints, the
// MOD_m or MIN_s sketch, and the content and lexical fingerprints. It
// returns meta, PCollection<KV<int, []byte>> of docs-table rows (status and
// counts, no cluster yet) keyed by doc partition; sketches,
// PCollection<KV<int, []byte>> of packed.Sketch batches keyed by the
// partition of the fingerprint that decides identity; and equiv, the
// fingerprints of all three equivalence levels for EquivalenceCounts;
// and ranks, PCollection<KV<int, []byte>> of <doc, rank bits> packed.Arc
// batches keyed by doc partition, for every sketched document when
// Config.Keep ranks documents (empty otherwise); and sites,
// PCollection<KV<int, []byte>> of packed.SiteCount batches for
// SiteTemplates under Config.Templates (empty otherwise), when the
// sketches of pages with a site are keyed by the site's partition; and
// features, PCollection<KV<int, []byte>> of packed.Features batches keyed
// by doc partition, each sketched document's whole feature set or its
// Bloom filter under Config.Verification (empty otherwise), for Verify.
func Sketch(s beam.Scope, splits beam.PCollection, cfg Config) (meta, sketches, equiv, ranks, sites, features beam.PCollection) {
	s = s.Scope("Sketch")
	outs := beam.ParDoN(s, &sketchFn{Cfg: cfg}, splits)
	return outs[0], outs[1], outs[2], outs[3], outs[4], outs[5]
}

type sketchFn struct {
	Cfg Config
	out *sketchOut // what the current bundle has not emitted yet
}

// sketchOut is what sketchFn gathers over a bundle: its docs rows and the
// batchers of its sketches and equivalence keys (see batcher on why per
// bundle, not per element).
type sketchOut struct {
	metas                         [][]tables.Doc
	metaBytes                     int
	sketches, equiv, ranks, sites *batcher
	features                      *batcher
}

func (f *sketchFn) StartBundle(ctx context.Context, emitMeta, emitSketch, emitEquiv, emitRanks, emitSites, emitFeatures func(int, []byte)) {
	f.out = nil // a retried bundle starts afresh
}

func (f *sketchFn) FinishBundle(ctx context.Context, emitMeta, emitSketch, emitEquiv, emitRanks, emitSites, emitFeatures func(int, []byte)) error {
	out := f.out
	f.out = nil
	if out == nil {
		return nil
	}
	return out.flush(ctx, emitMeta, emitSketch, emitEquiv, emitRanks, emitSites, emitFeatures)
}

// flush emits everything gathered so far.
func (o *sketchOut) flush(ctx context.Context, emitMeta, emitSketch, emitEquiv, emitRanks, emitSites, emitFeatures func(int, []byte)) error {
	o.sites.bind(ctx, emitSites)
	o.sites.flush()
	o.sketches.bind(ctx, emitSketch)
	o.sketches.flush()
	o.equiv.bind(ctx, emitEquiv)
	o.equiv.flush()
	o.ranks.bind(ctx, emitRanks)
	o.ranks.flush()
	o.features.bind(ctx, emitFeatures)
	o.features.flush()
	err := emitDocRows(ctx, o.metas, emitMeta)
	clear(o.metas)
	o.metaBytes = 0
	return err
}

func (f *sketchFn) ProcessElement(ctx context.Context, sp crawl.Split, emitMeta, emitSketch, emitEquiv, emitRanks, emitSites, emitFeatures func(int, []byte)) error {
	defer phase1Time.done(ctx, phase1Time.begin())
	parts := f.Cfg.Partitions
	if f.out == nil {
		f.out = &sketchOut{metas: make([][]tables.Doc, parts)}
	}
	out := f.out
	metas := out.metas
	sketches := bundleBatcher(&out.sketches, ctx, "sketches", parts, emitSketch)
	equiv := bundleBatcher(&out.equiv, ctx, "equivalence_keys", len(Equivalences)*parts, emitEquiv)
	ranks := bundleBatcher(&out.ranks, ctx, "ranks", parts, emitRanks)
	sites := bundleBatcher(&out.sites, ctx, "site_counts", parts, emitSites)
	features := bundleBatcher(&out.features, ctx, "features", parts, emitFeatures)
	templates := f.Cfg.Templates.On()
	ranked := f.Cfg.Keep.Ranked()
	var nOK, nEmpty, nShort, nRejected, nShingles, nValues, nBytes int64
	rs := NewRowSketcher(f.Cfg)
	next := sp.FirstRow // the first row not yet read
	keepRow := func(doc tables.Doc) {
		p := packed.Partition(uint64(doc.DocID), parts)
		metas[p] = append(metas[p], doc)
		out.metaBytes += docRowBytes(&doc)
	}
	err := crawl.ReadSplit(ctx, sp, f.Cfg.Columns, func(row crawl.Row) error {
		next = row.Index + 1
		nBytes += int64(len(row.Content))
		doc, rec, keys := rs.Sketch(sp, row)
		switch doc.Status {
		case tables.StatusOK:
			nOK++
			nShingles += doc.ShingleCount
			nValues += int64(doc.SketchSize)
		case tables.StatusEmpty:
			nEmpty++
		case tables.StatusTooShort:
			nShort++
		case tables.StatusRejected:
			nRejected++
		}
		if rec != nil && f.Cfg.Verification != "" && doc.Status == tables.StatusOK && len(rs.shingles) > 0 {
			features.add(packed.Partition(rec.Doc, parts), rs.verifiable(rec.Doc))
		}
		if rec != nil {
			for level, k := range keys {
				equiv.add(level*parts+packed.Partition(k, parts), packedKey(k))
			}
			if ranked {
				rec.Rank = f.Cfg.Keep.Rank(keep.Doc{Tokens: doc.TokenCount, URL: row.URL, Date: row.Date, Score: row.Score, HasScore: row.HasScore})
				ranks.add(packed.Partition(rec.Doc, parts), packed.Arc{U: rec.Doc, V: math.Float64bits(rec.Rank)})
			}
			if templates && rec.Site != 0 {
				// The sketch goes to its site's partition, where
				// SiteTemplates drops the site's template values
				// before the identical shortcut; the counts it needs
				// go to the (site, value) partitions.
				if doc.Status == tables.StatusOK {
					sites.add(packed.Partition(rec.Site, parts), packed.SiteCount{Site: rec.Site, Docs: 1, Pages: true})
					for _, v := range rec.Values {
						sites.add(packed.Partition(siteValueKey(rec.Site, v), parts), packed.SiteCount{Site: rec.Site, Value: v, Docs: 1})
					}
				}
				sketches.add(packed.Partition(rec.Site, parts), *rec)
			} else {
				sketches.add(packed.Partition(rec.Key, parts), *rec)
			}
		}
		keepRow(doc)
		return nil
	})
	if err != nil {
		if !f.Cfg.SkipBadFiles {
			return err
		}
		// The rows of the split not read yet still get their docs rows,
		// rejected, and the manifest names the file: nothing is lost.
		if err := recordBadFile(ctx, f.Cfg.TempDir, sp, err); err != nil {
			return err
		}
		for r := next; r < sp.FirstRow+sp.NumRows; r++ {
			keepRow(tables.Doc{DocID: int64(DocID(sp.FileIndex, r)), SourceFile: sp.Path, SourceRow: r, Extraction: f.Cfg.Extraction(), Sweep: f.Cfg.Sweep,
				Status: tables.StatusRejected, Reason: optional("row group unreadable: " + err.Error())})
			nRejected++
		}
	}
	if out.metaBytes > maxBuffered(parts) {
		if err := out.flush(ctx, emitMeta, emitSketch, emitEquiv, emitRanks, emitSites, emitFeatures); err != nil {
			return err
		}
	}
	docsRead.Inc(ctx, sp.NumRows)
	docsOK.Inc(ctx, nOK)
	docsEmpty.Inc(ctx, nEmpty)
	docsTooShort.Inc(ctx, nShort)
	docsRejected.Inc(ctx, nRejected)
	shinglesSeen.Inc(ctx, nShingles)
	sketchValues.Inc(ctx, nValues)
	progress.AddRead(sp.NumRows, nBytes)
	return nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// RowSketcher is phase 1 for one row at a time, as a plain function of
// the row and the configuration: the Sketch transform and cmd/bench's
// plain-Go floor both call it, so they do the same work. It keeps the
// buffers it reuses from row to row, so one RowSketcher serves one
// goroutine.
type RowSketcher struct {
	cfg                                      Config
	h                                        fingerprint.Hasher
	hashes, shingles, values, minima, supers []uint64
	chunker                                  *chunk.Chunker // under Config.Chunks
	stop                                     stopword.Set   // under Config.Stopwords
	tokens                                   []string
	canonical                                []byte
	kept                                     []uint64 // the token hashes without stop words
}

// NewRowSketcher returns a RowSketcher for cfg. It panics on a chunk size
// chunk.New refuses or a stop-word language stopword has no list for: the
// launcher checks --features and --stopwords first.
func NewRowSketcher(cfg Config) *RowSketcher {
	rs := &RowSketcher{cfg: cfg, h: fingerprint.New(cfg.Seed)}
	if cfg.Chunks > 0 {
		c, err := chunk.New(cfg.Chunks)
		if err != nil {
			panic(err)
		}
		rs.chunker = c
	}
	if cfg.Stopwords != "" {
		set, err := stopword.Hashes(cfg.Stopwords, rs.h)
		if err != nil {
			panic(err)
		}
		rs.stop = set
	}
	return rs
}

// verifiable is the record Verify checks the document's pairs with: its
// whole feature set, or its Bloom filter (Config.Verification), from the
// last Sketch.
func (rs *RowSketcher) verifiable(doc uint64) packed.Features {
	if rs.cfg.Verification == VerifyBloom {
		f := bloom.New(rs.shingles, rs.cfg.BloomBitsPerFeature())
		return packed.Features{Doc: doc, N: f.N, K: uint32(f.K), Values: f.Bits}
	}
	return packed.Features{Doc: doc, N: uint32(len(rs.shingles)), Values: rs.shingles}
}

// content returns the token hashes that make features: hashes without
// the stop words of Config.Stopwords, if set.
func (rs *RowSketcher) content(hashes []uint64) []uint64 {
	if rs.stop == nil {
		return hashes
	}
	rs.kept = rs.stop.Drop(append(rs.kept[:0], hashes...))
	return rs.kept
}

// Features appends to dst the sorted, distinct features of a text whose
// token hashes are hashes (canon.AppendHashes): its w-word shingles, or
// under Config.Chunks the content-defined chunks of its canonical form
// (its tokens joined by single spaces, so that spacing, case and
// punctuation change no chunk). Under Config.Stopwords the tokens are
// those that are not stop words.
func (rs *RowSketcher) Features(dst []uint64, text string, hashes []uint64) []uint64 {
	if rs.chunker == nil {
		return shingle.FromHashes(dst, rs.h, rs.content(hashes), rs.cfg.ShingleWords)
	}
	return rs.chunks(dst, text)
}

// chunks appends to dst the content-defined chunks of text's canonical
// form, without stop words under Config.Stopwords (see Features).
func (rs *RowSketcher) chunks(dst []uint64, text string) []uint64 {
	rs.tokens = canon.AppendTokens(rs.tokens[:0], text)
	rs.canonical = rs.canonical[:0]
	n := 0
	for _, t := range rs.tokens {
		if rs.stop != nil {
			if _, stop := rs.stop[rs.h.String(t)]; stop {
				continue
			}
		}
		if n > 0 {
			rs.canonical = append(rs.canonical, ' ')
		}
		rs.canonical = append(rs.canonical, t...)
		n++
	}
	return rs.chunker.Features(dst, rs.canonical, rs.h.Bytes)
}

// Sketch returns the row's docs-table row and, for documents that go on
// to the identical shortcut, their sketch record and the fingerprints of
// the three equivalence levels. The record's slices are the
// RowSketcher's buffers: valid until the next call.
func (rs *RowSketcher) Sketch(sp crawl.Split, row crawl.Row) (tables.Doc, *packed.Sketch, [3]uint64) {
	cfg := &rs.cfg
	id := DocID(sp.FileIndex, row.Index)
	doc := tables.Doc{
		DocID:      int64(id),
		ID:         optional(row.ID),
		URL:        optional(row.URL),
		Date:       optional(row.Date),
		SourceFile: sp.Path,
		SourceRow:  row.Index,
		Extraction: cfg.Extraction(),
		Sweep:      cfg.Sweep,
	}
	doc.ContentFingerprint = int64(rs.h.String(row.Content))
	if cfg.MaxDocBytes > 0 && len(row.Content) > cfg.MaxDocBytes {
		doc.Status = tables.StatusRejected
		doc.Reason = optional(fmt.Sprintf("%s of %d bytes exceeds --max-doc-bytes %d", cfg.Columns.ContentColumn(), len(row.Content), cfg.MaxDocBytes))
		return doc, nil, [3]uint64{}
	}
	text := row.Content
	if cfg.Columns.HTML != "" {
		text = ExtractText(text, cfg.Extract)
	}
	// The tokens are never built: their hashes are all the later steps
	// need (the lexical fingerprint is defined on them, see
	// fingerprint.Hasher.Tokens).
	rs.hashes = canon.AppendHashes(rs.hashes[:0], rs.h, text)
	doc.TokenCount = int64(len(rs.hashes))
	doc.LexicalFingerprint = int64(rs.h.Combine(rs.hashes))
	content := rs.hashes // what shingles are made of
	if cfg.Chunks == 0 {
		content = rs.content(rs.hashes)
	}
	switch {
	case row.Null:
		doc.Status, doc.Reason = tables.StatusEmpty, optional("null "+cfg.Columns.ContentColumn())
		return doc, nil, [3]uint64{}
	case len(rs.hashes) == 0:
		doc.Status, doc.Reason = tables.StatusEmpty, optional("no tokens")
		return doc, nil, [3]uint64{}
	case cfg.Chunks == 0 && len(content) < cfg.ShingleWords:
		doc.Status = tables.StatusTooShort
		doc.Reason = optional(fmt.Sprintf("%d tokens, fewer than the shingle size %d", len(rs.hashes), cfg.ShingleWords))
		if rs.stop != nil {
			doc.Reason = optional(fmt.Sprintf("%d tokens besides stop words, fewer than the shingle size %d", len(content), cfg.ShingleWords))
		}
		rs.values, rs.supers = rs.values[:0], rs.supers[:0]
	default:
		doc.Status = tables.StatusOK
		if cfg.Chunks == 0 {
			rs.shingles = shingle.FromHashes(rs.shingles[:0], rs.h, content, cfg.ShingleWords)
		} else {
			rs.shingles = rs.chunks(rs.shingles[:0], text)
		}
		switch {
		case cfg.SuperShingle && cfg.Sketch.Kind == sketch.MinHash:
			rs.minima = sketch.MinHashValues(rs.minima[:0], rs.shingles, cfg.Sketch.N)
			rs.values = sketch.TagMinHash(rs.values[:0], rs.minima)
			rs.supers = supershingle.Bands(rs.supers[:0], rs.h, rs.minima, cfg.Bands)
		case cfg.SuperShingle:
			rs.values = cfg.Sketch.Select(rs.values[:0], rs.shingles)
			rs.supers = supershingle.Broder(rs.supers[:0], rs.h, rs.values, cfg.SuperSize)
		case cfg.Exact:
			// The ppjoin+ prefix: any document at the threshold or
			// above shares one of these features (in the order of their
			// fingerprints, one global order).
			rs.values = append(rs.values[:0], rs.shingles[:simjoin.ProbePrefix(cfg.Policy.Resemblance, len(rs.shingles))]...)
			rs.supers = rs.supers[:0]
		default:
			rs.values = cfg.Sketch.Select(rs.values[:0], rs.shingles)
			rs.supers = rs.supers[:0]
		}
		doc.ShingleCount = int64(len(rs.shingles))
		doc.SketchSize = int32(len(rs.values))
	}
	// Shingle equivalence falls back to the token stream for documents
	// with an empty sketch, which are not all alike.
	keys := [3]uint64{uint64(doc.ContentFingerprint), uint64(doc.LexicalFingerprint), uint64(doc.LexicalFingerprint)}
	if len(rs.values) > 0 {
		keys[2] = rs.h.Combine(rs.values)
	}
	rec := &packed.Sketch{Key: keys[equivalenceLevel(cfg.Equivalence)], Doc: id, Values: rs.values, Features: uint32(doc.ShingleCount)}
	if cfg.SuperShingle {
		rec.Supers = rs.supers
	}
	if cfg.Templates.On() {
		rec.Site = rs.site(row.URL)
	}
	return doc, rec, keys
}

// ExtractText is the text of an HTML document under an --extract mode:
// ExtractVisible for all visible text, anything else (the default) the
// main content.
func ExtractText(html, mode string) string {
	if mode == ExtractVisible {
		return htmltext.Extract(html)
	}
	return htmltext.ExtractMode(html, htmltext.Main)
}

// site returns the fingerprint of the site of url (never 0), or 0 for a
// page with no site.
func (rs *RowSketcher) site(url string) uint64 {
	host := sitetemplate.Site(url)
	if host == "" {
		return 0
	}
	return max(rs.h.String(host), 1)
}

// siteValueKey is the key that spreads the (site, value) counts over
// partitions: all pages' counts of one pair meet in one partition, while
// one big site's values spread over all of them.
func siteValueKey(site, value uint64) uint64 { return fingerprint.Mix(site ^ fingerprint.Mix(value)) }

// docRowBytes is about what a docs row holds in memory.
func docRowBytes(d *tables.Doc) int {
	n := 160 + len(d.SourceFile)
	for _, p := range []*string{d.ID, d.URL, d.Date, d.Reason} {
		if p != nil {
			n += len(*p)
		}
	}
	return n
}

// emitDocRows packs each doc partition's docs-table rows into one sealed
// element keyed by the partition.
func emitDocRows(ctx context.Context, byPartition [][]tables.Doc, emit func(int, []byte)) error {
	for p, rows := range byPartition {
		if len(rows) == 0 {
			continue
		}
		b, err := tables.Encode(rows)
		if err != nil {
			return err
		}
		b = packed.Seal(nil, b)
		emit(p, b)
		metaElements.Inc(ctx, 1)
		metaBytes.Inc(ctx, int64(len(b)))
	}
	return nil
}
