package transforms

import (
	"context"
	"fmt"
	"path"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

func init() {
	{
		fn := &mergeIndexPairsFn{}
		register.Function3x0(fn.StartBundle)
		register.Function7x1(fn.ProcessElement)
		register.Function3x1(fn.FinishBundle)
		registerDoFn(fn)
	}
	register.Function1x2(recountDocs)
	{
		fn := &recountPairsFn{}
		register.Function3x0(fn.StartBundle)
		register.Function4x1(fn.ProcessElement)
		register.Function3x0(fn.FinishBundle)
		registerDoFn(fn)
	}
}

// IndexKeys gives an update's identical shortcut the index's
// representatives. It takes the index's sketches shards, which hold every
// representative with its identity key (the content or lexical
// fingerprint, or the fingerprint of its sketch), reads those two columns
// only, and returns PCollection<KV<int, []byte>> of packed.Sketch batches
// without values, keyed by the partition of the key, beside which Sketch
// sends the new documents (of partitions). Their doc IDs are all below the
// new documents', so each stays its group's representative, and a new
// identical document becomes its copy; their postings and sketches stay in
// the index's tables (ShingleMerge and Components read them there).
func IndexKeys(s beam.Scope, sketchShards []string, partitions int) beam.PCollection {
	s = s.Scope("IndexKeys")
	return beam.ParDo(s, &readSketchesFn{Partitions: partitions, KeysOnly: true}, spread(s, sketchShards))
}

// UpdatePairs is an update's phase 3. It takes the lists and recapped
// lists of ShingleMerge, counts the pairs with a new document (PairCount
// under link, from up.FirstNewDoc), and completes them with the index's
// pairs (IndexPairs, carrying them under carry). It returns IndexPairs'
// pairs and carried links.
//
// MOD_m and MinHash estimates need only counts, so a stored pair that
// shares a shingle the update made too common loses its count of such
// shingles. Broder's MIN_s numerator depends on the ranks of every shared
// shingle, and an anchored pair's count is completed from its sketches
// (PairCount), so under MIN_s or --anchor-docs such pairs are counted
// again over all their shingles: the index documents in a recapped list
// are few (at most --max-shingle-docs per newly common shingle), and
// phase 3 also expands the pairs of two of them. reps are the sketches
// the anchored pairs are completed from: the new representatives' and
// the index's.
func UpdatePairs(s beam.Scope, lists Waves, recapped, reps beam.PCollection, link Linking, carry bool, up Update, place Placement) (pairs, carried beam.PCollection) {
	s = s.Scope("UpdatePairs")
	expand := expandPairsFn{Linking: link, FirstNewDoc: up.FirstNewDoc, Partitions: place.Partitions}
	var recount beam.PCollection
	if recounts(link) {
		recount = beam.ParDo(s, recountDocs, recapped)
	}
	triplets := eachWave(lists, func(l beam.PCollection) beam.PCollection {
		if !recounts(link) {
			return beam.ParDo(s, &expand, l)
		}
		return beam.ParDo(s, &recountPairsFn{expandPairsFn: expand}, l, beam.SideInput{Input: recount})
	})
	counted := countPairs(s, triplets, reps, link, place)
	// The recapped lists are all the index's: each of their pairs loses
	// a shingle (under recounts, a mark that it was counted again).
	uncounts, _ := mergePairs(s, eachWave(Waves{recapped}, func(l beam.PCollection) beam.PCollection {
		return beam.ParDo(s, &expandPairsFn{Linking: link, Partitions: place.Partitions, Uncount: true}, l)
	}), link, place)
	return IndexPairs(s, counted, uncounts, link, carry, up, place)
}

// recounts reports whether an update counts again the index's pairs
// that lost a shingle (UpdatePairs) rather than uncounting it.
func recounts(link Linking) bool { return link.Sketch.Kind == sketch.Min || link.AnchorDocs > 0 }

// recountDocs is the documents of a batch of recapped lists, each once,
// as a packed.DocSet: what recountPairsFn's side input, which every
// worker reads whole, needs of them. The lists' postings took 22 bytes
// each (21 KB a recapped shingle); a document in a doc set takes 2-3.
func recountDocs(batch []byte) ([]byte, error) {
	lists, err := packed.AppendPostings(nil, batch)
	if err != nil {
		return nil, err
	}
	docs := make([]uint64, len(lists))
	for i, p := range lists {
		docs[i] = p.Doc
	}
	return packed.AppendDocSet(nil, docs), nil
}

// recountPairsFn is expandPairsFn that also expands the pairs of two index
// documents found in the recapped lists (its side input, their documents
// as recountDocs packs them).
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
		var n int64
		var docs []uint64
		for recapped(&b) {
			n += int64(len(b))
			var err error
			if docs, err = packed.AppendDocs(docs[:0], b); err != nil {
				return err
			}
			for _, d := range docs {
				f.recount[d] = true
			}
		}
		measureSideInput(ctx, "recount_pairs", n)
	}
	return f.expand(ctx, batch, f.recount, emit)
}

