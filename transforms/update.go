package transforms

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/fingerprint"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/packed"
	"github.com/neardup/neardup/sketch"
)

func init() {
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), error](&indexIdentityFn{})
	register.DoFn3x1[context.Context, string, func(int, []byte), error](&readIndexPairsFn{})
	register.DoFn6x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), error](&mergeIndexPairsFn{})
	register.DoFn4x1[context.Context, []byte, func(*[]byte) bool, func(int, []byte), error](&recountPairsFn{})
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

// UpdatePairs is an update's phase 3. It takes the lists and recapped
// lists of ShingleMerge and the index's pairs shards, counts the pairs with
// a new document (PairCount), and completes them with the index's pairs
// (IndexPairs). It returns PCollection<KV<int, []byte>> of packed.Pair
// batches per pair partition, as PairCount returns them, for Cluster.
//
// MOD_m and MinHash estimates need only counts, so a stored pair that
// shares a shingle the update made too common loses its count of such
// shingles. Broder's MIN_s numerator depends on the ranks of every shared
// shingle, so such pairs are counted again over all their shingles: the
// index documents in a recapped list are few (at most
// Config.MaxShingleDocs per newly common shingle), and phase 3 also
// expands the pairs of two of them.
func UpdatePairs(s beam.Scope, lists, recapped beam.PCollection, pairShards []string, cfg Config) beam.PCollection {
	s = s.Scope("UpdatePairs")
	var counted beam.PCollection
	if cfg.Sketch.Kind == sketch.Min {
		triplets := beam.ParDo(s, &recountPairsFn{expandPairsFn: expandPairsFn{Cfg: cfg}}, lists, beam.SideInput{Input: recapped})
		counted = beam.ParDo(s, &mergePairsFn{Cfg: cfg}, beam.GroupByKey(s, triplets))
	} else {
		counted = PairCount(s, lists, cfg)
	}
	whole := cfg
	whole.FirstNewDoc = 0
	uncounts := PairCount(s, recapped, whole)
	return IndexPairs(s, counted, uncounts, pairShards, cfg)
}

// recountPairsFn is expandPairsFn that also expands the pairs of two index
// documents found in the recapped lists (its side input).
type recountPairsFn struct {
	expandPairsFn
	recount map[uint64]bool
}

// StartBundle and FinishBundle are bundleOut's, with the side input Beam
// requires them to declare.
func (f *recountPairsFn) StartBundle(ctx context.Context, _ func(*[]byte) bool, emit func(int, []byte)) {
	f.bundleOut.StartBundle(ctx, emit)
}

func (f *recountPairsFn) FinishBundle(ctx context.Context, _ func(*[]byte) bool, emit func(int, []byte)) {
	f.bundleOut.FinishBundle(ctx, emit)
}

func (f *recountPairsFn) ProcessElement(ctx context.Context, batch []byte, recapped func(*[]byte) bool, emit func(int, []byte)) error {
	if f.recount == nil {
		// The side input is the same for every element: read it once.
		f.recount = map[uint64]bool{}
		var b []byte
		for recapped(&b) {
			lists, err := packed.AppendPostings(nil, b)
			if err != nil {
				return err
			}
			for _, p := range lists {
				f.recount[p.Doc] = true
			}
		}
	}
	return f.expand(ctx, batch, f.recount, emit)
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
		p := packed.Pair{A: a, B: b, Count: uint32(r.Shared), SizeA: uint32(r.SketchSizeA), SizeB: uint32(r.SketchSizeB)}
		if f.Cfg.Sketch.Kind == sketch.Min {
			// Estimate's division, undone: exact for these small integers.
			union := min(f.Cfg.Sketch.N, int(p.SizeA)+int(p.SizeB)-int(p.Count))
			p.MinShared = uint32(math.Round(r.Resemblance * float64(union)))
		}
		out.add(int(packed.PairHash(a, b)%uint64(parts)), p)
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
	// For MIN_s, the pairs of two index documents in all were counted
	// again (UpdatePairs); they replace the stored pairs that lost a
	// shingle, and only those.
	recounted := map[[2]uint64]packed.Pair{}
	if f.Cfg.Sketch.Kind == sketch.Min {
		kept := all[:0]
		for _, p := range all {
			if p.B < f.Cfg.FirstNewDoc {
				recounted[[2]uint64{p.A, p.B}] = p
			} else {
				kept = append(kept, p)
			}
		}
		all = kept
	}
	for _, p := range old {
		key := [2]uint64{p.A, p.B}
		n := less[key]
		if n > p.Count {
			return fmt.Errorf("the index's pair (%d, %d) shares %d shingles, and %d of them are now too common: the index's sketches and pairs disagree", p.A, p.B, p.Count, n)
		}
		if n > 0 && f.Cfg.Sketch.Kind == sketch.Min {
			r, ok := recounted[key]
			if r.Count != p.Count-n {
				return fmt.Errorf("the index's pair (%d, %d) shares %d shingles, %d of them now too common, and %d when counted again: the index's sketches and pairs disagree", p.A, p.B, p.Count, n, r.Count)
			}
			if ok {
				all = append(all, r)
			}
			continue
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
