package transforms

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

var (
	identicalGroups  = beam.NewCounter(Namespace, "identical_groups")
	identicalSkipped = beam.NewCounter(Namespace, "identical_skipped")
	representatives  = beam.NewCounter(Namespace, "representatives")
	identicalTime    = newPhaseTimer("identical")
)

func init() {
	{
		fn := &identicalFn{}
		register.Function4x0(fn.StartBundle)
		register.Function6x1(fn.ProcessElement)
		register.Function4x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &representativesFn{}
		register.Function3x0(fn.StartBundle)
		register.Function6x1(fn.ProcessElement)
		register.Function3x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	register.Iter1[[]byte]()
}

// Identical is Broder's identical-document shortcut. It takes a document's
// sketch in the two streams Sketch (or SiteTemplates) gives: keys,
// packed.Sketch batches of the fingerprint that decides identity (the raw
// content; with --equivalence=lexical the canonical token stream; with
// shingle the sketch, falling back to the token stream for documents with
// an empty sketch, which are not all alike), doc ID and rank, keyed by the
// fingerprint's partition; and bodies, the whole packed.Sketch records keyed
// by doc partition. It groups the keys, keeps the lowest doc ID of each
// group as its representative and sends the verdict on the others to
// their bodies' partitions, where the representatives' bodies go on: so
// a sketch's values cross one shuffle.
//
// It returns postings, PCollection<KV<int, []byte>> of the
// representatives' packed.Posting batches keyed by shingle partition (the
// input of phase 2, as cand's mode and sketch have them; in super-shingle
// mode their super-shingles instead); copies, PCollection<KV<int, []byte>>
// of packed.Edge batches (Copy set) joining each skipped copy to its
// representative, keyed by the representative's doc partition; and reps,
// PCollection<KV<int, []byte>> of the representatives' packed.Sketch
// records by doc partition, for the super-shingles' sketch join, the
// sketches table and each cluster's resemblances to its kept document:
// parked under place.TempDir, one file per partition, each element naming
// its partition's file (readSketches reads them either way; without a
// TempDir, in tests, sealed batches). In an update, keys also holds the
// index's representatives (IndexKeys) without bodies: their sketches and
// postings are in the index's tables, and they only gather their new
// copies.
func Identical(s beam.Scope, keys, bodies beam.PCollection, cand Candidates, place Placement) (postings, copies, reps beam.PCollection) {
	s = s.Scope("Identical")
	outs := beam.ParDoN(s, &identicalFn{Partitions: place.Partitions}, beam.GroupByKey(s, keys))
	writeTallies(s, "identical", place.TempDir, outs[2])
	copies, skipped := outs[0], outs[1]
	postings, reps = beam.ParDo2(s, &representativesFn{Candidates: cand, Partitions: place.Partitions, TempDir: place.TempDir},
		beam.CoGroupByKey(s, bodies, skipped))
	return postings, copies, reps
}

type identicalFn struct {
	Partitions int
	// The batchers of the current bundle (see batcher on why per bundle).
	copies, skipped *batcher
}

func (f *identicalFn) StartBundle(ctx context.Context, emitCopies, emitSkipped func(int, []byte), tally func(string, int64)) {
	f.copies, f.skipped = nil, nil // a retried bundle starts afresh
}

func (f *identicalFn) FinishBundle(ctx context.Context, emitCopies, emitSkipped func(int, []byte), tally func(string, int64)) {
	finishBatcher(&f.copies, ctx, emitCopies)
	finishBatcher(&f.skipped, ctx, emitSkipped)
}

func (f *identicalFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emitCopies, emitSkipped func(int, []byte), tally func(string, int64)) error {
	g := measureGroup(ctx, "identical")
	defer g.done()
	batches = g.iter(batches)
	defer identicalTime.done(ctx, time.Now())
	sorted := packed.NewSketchSorter()
	if err := sortBatches(batches, packed.AppendSketches, 0, sorted); err != nil {
		return err
	}
	copies := bundleBatcher(&f.copies, ctx, "copies", f.Partitions, emitCopies)
	skipped := bundleBatcher(&f.skipped, ctx, "skipped", f.Partitions, emitSkipped)
	var n identicalCounts
	for all := sorted.Next(); all != nil; all = sorted.Next() {
		f.group(all, copies, skipped, &n)
	}
	identicalGroups.Inc(ctx, n.groups)
	identicalSkipped.Inc(ctx, n.skipped)
	representatives.Inc(ctx, n.reps)
	// Also as data: the manifest's figures must not depend on the
	// runner's metrics, which Prism can drop (see writeTallies).
	tally("identical_groups", n.groups)
	tally("identical_skipped", n.skipped)
	tally("representatives", n.reps)
	return nil
}

// identicalCounts are the counts of Identical: groups of identical
// documents, the copies skipped, and the representatives.
type identicalCounts struct{ groups, skipped, reps int64 }

// group gathers the identical documents of one key range of sorted keys:
// each key's first document is its representative and the others its
// copies, each sent as an edge to its representative's partition (for
// phase 4) and to its own (where its body is dropped).
func (f *identicalFn) group(all []packed.Sketch, copies, skipped *batcher, n *identicalCounts) {
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].Key == all[i].Key {
			j++
		}
		rep := all[i]
		n.reps++
		if j-i > 1 {
			n.groups++
			n.skipped += int64(j - i - 1)
			for _, c := range all[i+1 : j] {
				e := packed.Edge{A: rep.Doc, B: c.Doc, Resemblance: 1, Rank: c.Rank, Copy: true}
				copies.add(packed.Partition(rep.Doc, f.Partitions), e)
				skipped.add(packed.Partition(c.Doc, f.Partitions), e)
			}
		}
		i = j
	}
}

