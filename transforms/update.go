package transforms

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/fingerprint"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/packed"
)

func init() {
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), error](&indexIdentityFn{})
	register.DoFn3x1[context.Context, string, func(int, []byte), error](&readIndexPairsFn{})
	register.DoFn6x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), error](&mergeIndexPairsFn{})
}

// IndexIdentity gives an update's identical shortcut the index's
// representatives. It takes their identity keys (ReadDocs' keys) and the
// index's sketches shards and returns PCollection<KV<int, []byte>> of packed.Sketch batches keyed by
// the partition of the fingerprint that decides identity, one per
// representative (its key from the docs table: the content or lexical
// fingerprint, or the fingerprint of its sketch), as Sketch returns them
// for new documents. Their doc IDs are all below the new documents', so
// each stays its group's representative, and a new identical document
// becomes its copy.
func IndexIdentity(s beam.Scope, keys beam.PCollection, sketchShards []string, cfg Config) beam.PCollection {
	s = s.Scope("IndexIdentity")
	sketches := ReadSketches(s, sketchShards, cfg)
	return beam.ParDo(s, &indexIdentityFn{Cfg: cfg}, beam.CoGroupByKey(s, keys, sketches))
}

// addRepKey sends a representative of the index, with its identity key,
// to its doc partition (a <doc, key> arc), for IndexIdentity; other
// documents send nothing.
func addRepKey(out *batcher, cfg Config, d tables.Doc) {
	if d.IdenticalTo != nil || (d.Status != tables.StatusOK && d.Status != tables.StatusTooShort) {
		return
	}
	key := uint64(d.ContentFingerprint)
	if cfg.Equivalence != IdenticalContent {
		// Lexical, and the shingle level's fallback for an empty sketch;
		// indexIdentityFn puts the sketch's in its place.
		key = uint64(d.LexicalFingerprint)
	}
	out.add(packed.Partition(uint64(d.DocID), cfg.Partitions), packed.Arc{U: uint64(d.DocID), V: key})
}

type indexIdentityFn struct {
	Cfg       Config
	bundleOut // its batcher, kept for the bundle (see batcher)
}

// ProcessElement joins the representatives of one doc partition with
// their sketches (a too-short document has none).
func (f *indexIdentityFn) ProcessElement(ctx context.Context, _ int, keysIt, sketchesIt func(*[]byte) bool, emit func(int, []byte)) error {
	keys, err := decodeBatches(keysIt, packed.AppendArcs)
	if err != nil {
		return err
	}
	sketches, err := decodeBatches(sketchesIt, packed.AppendSketches)
	if err != nil {
		return err
	}
	values := make(map[uint64][]uint64, len(sketches))
	for _, sk := range sketches {
		values[sk.Doc] = sk.Values
	}
	h := fingerprint.New(f.Cfg.Seed)
	out := f.bundle(ctx, "sketches", f.Cfg.Partitions, emit)
	for _, k := range keys {
		rec := packed.Sketch{Key: k.V, Doc: k.U, Values: values[k.U]}
		if f.Cfg.Equivalence == ShingleEquivalent && len(rec.Values) > 0 {
			rec.Key = h.Combine(rec.Values)
		}
		out.add(packed.Partition(rec.Key, f.Cfg.Partitions), rec)
	}
	return nil
}

// IndexPairs completes an update's counted pairs with the index's. It
// takes pairs, the new-new and new-old pairs of PairCount; uncounts, the
// index's pairs counted again over the shingles the update pushed over
// Config.MaxShingleDocs (PairCount of ShingleMerge's recapped lists); and
// the index's pairs shards. Each stored pair of two index documents loses
// its uncounted shingles (and goes if none is left), exactly as a full run
// would have counted it; the index's pairs among its own documents are
// never counted again. It returns PCollection<KV<int, []byte>> of
// packed.Pair batches per pair partition, as PairCount returns them, for
// Cluster.
func IndexPairs(s beam.Scope, pairs, uncounts beam.PCollection, pairShards []string, cfg Config) beam.PCollection {
	s = s.Scope("IndexPairs")
	old := beam.ParDo(s, &readIndexPairsFn{Cfg: cfg}, beam.Reshuffle(s, beam.CreateList(s, pairShards)))
	return beam.ParDo(s, &mergeIndexPairsFn{Cfg: cfg}, beam.CoGroupByKey(s, pairs, uncounts, old))
}

type readIndexPairsFn struct {
	Cfg       Config
	bundleOut // its batcher, kept for the bundle (see batcher)
}

// ProcessElement sends the rows of one stored pairs shard to their pair
// partitions as counted pairs.
func (f *readIndexPairsFn) ProcessElement(ctx context.Context, shard string, emit func(int, []byte)) error {
	rows, err := tables.Read[tables.Pair](ctx, shard)
	if err != nil {
		return err
	}
	parts := f.Cfg.Partitions
	out := f.bundle(ctx, "index_pairs", parts, emit)
	for _, r := range rows {
		a, b := uint64(r.DocA), uint64(r.DocB)
		out.add(int(packed.PairHash(a, b)%uint64(parts)), packed.Pair{A: a, B: b, Count: uint32(r.Shared),
			SizeA: uint32(r.SketchSizeA), SizeB: uint32(r.SketchSizeB)})
	}
	return nil
}

type mergeIndexPairsFn struct{ Cfg Config }

// ProcessElement merges one pair partition: the new pairs as counted, the
// stored ones less their uncounted shingles, sorted by (A, B).
func (f *mergeIndexPairsFn) ProcessElement(ctx context.Context, part int, newIt, uncountIt, oldIt func(*[]byte) bool, emit func(int, []byte)) error {
	defer phase3Time.done(ctx, time.Now())
	var all, unc []packed.Pair
	var b []byte
	var err error
	for newIt(&b) {
		if all, err = packed.AppendPairs(all, b); err != nil {
			return err
		}
	}
	for uncountIt(&b) {
		if unc, err = packed.AppendPairs(unc, b); err != nil {
			return err
		}
	}
	old, err := decodeBatches(oldIt, packed.AppendPairs)
	if err != nil {
		return err
	}
	less := make(map[[2]uint64]uint32, len(unc))
	for _, u := range unc {
		less[[2]uint64{u.A, u.B}] += u.Count
	}
	for _, p := range old {
		n := less[[2]uint64{p.A, p.B}]
		if n > p.Count {
			return fmt.Errorf("the index's pair (%d, %d) shares %d shingles, and %d of them are now too common: the index's sketches and pairs disagree", p.A, p.B, p.Count, n)
		}
		if p.Count -= n; p.Count > 0 {
			all = append(all, p)
		}
	}
	slices.SortFunc(all, func(x, y packed.Pair) int { return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B)) })
	var out []byte
	for _, p := range all {
		out = p.Append(out)
	}
	if len(out) > 0 {
		emit(part, out)
	}
	return nil
}
