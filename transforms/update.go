package transforms

import (
	"context"
	"fmt"
	"math"
	"path"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

func init() {
	register.DoFn7x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), func(int, []byte), error](&mergeIndexPairsFn{})
	register.DoFn3x1[context.Context, string, func(int, []byte), error](&indexKeysFn{})
	register.DoFn4x1[context.Context, []byte, func(*[]byte) bool, func(int, []byte), error](&recountPairsFn{})
}

// IndexKeys gives an update's identical shortcut the index's
// representatives. It takes the index's sketches shards, which hold every
// representative with its identity key (the content or lexical
// fingerprint, or the fingerprint of its sketch), reads those two columns
// only, and returns PCollection<KV<int, []byte>> of packed.Sketch batches
// without values, keyed by the partition of the key, beside which Sketch
// sends the new documents. Their doc IDs are all below the new documents',
// so each stays its group's representative, and a new identical document
// becomes its copy; their postings and sketches stay in the index's tables
// (ShingleMerge and Components read them there).
func IndexKeys(s beam.Scope, sketchShards []string, cfg Config) beam.PCollection {
	s = s.Scope("IndexKeys")
	return beam.ParDo(s, &indexKeysFn{Cfg: cfg}, beam.Reshuffle(s, beam.CreateList(s, sketchShards)))
}

type indexKeysFn struct {
	Cfg       Config
	bundleOut // its batcher, kept for the bundle (see batcher)
}

func (f *indexKeysFn) ProcessElement(ctx context.Context, shard string, emit func(int, []byte)) error {
	defer outputTime.done(ctx, time.Now())
	rows, err := tables.ReadIdentityKeys(ctx, shard)
	if err != nil {
		return err
	}
	out := f.bundle(ctx, "index_keys", f.Cfg.Partitions, emit)
	for _, r := range rows {
		out.add(packed.Partition(uint64(r.IdentityKey), f.Cfg.Partitions), packed.Sketch{Key: uint64(r.IdentityKey), Doc: uint64(r.DocID)})
	}
	return nil
}

