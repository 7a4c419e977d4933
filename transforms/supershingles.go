package transforms

import (
	"cmp"
	"context"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

var superTime = newPhaseTimer("supershingles")

func init() {
	{
		fn := &superCandidatesFn{}
		register.Function2x0(fn.StartBundle)
		register.Function4x1(fn.ProcessElement)
		register.Function2x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &attachSketchAFn{}
		register.Function2x0(fn.StartBundle)
		register.Function5x1(fn.ProcessElement)
		register.Function2x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &estimateCandidatesFn{}
		register.Function5x1(fn.ProcessElement)
		registerDoFn(fn)
	}
}

// SuperShingles is Broder's super-shingle shortcut, in place of phases 2
// and 3. It takes the super-shingle postings and the representatives'
// sketches of Identical (super-shingle mode). Documents sharing a
// super-shingle are candidate pairs; a super-shingle of more than
// cand.MaxShingleDocs documents is dropped or anchored, like a common
// shingle (ListCap). Each
// candidate pair is then joined with both documents' sketches (two
// shuffles of candidates, never of all pairs) so that phase 4 can report,
// and with --verify=sketch require, the estimate on cand.Sketch. It
// returns PCollection<KV<int, []byte>> of packed.Pair batches in the form
// PairCount returns them, keyed by one of place.Partitions, and tallies
// how many under place.TempDir.
func SuperShingles(s beam.Scope, postings, reps beam.PCollection, cand Candidates, place Placement) beam.PCollection {
	s = s.Scope("SuperShingles")
	partitions := place.Partitions
	candidates := beam.ParDo(s, &superCandidatesFn{Candidates: cand, Partitions: partitions}, beam.GroupByKey(s, postings))
	withA := beam.ParDo(s, &attachSketchAFn{Partitions: partitions}, beam.CoGroupByKey(s, reps, candidates))
	return beam.ParDo(s, &estimateCandidatesFn{Sketch: cand.Sketch, TempDir: place.TempDir}, beam.CoGroupByKey(s, reps, withA))
}

type superCandidatesFn struct {
	Candidates Candidates
	Partitions int
	bundleOut  // its batcher, kept for the bundle (see batcher)
}

// ProcessElement lists the candidate pairs of one super-shingle partition,
// keyed by the doc partition of their first document.
func (f *superCandidatesFn) ProcessElement(ctx context.Context, _ int, batches func(*[]byte) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "super_candidates")
	defer g.done()
	batches = g.iter(batches)
	defer superTime.done(ctx, time.Now())
	sorted := packed.NewPostingSorter() // super-shingles are fingerprints too
	if err := sortBatches(batches, packed.AppendPostings, packed.PostingSize, sorted); err != nil {
		return err
	}
	parts := f.Partitions
	byPart := make([][]packed.Pair, parts)
	var distinct, shared, dropped, anchored, n int64
	for all := sorted.Next(); all != nil; all = sorted.Next() {
		for i := 0; i < len(all); {
			j := i + 1
			for j < len(all) && all[j].Shingle == all[i].Shingle {
				j++
			}
			distinct++
			switch docs := all[i:j]; {
			case len(docs) > f.Candidates.maxShingleDocs() && f.Candidates.AnchorDocs == 0:
				dropped++
			case len(docs) >= 2:
				shared++
				if len(docs) > f.Candidates.maxShingleDocs() {
					anchored++
				}
				candidate := func(x, y int) {
					p := packed.Partition(docs[x].Doc, parts)
					byPart[p] = append(byPart[p], packed.Pair{A: docs[x].Doc, B: docs[y].Doc, Count: 1})
					n++
				}
				if f.Candidates.Over(len(docs)) {
					f.Candidates.AnchorPairs(len(docs), func(i int) uint32 { return docs[i].Size }, candidate)
					break
				}
				for x := range docs {
					for y := x + 1; y < len(docs); y++ {
						candidate(x, y)
					}
				}
			}
			i = j
		}
	}
	out := f.bundle(ctx, "candidates", parts, emit)
	for p, pairs := range byPart {
		for _, pr := range mergeCounts(pairs) {
			out.add(p, pr)
		}
	}
	distinctShingles.Inc(ctx, distinct)
	sharedShingles.Inc(ctx, shared)
	commonDropped.Inc(ctx, dropped)
	commonAnchored.Inc(ctx, anchored)
	pairTriplets.Inc(ctx, n)
	return nil
}

