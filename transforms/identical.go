package transforms

import (
	"context"
	"math"
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
	register.DoFn7x1[context.Context, int, func(*[]byte) bool, func(int, []byte), func(int, []byte), func(int, []byte), func(string, int64), error](&identicalFn{})
	register.Iter1[[]byte]()
}

// Identical is Broder's identical-document shortcut. It takes the sketches
// of Sketch, groups documents by the fingerprint that decides identity (the
// raw content; with --equivalence=lexical the canonical token stream; with
// shingle the sketch, falling back to the token stream for documents with
// an empty sketch, which are not all alike) and keeps the lowest doc ID of
// each group as its representative. It returns postings,
// PCollection<KV<int, []byte>> of the representatives' packed.Posting
// batches keyed by shingle partition (the input of phase 2, as cand's mode
// and sketch have them; in super-shingle mode their super-shingles
// instead); copies, PCollection<KV<int, []byte>> of packed.Edge batches
// (Copy set) joining each skipped copy to its representative, keyed by the
// representative's doc partition; and reps, PCollection<KV<int, []byte>>
// of the representatives' packed.Sketch batches keyed by doc partition:
// for the super-shingles' sketch join, the sketches table and each
// cluster's resemblances to its kept document. In an update, the
// representatives below firstNewDoc are the index's (see IndexKeys): they
// only gather their new copies.
func Identical(s beam.Scope, sketches beam.PCollection, cand Candidates, firstNewDoc uint64, place Placement) (postings, copies, reps beam.PCollection) {
	s = s.Scope("Identical")
	grouped := beam.GroupByKey(s, sketches)
	outs := beam.ParDoN(s, &identicalFn{Candidates: cand, FirstNewDoc: firstNewDoc, Partitions: place.Partitions}, grouped)
	writeTallies(s, "identical", place.TempDir, outs[3])
	return outs[0], outs[1], outs[2]
}

type identicalFn struct {
	Candidates  Candidates
	FirstNewDoc uint64
	Partitions  int
	// The batchers of the current bundle (see batcher on why per bundle).
	postings, copies, repSketches *batcher
}

func (f *identicalFn) StartBundle(ctx context.Context, emitPostings, emitCopies, emitReps func(int, []byte), tally func(string, int64)) {
	f.postings, f.copies, f.repSketches = nil, nil, nil // a retried bundle starts afresh
}

func (f *identicalFn) FinishBundle(ctx context.Context, emitPostings, emitCopies, emitReps func(int, []byte), tally func(string, int64)) {
	finishBatcher(&f.postings, ctx, emitPostings)
	finishBatcher(&f.copies, ctx, emitCopies)
	finishBatcher(&f.repSketches, ctx, emitReps)
}

func (f *identicalFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emitPostings, emitCopies, emitReps func(int, []byte), tally func(string, int64)) error {
	defer identicalTime.done(ctx, time.Now())
	sorted := packed.NewSketchSorter()
	if err := sortBatches(batches, packed.AppendSketches, 0, sorted); err != nil {
		return err
	}
	postings := bundleBatcher(&f.postings, ctx, "postings", f.Partitions, emitPostings)
	copies := bundleBatcher(&f.copies, ctx, "copies", f.Partitions, emitCopies)
	repSketches := bundleBatcher(&f.repSketches, ctx, "rep_sketches", f.Partitions, emitReps)
	var n identicalCounts
	for all := sorted.Next(); all != nil; all = sorted.Next() {
		f.group(all, postings, copies, repSketches, &n)
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

// group gathers the identical documents of one key range of sorted
// sketches: each key's first document is its representative, whose
// sketch and postings go on, and the others its copies.
func (f *identicalFn) group(all []packed.Sketch, postings, copies, repSketches *batcher, n *identicalCounts) {
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].Key == all[i].Key {
			j++
		}
		rep := all[i]
		n.reps++
		// In an update, an index representative (IndexKeys) has its
		// sketch and postings in the index's tables: it only gathers
		// its new copies.
		if old := f.FirstNewDoc > 0 && rep.Doc < f.FirstNewDoc; !old {
			repSketches.add(packed.Partition(rep.Doc, f.Partitions), packed.Sketch{Key: rep.Key, Doc: rep.Doc, Values: rep.Values})
			f.addPostings(postings, rep)
		}
		if j-i > 1 {
			n.groups++
			n.skipped += int64(j - i - 1)
			for _, c := range all[i+1 : j] {
				copies.add(packed.Partition(rep.Doc, f.Partitions), packed.Edge{A: rep.Doc, B: c.Doc, Resemblance: 1, Rank: c.Rank, Copy: true})
			}
		}
		i = j
	}
}

// addPostings adds a representative's postings (in super-shingle mode its
// super-shingles) to the batcher.
func (f *identicalFn) addPostings(postings *batcher, rep packed.Sketch) {
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