// UpdatePairs is an update's phase 3. It takes the lists and recapped
// lists of ShingleMerge, counts the pairs with
// a new document (PairCount), and completes them with the index's pairs
// (IndexPairs). It returns IndexPairs' pairs and carried links.
//
// MOD_m and MinHash estimates need only counts, so a stored pair that
// shares a shingle the update made too common loses its count of such
// shingles. Broder's MIN_s numerator depends on the ranks of every shared
// shingle, so such pairs are counted again over all their shingles: the
// index documents in a recapped list are few (at most
// Config.MaxShingleDocs per newly common shingle), and phase 3 also
// expands the pairs of two of them.
func UpdatePairs(s beam.Scope, lists, recapped beam.PCollection, cfg Config) (pairs, carried beam.PCollection) {
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
	return IndexPairs(s, counted, uncounts, cfg)
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
// reads the index's pairs of each pair partition from its pairs shards
// (Config.Index). Each stored pair of two index documents loses its
// uncounted shingles (and goes if none is left), exactly as a full run
// would have counted it; the index's pairs among its own documents are
// never counted again. It returns pairs, PCollection<KV<int, []byte>> of
// packed.Pair batches per pair partition, as PairCount returns them, for
// Cluster; and carried, the links of the index's pairs shards carried
// over as they are (Config.CarryPairs: under the index's policy, a shard
// cut by this run's partition count none of whose pairs lost a shingle
// keeps every row, and its contained shard too), packed.Edge batches
// keyed by doc partition as Cluster's links.
func IndexPairs(s beam.Scope, pairs, uncounts beam.PCollection, cfg Config) (merged, carried beam.PCollection) {
	s = s.Scope("IndexPairs")
	return beam.ParDo2(s, &mergeIndexPairsFn{Cfg: cfg}, beam.CoGroupByKey(s, pairs, uncounts, everyPartition(s, cfg)))
}

// indexPairs reads the index's stored pairs of shard sh that fall in
// pair partition part, as counted pairs.
func indexPairs(ctx context.Context, cfg Config, sh Shard, part int) ([]tables.Pair, []packed.Pair, error) {
	rows, err := readAligned(ctx, []Shard{sh}, part, cfg.Partitions, tables.ReadPairCounts, func(r *tables.Pair, n int) int {
		return int(packed.PairHash(uint64(r.DocA), uint64(r.DocB)) % uint64(n))
	})
	if err != nil {
		return nil, nil, err
	}
	pairs := make([]packed.Pair, len(rows))
	for i, r := range rows {
		p := packed.Pair{A: uint64(r.DocA), B: uint64(r.DocB), Count: uint32(r.Shared), SizeA: uint32(r.SketchSizeA), SizeB: uint32(r.SketchSizeB)}
		if cfg.Sketch.Kind == sketch.Min {
			// Estimate's division, undone: exact for these small integers.
			union := min(cfg.Sketch.N, int(p.SizeA)+int(p.SizeB)-int(p.Count))
			p.MinShared = uint32(math.Round(r.Resemblance * float64(union)))
		}
		pairs[i] = p
	}
	return rows, pairs, nil
}

type mergeIndexPairsFn struct {
	Cfg   Config
	links *batcher // the carried links', kept for the bundle (see batcher)
	lanes lanes[[2]func(int, []byte)]
}

func (f *mergeIndexPairsFn) StartBundle(ctx context.Context, emit, emitLinks func(int, []byte)) {
	f.lanes.reset()
	f.links = nil
}

func (f *mergeIndexPairsFn) FinishBundle(ctx context.Context, emit, emitLinks func(int, []byte)) error {
	if err := f.lanes.finish(ctx, [2]func(int, []byte){emit, emitLinks}); err != nil {
		return err
	}
	finishBatcher(&f.links, ctx, emitLinks)
	return nil
}

// ProcessElement merges one pair partition: the new pairs as counted, the
// stored ones less their uncounted shingles, in packed.SortPairs order;
// and carries the stored shards that stay.
func (f *mergeIndexPairsFn) ProcessElement(ctx context.Context, part int, newIt, uncountIt, _ func(*[]byte) bool, emit, emitLinks func(int, []byte)) error {
	newIt, uncountIt = hold(newIt), hold(uncountIt)
	return f.lanes.timed(ctx, f.Cfg.Lanes, [2]func(int, []byte){emit, emitLinks}, phase3Time, func() (laneOut[[2]func(int, []byte)], error) {
		out, carried, err := f.merge(ctx, part, newIt, uncountIt)
		return func(ctx context.Context, emit [2]func(int, []byte)) error {
			if len(out) > 0 {
				emit[0](part, out)
			}
			links := bundleBatcher(&f.links, ctx, "links", f.Cfg.Partitions, emit[1])
			for _, c := range carried {
				for _, l := range c.links {
					links.add(packed.Partition(l.A, f.Cfg.Partitions), l)
				}
				containedWritten.Inc(ctx, c.contained)
				pairsLinked.Inc(ctx, int64(len(c.links)))
				pairsReported.Inc(ctx, c.rows)
				pairsWritten.Inc(ctx, c.rows)
			}
			return nil
		}, err
	})
}

// carriedShard is what a carried pairs shard adds to the run: its links,
// for phase 4, and its rows and contained rows, counted as estimateFn and
// writePairsFn would have.
type carriedShard struct {
	links           []packed.Edge
	rows, contained int64
}

// merge merges one pair partition (see ProcessElement) and returns its
// pairs packed, and the shards it carried.
func (f *mergeIndexPairsFn) merge(ctx context.Context, part int, newIt, uncountIt func(*[]byte) bool) ([]byte, []carriedShard, error) {
	var all, unc []packed.Pair
	var b []byte
	var err error
	for newIt(&b) {
		if all, err = packed.AppendPairs(all, b); err != nil {
			return nil, nil, err
		}
	}
	for uncountIt(&b) {
		if unc, err = packed.AppendPairs(unc, b); err != nil {
			return nil, nil, err
		}
	}
	less := make(map[[2]uint64]uint32, len(unc))
	for _, u := range unc {
		less[[2]uint64{u.A, u.B}] += u.Count
	}
	var old []packed.Pair
	var carried []carriedShard
	for _, sh := range f.Cfg.Index.Pairs {
		if part%sh.Of != sh.Part {
			continue
		}
		rows, pairs, err := indexPairs(ctx, f.Cfg, sh, part)
		if err != nil {
			return nil, nil, err
		}
		if f.Cfg.CarryPairs && sh.Of == f.Cfg.Partitions && !slices.ContainsFunc(pairs, func(p packed.Pair) bool { return less[[2]uint64{p.A, p.B}] > 0 }) {
			c, err := f.carry(ctx, sh, rows)
			if err != nil {
				return nil, nil, err
			}
			carried = append(carried, c)
			continue
		}
		old = append(old, pairs...)
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
			return nil, nil, fmt.Errorf("the index's pair (%d, %d) shares %d shingles, and %d of them are now too common: the index's sketches and pairs disagree", p.A, p.B, p.Count, n)
		}
		if n > 0 && f.Cfg.Sketch.Kind == sketch.Min {
			r, ok := recounted[key]
			if r.Count != p.Count-n {
				return nil, nil, fmt.Errorf("the index's pair (%d, %d) shares %d shingles, %d of them now too common, and %d when counted again: the index's sketches and pairs disagree", p.A, p.B, p.Count, n, r.Count)
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
	packed.SortPairs(all) // as mergePairsFn leaves a full run's
	var out []byte
	for _, p := range all {
		out = p.Append(out)
	}
	return out, carried, nil
}

// carry copies the stored pairs shard sh, all of whose rows stay, and its
// contained shard, into the output as they are, and returns the links
// among its rows, for phase 4, and its counts.
func (f *mergeIndexPairsFn) carry(ctx context.Context, sh Shard, rows []tables.Pair) (carriedShard, error) {
	var c carriedShard
	name := sh.CarriedName
	if err := store.Copy(ctx, sh.Path, store.Join(f.Cfg.TempDir, tables.PairsTable, name)); err != nil {
		return c, err
	}
	for _, cs := range f.Cfg.Index.Contained {
		if path.Base(cs.Path) != path.Base(sh.Path) {
			continue
		}
		n, err := tables.NumRows(ctx, cs.Path)
		if err != nil {
			return c, err
		}
		if n == 0 {
			break // the empty shard of a table without rows
		}
		if err := store.Copy(ctx, cs.Path, store.Join(f.Cfg.TempDir, tables.ContainedTable, name)); err != nil {
			return c, err
		}
		c.contained = n
	}
	for _, r := range rows {
		if r.Linked {
			c.links = append(c.links, packed.Edge{A: uint64(r.DocA), B: uint64(r.DocB), Resemblance: r.Resemblance})
		}
	}
	c.rows = int64(len(rows))
	return c, nil
}