// IndexPairs completes an update's counted pairs with the index's. It
// takes pairs, the new-new and new-old pairs of PairCount; uncounts, the
// index's pairs counted again over the shingles the update pushed over
// --max-shingle-docs (PairCount of ShingleMerge's recapped lists); and
// reads the index's pairs of each pair partition from its pairs shards
// (up.Index). Each stored pair of two index documents loses its
// uncounted shingles (and goes if none is left), exactly as a full run
// would have counted it on sketches sk; the index's pairs among its own
// documents are never counted again. It returns pairs, PCollection<KV<int,
// []byte>> of packed.Pair batches by pair partition, as PairCount returns
// them, for Cluster; and carried, the links of the index's pairs shards
// carried over as they are under place.TempDir (carry, under the index's
// policy: a shard cut by this run's partition count none of whose pairs
// lost a shingle keeps every row, and its contained shard too),
// packed.Edge batches keyed by doc partition as Cluster's links.
func IndexPairs(s beam.Scope, pairs, uncounts beam.PCollection, link Linking, carry bool, up Update, place Placement) (merged, carried beam.PCollection) {
	s = s.Scope("IndexPairs")
	return beam.ParDo2(s, &mergeIndexPairsFn{Sketch: link.Sketch, Recounted: recounts(link), Anchored: link.AnchorDocs > 0, CarryPairs: carry, FirstNewDoc: up.FirstNewDoc, Pairs: up.Index.Pairs, Contained: up.Index.Contained,
		Partitions: place.Partitions, TempDir: place.TempDir, Write: place.Write, Lanes: place.Lanes}, beam.CoGroupByKey(s, pairs, uncounts, everyPartition(s, place.Partitions)))
}