// sketchesOf reads a partition's representative sketches by doc.
func sketchesOf(ctx context.Context, reps func(*[]byte) bool) (map[uint64][]uint64, error) {
	sks, err := readSketches(ctx, reps)
	if err != nil {
		return nil, err
	}
	m := make(map[uint64][]uint64, len(sks))
	for _, sk := range sks {
		m[sk.Doc] = sk.Values
	}
	return m, nil
}

type attachSketchAFn struct {
	Partitions int
	Anchored   bool // phase 3's anchored pairs (completePairs), timed as phase 3
	bundleOut       // its batcher, kept for the bundle (see batcher)
}

// ProcessElement attaches the first document's sketch to each candidate
// pair of one doc partition and re-keys it by the second document's.
func (f *attachSketchAFn) ProcessElement(ctx context.Context, _ int, reps, candidates func(*[]byte) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "attach_sketch_a")
	defer g.done()
	reps, candidates = g.iter(reps), g.iter(candidates)
	defer candidatesTime(f.Anchored).done(ctx, time.Now())
	pairs, err := decodeBatches(candidates, packed.AppendPairs)
	if err != nil || len(pairs) == 0 {
		return err // no candidates: the partition's sketches are not read
	}
	sketches, err := sketchesOf(ctx, reps)
	if err != nil {
		return err
	}
	out := f.bundle(ctx, "candidates_with_sketch", f.Partitions, emit)
	for _, p := range mergeCounts(pairs) {
		out.add(packed.Partition(p.B, f.Partitions), packed.Sketch{Key: p.A, Doc: p.B, Values: sketches[p.A]})
	}
	return nil
}

// candidatesTime is the phase candidates are estimated in: phase 3 for
// its anchored pairs, the super-shingles' own for theirs.
func candidatesTime(anchored bool) phaseTimer {
	if anchored {
		return phase3Time
	}
	return superTime
}

type estimateCandidatesFn struct {
	Sketch  sketch.Spec
	TempDir string // where its count goes (writeKeyTally)
	// Anchored: the candidates are phase 3's anchored pairs
	// (completePairs), not super-shingles', and go out by pair
	// partition (of Partitions), as mergePairsFn's do.
	Anchored   bool
	Partitions int
}

// ProcessElement counts the sketch values each candidate pair of one doc
// partition shares, as phase 3 would have.
func (f *estimateCandidatesFn) ProcessElement(ctx context.Context, part int, reps, withA func(*[]byte) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "estimate_candidates")
	defer g.done()
	reps, withA = g.iter(reps), g.iter(withA)
	defer candidatesTime(f.Anchored).done(ctx, time.Now())
	recs, err := decodeBatches(withA, packed.AppendSketches)
	if err != nil {
		return err
	}
	var sketches map[uint64][]uint64
	if len(recs) > 0 { // else the partition's sketches are not read
		if sketches, err = sketchesOf(ctx, reps); err != nil {
			return err
		}
	}
	slices.SortFunc(recs, func(x, y packed.Sketch) int { return cmp.Or(cmp.Compare(x.Key, y.Key), cmp.Compare(x.Doc, y.Doc)) })
	var out []byte
	var byPart map[int][]byte
	if f.Anchored {
		byPart = map[int][]byte{}
	}
	for _, r := range recs {
		a, bv := r.Values, sketches[r.Doc]
		p := packed.Pair{A: r.Key, B: r.Doc, Count: uint32(sketch.IntersectCount(a, bv)), SizeA: uint32(len(a)), SizeB: uint32(len(bv))}
		if f.Sketch.Kind == sketch.Min {
			union := min(f.Sketch.N, len(a)+len(bv)-int(p.Count))
			p.MinShared = uint32(math.Round(sketch.MinResemblance(a, bv, f.Sketch.N) * float64(union)))
		}
		if f.Anchored {
			k := int(packed.PairHash(p.A, p.B) % uint64(f.Partitions))
			byPart[k] = p.Append(byPart[k])
			continue
		}
		out = p.Append(out)
	}
	pairsCounted.Inc(ctx, int64(len(recs)))
	step := "supercount"
	if f.Anchored {
		step = "anchorcount"
	}
	if err := writeKeyTally(ctx, f.TempDir, step, part, map[string]int64{"pairs": int64(len(recs))}); err != nil {
		return err
	}
	if f.Anchored {
		for _, k := range slices.Sorted(maps.Keys(byPart)) {
			emitPairBatches(ctx, k, byPart[k], emit)
		}
		return nil
	}
	emitPairBatches(ctx, part, out, emit)
	return nil
}
