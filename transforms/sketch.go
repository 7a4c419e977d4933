package transforms

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/canon"
	"github.com/neardup/neardup/fingerprint"
	"github.com/neardup/neardup/htmltext"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/packed"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sketch"
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
	register.DoFn5x1[context.Context, crawl.Split, func(int, []byte), func(int, []byte), func(int, []byte), error](&sketchFn{})
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
// fingerprints of all three equivalence levels for EquivalenceCounts.
func Sketch(s beam.Scope, splits beam.PCollection, cfg Config) (meta, sketches, equiv beam.PCollection) {
	s = s.Scope("Sketch")
	return beam.ParDo3(s, &sketchFn{Cfg: cfg}, splits)
}

type sketchFn struct {
	Cfg Config
	h   fingerprint.Hasher
}

func (f *sketchFn) Setup() { f.h = fingerprint.New(f.Cfg.Seed) }

func (f *sketchFn) ProcessElement(ctx context.Context, sp crawl.Split, emitMeta, emitSketch, emitEquiv func(int, []byte)) error {
	defer phase1Time.done(ctx, time.Now())
	parts := f.Cfg.Partitions
	metas := make([][]tables.Doc, parts)
	sketches := newBatcher(ctx, "sketches", parts, emitSketch)
	equiv := newBatcher(ctx, "equivalence_keys", len(Equivalences)*parts, emitEquiv)
	var nOK, nEmpty, nShort, nRejected, nShingles, nValues int64
	var scratch sketchScratch
	next := sp.FirstRow // the first row not yet read
	keep := func(doc tables.Doc) {
		p := packed.Partition(uint64(doc.DocID), parts)
		metas[p] = append(metas[p], doc)
	}
	err := crawl.ReadSplit(ctx, sp, f.Cfg.Columns, func(row crawl.Row) error {
		next = row.Index + 1
		doc, rec, keys := f.sketchRow(sp, row, &scratch)
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
		if rec != nil {
			for level, k := range keys {
				equiv.add(level*parts+packed.Partition(k, parts), packedKey(k))
			}
			sketches.add(packed.Partition(rec.Key, parts), *rec)
		}
		keep(doc)
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
			keep(tables.Doc{DocID: int64(DocID(sp.FileIndex, r)), SourceFile: sp.Path, SourceRow: r,
				Status: tables.StatusRejected, Reason: optional("row group unreadable: " + err.Error())})
			nRejected++
		}
	}
	sketches.flush()
	equiv.flush()
	if err := emitDocRows(ctx, metas, emitMeta); err != nil {
		return err
	}
	docsRead.Inc(ctx, sp.NumRows)
	docsOK.Inc(ctx, nOK)
	docsEmpty.Inc(ctx, nEmpty)
	docsTooShort.Inc(ctx, nShort)
	docsRejected.Inc(ctx, nRejected)
	shinglesSeen.Inc(ctx, nShingles)
	sketchValues.Inc(ctx, nValues)
	return nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// sketchScratch holds the buffers sketchRow reuses from row to row.
type sketchScratch struct {
	tokens                           []string
	shingles, values, minima, supers []uint64
}

// sketchRow is phase 1 for one row: its docs-table row and, for documents
// that go on to the identical shortcut, their sketch record and the
// fingerprints of the three equivalence levels.
func (f *sketchFn) sketchRow(sp crawl.Split, row crawl.Row, sc *sketchScratch) (tables.Doc, *packed.Sketch, [3]uint64) {
	id := DocID(sp.FileIndex, row.Index)
	doc := tables.Doc{
		DocID:      int64(id),
		ID:         optional(row.ID),
		URL:        optional(row.URL),
		Date:       optional(row.Date),
		SourceFile: sp.Path,
		SourceRow:  row.Index,
	}
	doc.ContentFingerprint = int64(f.h.String(row.Content))
	if f.Cfg.MaxDocBytes > 0 && len(row.Content) > f.Cfg.MaxDocBytes {
		doc.Status = tables.StatusRejected
		doc.Reason = optional(fmt.Sprintf("%s of %d bytes exceeds --max-doc-bytes %d", f.Cfg.Columns.ContentColumn(), len(row.Content), f.Cfg.MaxDocBytes))
		return doc, nil, [3]uint64{}
	}
	text := row.Content
	if f.Cfg.Columns.HTML != "" {
		text = htmltext.Extract(text)
	}
	sc.tokens = canon.AppendTokens(sc.tokens[:0], text)
	doc.TokenCount = int64(len(sc.tokens))
	doc.LexicalFingerprint = int64(f.h.Tokens(sc.tokens))
	switch {
	case row.Null:
		doc.Status, doc.Reason = tables.StatusEmpty, optional("null "+f.Cfg.Columns.ContentColumn())
		return doc, nil, [3]uint64{}
	case len(sc.tokens) == 0:
		doc.Status, doc.Reason = tables.StatusEmpty, optional("no tokens")
		return doc, nil, [3]uint64{}
	case len(sc.tokens) < f.Cfg.ShingleWords:
		doc.Status = tables.StatusTooShort
		doc.Reason = optional(fmt.Sprintf("%d tokens, fewer than the shingle size %d", len(sc.tokens), f.Cfg.ShingleWords))
		sc.values, sc.supers = sc.values[:0], sc.supers[:0]
	default:
		doc.Status = tables.StatusOK
		sc.shingles = shingle.Fingerprints(sc.shingles[:0], f.h, sc.tokens, f.Cfg.ShingleWords)
		switch {
		case f.Cfg.SuperShingle && f.Cfg.Sketch.Kind == sketch.MinHash:
			sc.minima = sketch.MinHashValues(sc.minima[:0], sc.shingles, f.Cfg.Sketch.N)
			sc.values = sketch.TagMinHash(sc.values[:0], sc.minima)
			sc.supers = supershingle.Bands(sc.supers[:0], f.h, sc.minima, f.Cfg.Bands)
		case f.Cfg.SuperShingle:
			sc.values = f.Cfg.Sketch.Select(sc.values[:0], sc.shingles)
			sc.supers = supershingle.Broder(sc.supers[:0], f.h, sc.values, f.Cfg.SuperSize)
		default:
			sc.values = f.Cfg.Sketch.Select(sc.values[:0], sc.shingles)
			sc.supers = sc.supers[:0]
		}
		doc.ShingleCount = int64(len(sc.shingles))
		doc.SketchSize = int32(len(sc.values))
	}
	// Shingle equivalence falls back to the token stream for documents
	// with an empty sketch, which are not all alike.
	keys := [3]uint64{uint64(doc.ContentFingerprint), uint64(doc.LexicalFingerprint), uint64(doc.LexicalFingerprint)}
	if len(sc.values) > 0 {
		keys[2] = f.h.Combine(sc.values)
	}
	rec := &packed.Sketch{Key: keys[equivalenceLevel(f.Cfg.Equivalence)], Doc: id, Values: sc.values}
	if f.Cfg.SuperShingle {
		rec.Supers = sc.supers
	}
	return doc, rec, keys
}

// emitDocRows packs each doc partition's docs-table rows into one element
// keyed by the partition.
func emitDocRows(ctx context.Context, byPartition [][]tables.Doc, emit func(int, []byte)) error {
	for p, rows := range byPartition {
		if len(rows) == 0 {
			continue
		}
		b, err := tables.Encode(rows)
		if err != nil {
			return err
		}
		emit(p, b)
		metaElements.Inc(ctx, 1)
		metaBytes.Inc(ctx, int64(len(b)))
	}
	return nil
}
