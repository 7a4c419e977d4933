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
	var (
		tokens   []string
		shingles []uint64
		values   []uint64
		minima   []uint64
		supers   []uint64
	)
	var nOK, nEmpty, nShort, nShingles, nValues int64
	err := crawl.ReadSplit(ctx, sp, f.Cfg.Columns, func(row crawl.Row) error {
		id := DocID(sp.FileIndex, row.Index)
		doc := tables.Doc{
			DocID:      int64(id),
			ID:         optional(row.ID),
			URL:        optional(row.URL),
			Date:       optional(row.Date),
			SourceFile: sp.Path,
			SourceRow:  row.Index,
		}
		text := row.Content
		if f.Cfg.Columns.HTML != "" {
			text = htmltext.Extract(text)
		}
		doc.ContentFingerprint = int64(f.h.String(row.Content))
		tokens = canon.AppendTokens(tokens[:0], text)
		doc.TokenCount = int64(len(tokens))
		doc.LexicalFingerprint = int64(f.h.Tokens(tokens))
		switch {
		case row.Null:
			doc.Status, doc.Reason = tables.StatusEmpty, optional("null "+f.Cfg.Columns.ContentColumn())
			nEmpty++
		case len(tokens) == 0:
			doc.Status, doc.Reason = tables.StatusEmpty, optional("no tokens")
			nEmpty++
		case len(tokens) < f.Cfg.ShingleWords:
			doc.Status = tables.StatusTooShort
			doc.Reason = optional(fmt.Sprintf("%d tokens, fewer than the shingle size %d", len(tokens), f.Cfg.ShingleWords))
			nShort++
		default:
			doc.Status = tables.StatusOK
			nOK++
			shingles = shingle.Fingerprints(shingles[:0], f.h, tokens, f.Cfg.ShingleWords)
			switch {
			case f.Cfg.SuperShingle && f.Cfg.Sketch.Kind == sketch.MinHash:
				minima = sketch.MinHashValues(minima[:0], shingles, f.Cfg.Sketch.N)
				values = sketch.TagMinHash(values[:0], minima)
				supers = supershingle.Bands(supers[:0], f.h, minima, f.Cfg.Bands)
			case f.Cfg.SuperShingle:
				values = f.Cfg.Sketch.Select(values[:0], shingles)
				supers = supershingle.Broder(supers[:0], f.h, values, f.Cfg.SuperSize)
			default:
				values = f.Cfg.Sketch.Select(values[:0], shingles)
			}
			doc.ShingleCount = int64(len(shingles))
			doc.SketchSize = int32(len(values))
			nShingles += int64(len(shingles))
			nValues += int64(len(values))
		}
		if doc.Status == tables.StatusOK || doc.Status == tables.StatusTooShort {
			keys := [3]uint64{uint64(doc.ContentFingerprint), uint64(doc.LexicalFingerprint), uint64(doc.LexicalFingerprint)}
			if doc.Status == tables.StatusOK && len(values) > 0 {
				keys[2] = f.h.Combine(values)
			}
			for level, k := range keys {
				equiv.add(level*parts+packed.Partition(k, parts), packedKey(k))
			}
			key := keys[equivalenceLevel(f.Cfg.Equivalence)]
			rec := packed.Sketch{Key: key, Doc: id}
			if doc.Status == tables.StatusOK {
				rec.Values = values
				if f.Cfg.SuperShingle {
					rec.Supers = supers
				}
			}
			sketches.add(packed.Partition(key, parts), rec)
		}
		p := packed.Partition(id, parts)
		metas[p] = append(metas[p], doc)
		return nil
	})
	if err != nil {
		return err
	}
	sketches.flush()
	equiv.flush()
	for p, rows := range metas {
		if len(rows) == 0 {
			continue
		}
		b, err := tables.Encode(rows)
		if err != nil {
			return err
		}
		emitMeta(p, b)
		metaElements.Inc(ctx, 1)
		metaBytes.Inc(ctx, int64(len(b)))
	}
	docsRead.Inc(ctx, sp.NumRows)
	docsOK.Inc(ctx, nOK)
	docsEmpty.Inc(ctx, nEmpty)
	docsTooShort.Inc(ctx, nShort)
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