type mergeIndexPairsFn struct {
	Sketch sketch.Spec
	// Recounted: pairs holds the index's pairs of two documents of the
	// recapped lists counted again (recounts), which replace the stored
	// ones. Anchored: they were counted under --anchor-docs, their counts
	// completed from the sketches where anchored.
	Recounted, Anchored bool
	CarryPairs          bool
	FirstNewDoc         uint64
	// Pairs and Contained are the index's pairs and contained shards.
	Pairs, Contained []Shard
	Partitions       int
	TempDir          string
	Write            tables.Selection // of pairs and contained, the tables it copies
	Lanes            int
	links            *batcher // the carried links', kept for the bundle (see batcher)
	lanes            lanes[[2]func(int, []byte)]
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
	g := measureGroup(ctx, "merge_index_pairs")
	defer g.done()
	newIt, uncountIt = g.iter(newIt), g.iter(uncountIt)
	n := hold(f.Lanes, &newIt, &uncountIt)
	return f.lanes.timed(ctx, n, [2]func(int, []byte){emit, emitLinks}, phase3Time, func(ctx context.Context) (laneOut[[2]func(int, []byte)], error) {
		out, carried, err := f.merge(ctx, part, newIt, uncountIt)
		return func(ctx context.Context, emit [2]func(int, []byte)) error {
			emitPairBatches(ctx, part, out, emit[0])
			links := bundleBatcher(&f.links, ctx, "links", f.Partitions, emit[1])
			var nLinks, rows, contained int64
			for _, c := range carried {
				for _, l := range c.links {
					links.add(packed.Partition(l.A, f.Partitions), l)
				}
				nLinks, rows, contained = nLinks+int64(len(c.links)), rows+c.rows, contained+c.contained
			}
			written := rows
			if !f.Write.Has(tables.PairsTable) {
				written = 0
			}
			containedWritten.Inc(ctx, contained)
			pairsWritten.Inc(ctx, written)
			counts := countLinks(ctx, nLinks, 0, rows)
			counts["pairs_written"], counts["contained_written"] = written, contained
			return writeKeyTally(ctx, f.TempDir, "carried", part, counts)
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
	all, err := decodeBatches(newIt, packed.AppendPackedPairs)
	if err != nil {
		return nil, nil, err
	}
	unc, err := decodeBatches(uncountIt, packed.AppendPackedPairs)
	if err != nil {
		return nil, nil, err
	}
	less := make(map[[2]uint64]uint32, len(unc))
	for _, u := range unc {
		less[[2]uint64{u.A, u.B}] += u.Count
	}
	// Under recounts, the pairs of two index documents in all were
	// counted again (UpdatePairs) as a full run counts them; they replace
	// the stored pairs, and a stored pair that lost a shingle and was not
	// counted again is no longer counted at all.
	recounted := map[[2]uint64]packed.Pair{}
	if f.Recounted {
		kept := all[:0]
		for _, p := range all {
			if p.B < f.FirstNewDoc {
				recounted[[2]uint64{p.A, p.B}] = p
			} else {
				kept = append(kept, p)
			}
		}
		all = kept
	}
	var old []packed.Pair
	var carried []carriedShard
	for _, sh := range f.Pairs {
		if part%sh.Of != sh.Part {
			continue
		}
		rows, pairs, err := readIndexPairs(ctx, sh, part, f.Partitions, f.Sketch)
		if err != nil {
			return nil, nil, err
		}
		changed := func(p packed.Pair) bool {
			_, again := recounted[[2]uint64{p.A, p.B}]
			return less[[2]uint64{p.A, p.B}] > 0 || again && f.Anchored
		}
		if f.CarryPairs && sh.Of == f.Partitions && !slices.ContainsFunc(pairs, changed) {
			c, err := f.carry(ctx, sh, rows)
			if err != nil {
				return nil, nil, err
			}
			carried = append(carried, c)
			continue
		}
		old = append(old, pairs...)
	}
	for _, p := range old {
		key := [2]uint64{p.A, p.B}
		n := less[key]
		if n > p.Count {
			return nil, nil, fmt.Errorf("the index's pair (%d, %d) shares %d shingles, and %d of them are now too common: the index's sketches and pairs disagree", p.A, p.B, p.Count, n)
		}
		if f.Recounted {
			r, ok := recounted[key]
			switch {
			case f.Anchored && ok: // counted again as a full run counts it
				all = append(all, r)
				delete(recounted, key)
			case n == 0:
				all = append(all, p)
			case f.Anchored: // lost a shingle and not counted again: no longer counted
			case r.Count != p.Count-n:
				// MIN_s without anchors: counted again, the
				// stored count less the shingles lost.
				return nil, nil, fmt.Errorf("the index's pair (%d, %d) shares %d shingles, %d of them now too common, and %d when counted again: the index's sketches and pairs disagree", p.A, p.B, p.Count, n, r.Count)
			case ok:
				all = append(all, r)
			}
			continue
		}
		if p.Count -= n; p.Count > 0 {
			all = append(all, p)
		}
	}
	if f.Anchored {
		// Counted again, with no stored pair: a full run counts it too.
		for _, r := range recounted {
			all = append(all, r)
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
// contained shard, into the output as they are (those of the two the run
// writes), and returns the links among its rows, for phase 4, and its
// counts.
func (f *mergeIndexPairsFn) carry(ctx context.Context, sh Shard, rows []tables.Pair) (carriedShard, error) {
	var c carriedShard
	name := sh.CarriedName
	if f.Write.Has(tables.PairsTable) {
		if err := output.CarryShard(ctx, sh.Path, f.TempDir, tables.PairsTable, name); err != nil {
			return c, err
		}
	}
	if f.Write.Has(tables.ContainedTable) {
		for _, cs := range f.Contained {
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
			if err := output.CarryShard(ctx, cs.Path, f.TempDir, tables.ContainedTable, name); err != nil {
				return c, err
			}
			c.contained = n
		}
	}
	for _, r := range rows {
		if r.Linked {
			c.links = append(c.links, packed.Edge{A: uint64(r.DocA), B: uint64(r.DocB), Resemblance: r.LinkResemblance()})
		}
	}
	c.rows = int64(len(rows))
	return c, nil
}