// representativesFn is Identical's second half: on one doc partition it
// drops the bodies of the copies and sends the representatives' postings
// to phase 2 and their sketches to reps.
type representativesFn struct {
	Candidates Candidates
	Partitions int
	TempDir    string   // where reps are parked ("": sent as batches)
	postings   *batcher // the bundle's (see batcher)
}

func (f *representativesFn) StartBundle(ctx context.Context, emitPostings, emitReps func(int, []byte)) {
	f.postings = nil // a retried bundle starts afresh
}

func (f *representativesFn) FinishBundle(ctx context.Context, emitPostings, emitReps func(int, []byte)) {
	finishBatcher(&f.postings, ctx, emitPostings)
}

func (f *representativesFn) ProcessElement(ctx context.Context, part int, bodiesIt, skippedIt func(*[]byte) bool, emitPostings, emitReps func(int, []byte)) error {
	g := measureGroup(ctx, "representatives")
	defer g.done()
	bodiesIt, skippedIt = g.iter(bodiesIt), g.iter(skippedIt)
	defer identicalTime.done(ctx, time.Now())
	skipped, err := decodeBatches(skippedIt, packed.AppendEdges)
	if err != nil {
		return err
	}
	isCopy := make(map[uint64]bool, len(skipped))
	for _, e := range skipped {
		isCopy[e.B] = true
	}
	bodies, err := decodeBatches(bodiesIt, packed.AppendSketches)
	if err != nil {
		return err
	}
	reps := slices.DeleteFunc(bodies, func(b packed.Sketch) bool { return isCopy[b.Doc] })
	slices.SortFunc(reps, func(x, y packed.Sketch) int { return cmp.Compare(x.Doc, y.Doc) })
	postings := bundleBatcher(&f.postings, ctx, "postings", f.Partitions, emitPostings)
	for i, rep := range reps {
		f.addPostings(postings, rep)
		reps[i] = packed.Sketch{Key: rep.Key, Doc: rep.Doc, Values: rep.Values} // what the sketches table and phase 4 read
	}
	return sendSketches(ctx, f.TempDir, "sketches", part, reps, emitReps)
}

// addPostings adds a representative's postings (in super-shingle mode its
// super-shingles) to the batcher.
func (f *representativesFn) addPostings(postings *batcher, rep packed.Sketch) {
	if f.Candidates.Mode == settings.ModeSuperShingle {
		for _, v := range rep.Supers {
			postings.add(packed.Partition(v, f.Partitions), packed.Posting{Shingle: v, Doc: rep.Doc, Size: uint32(len(rep.Values))})
		}
		return
	}
	rankSketch := f.Candidates.Sketch.Kind == sketch.Min || f.Candidates.Mode == settings.ModeExact
	for r, v := range rep.Values {
		p := packed.Posting{Shingle: v, Doc: rep.Doc, Size: uint32(len(rep.Values))}
		if f.Candidates.Mode == settings.ModeExact {
			// The whole set's size, and the position in its prefix
			// (capped: a smaller position only loosens the positional
			// filter), for phase 3's length and positional filters.
			p.Size = rep.Features
		}
		if rankSketch {
			p.Rank = uint16(min(r, math.MaxUint16))
		}
		postings.add(packed.Partition(v, f.Partitions), p)
	}
}
