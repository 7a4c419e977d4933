package transforms

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

var (
	pairTriplets    = beam.NewCounter(Namespace, "pair_triplets")
	tripletsSkipped = beam.NewCounter(Namespace, "pair_triplets_skipped")
	pairsCounted    = beam.NewCounter(Namespace, "pairs")
	phase3Time      = newPhaseTimer("phase3_pair_count")
)

func init() {
	{
		fn := &expandPairsFn{}
		register.Function2x0(fn.StartBundle)
		register.Function3x1(fn.ProcessElement)
		register.Function2x0(fn.FinishBundle)
		registerDoFn(fn)
	}
	{
		fn := &mergePairsFn{}
		register.Function3x0(fn.StartBundle)
		register.Function5x1(fn.ProcessElement)
		register.Function3x1(fn.FinishBundle)
		registerDoFn(fn)
	}
}

// PairCount is phase 3: <docA, docB, count of shared shingles>. It takes
// the shingle lists of ShingleMerge and expands each list into one triplet
// per pair of its documents (A < B), then sorts and merges the triplets by
// pair partition, summing the counts. It returns PCollection<KV<int,
// []byte>>: per pair partition, the merged packed.Pair records in batches
// of at most 1 MiB of them, packed and sealed (emitPairBatches), with Count the number of shared sketch shingles and, for MIN_s
// sketches (link.Sketch), MinShared the numerator of Broder's estimate.
// It skips the pairs that cannot link under link (see sizesMayLink and
// prefixesMayLink), and in an update those of two documents below
// firstNewDoc, which are the index's.
func PairCount(s beam.Scope, lists Waves, link Linking, firstNewDoc uint64, place Placement) beam.PCollection {
	s = s.Scope("PairCount")
	triplets := eachWave(lists, func(l beam.PCollection) beam.PCollection {
		return beam.ParDo(s, &expandPairsFn{Linking: link, FirstNewDoc: firstNewDoc, Partitions: place.Partitions}, l)
	})
	return mergePairs(s, triplets, link, place)
}

// mergePairs groups triplets by pair partition and sums them (mergePairsFn),
// in place.Waves waves: the triplets are the pair-heavy runs' biggest
// shuffle. The merged pairs come out whole.
func mergePairs(s beam.Scope, triplets Waves, link Linking, place Placement) beam.PCollection {
	return groupInWaves(s, triplets, place.Waves, func(s beam.Scope, grouped, after beam.PCollection) []beam.PCollection {
		return []beam.PCollection{beam.ParDo(s, &mergePairsFn{Sketch: link.Sketch, Lanes: place.Lanes, TempDir: place.TempDir}, grouped, beam.SideInput{Input: after})}
	})[0].flatten(s)
}

type expandPairsFn struct {
	Linking     Linking // which pairs may link
	FirstNewDoc uint64
	// Uncount: the lists are an update's recapped ones (ShingleMerge),
	// all the index's, and their pairs are those a full run would not
	// count: all but the anchored ones (ListCap.AnchorPairs), which are
	// all of them under --anchor-docs 0.
	Uncount    bool
	Partitions int
	bundleOut  // its batcher, kept for the bundle (see batcher)
}

func (f *expandPairsFn) ProcessElement(ctx context.Context, batch []byte, emit func(int, []byte)) error {
	return f.expand(ctx, batch, nil, emit)
}

// expand emits the triplets of one batch of lists. In an update
// (FirstNewDoc) it skips the pairs of two index documents unless
// both are in recount (nil: none).
func (f *expandPairsFn) expand(ctx context.Context, batch []byte, recount map[uint64]bool, emit func(int, []byte)) error {
	defer phase3Time.done(ctx, time.Now())
	lists, err := packed.AppendPostings(nil, batch)
	if err != nil {
		return err
	}
	parts := f.Partitions
	byPart := make([][]packed.Pair, parts)
	var n, skipped int64
	for i := 0; i < len(lists); {
		j := i + 1
		for j < len(lists) && lists[j].Shingle == lists[i].Shingle {
			j++
		}
		docs := lists[i:j] // sorted by doc, so a < b below
		first := f.FirstNewDoc
		add := func(a, b packed.Posting) {
			if !f.Linking.sizesMayLink(a.Size, b.Size) || !f.Linking.prefixesMayLink(a, b) {
				skipped++
				return
			}
			p := int(packed.PairHash(a.Doc, b.Doc) % uint64(parts))
			byPart[p] = append(byPart[p], packed.Pair{A: a.Doc, B: b.Doc, Count: 1,
				SizeA: a.Size, SizeB: b.Size, RankA: a.Rank, RankB: b.Rank})
			n++
		}
		switch {
		case f.Uncount:
			// A list of the index's documents the update pushed over
			// the cap: the pairs its anchors would not have counted.
			anchored := map[[2]int]bool{}
			if f.Linking.AnchorDocs > 0 {
				f.Linking.AnchorPairs(len(docs), func(i int) uint32 { return docs[i].Size }, func(x, y int) { anchored[[2]int{x, y}] = true })
			}
			for x := range docs {
				for y := x + 1; y < len(docs); y++ {
					if !anchored[[2]int{x, y}] {
						add(docs[x], docs[y])
					}
				}
			}
		case f.Linking.Over(len(docs)):
			f.Linking.AnchorPairs(len(docs), func(i int) uint32 { return docs[i].Size }, func(x, y int) {
				a, b := docs[x], docs[y]
				if first > 0 && b.Doc < first && !(recount[a.Doc] && recount[b.Doc]) {
					return // the index's pair, in its pairs table
				}
				add(a, b)
			})
		default:
			for x := range docs {
				y := x + 1
				if first > 0 && docs[x].Doc < first && !recount[docs[x].Doc] {
					// An update: the index's pairs among its own
					// documents are in its pairs table.
					for y < len(docs) && docs[y].Doc < first {
						y++
					}
				}
				for ; y < len(docs); y++ {
					if b := docs[y]; first > 0 && b.Doc < first && !recount[b.Doc] {
						continue
					}
					add(docs[x], docs[y])
				}
			}
		}
		i = j
	}
	pairTriplets.Inc(ctx, n)
	tripletsSkipped.Inc(ctx, skipped)
	// Summing here, before the shuffle, is the combiner of Broder's
	// merge: MOD_m needs only counts. MIN_s needs each shared shingle's
	// ranks, so its triplets travel as they are.
	combine := f.Linking.Sketch.Kind != sketch.Min
	out := f.bundle(ctx, "pairs", parts, emit)
	out.pack = packed.PackPairs // the largest shuffle of a run with many near-duplicates
	for p, pairs := range byPart {
		if combine {
			pairs = mergeCounts(pairs)
		}
		for _, pr := range pairs {
			out.add(p, pr)
		}
	}
	return nil
}

// mergeCounts sorts pairs (packed.SortPairs: equal pairs adjacent, in the
// order of their hash) and sums the counts of equal (A, B), in place.
func mergeCounts(pairs []packed.Pair) []packed.Pair {
	packed.SortPairs(pairs)
	return sumCounts(pairs)
}

// sumCounts sums the counts of equal (A, B) in pairs sorted by
// packed.ComparePairs, in place.
func sumCounts(pairs []packed.Pair) []packed.Pair {
	out := pairs[:0]
	for _, p := range pairs {
		if n := len(out); n > 0 && out[n-1].A == p.A && out[n-1].B == p.B {
			out[n-1].Count += p.Count
			continue
		}
		out = append(out, p)
	}
	return out
}

type mergePairsFn struct {
	Sketch  sketch.Spec // MIN_s pairs are merged by their shared shingles' ranks
	Lanes   int
	TempDir string // where its count goes (writeKeyTally)
	lanes   lanes[func(int, []byte)]
}

func (f *mergePairsFn) StartBundle(ctx context.Context, _ func(*int) bool, emit func(int, []byte)) {
	f.lanes.reset()
}

func (f *mergePairsFn) FinishBundle(ctx context.Context, _ func(*int) bool, emit func(int, []byte)) error {
	return f.lanes.finish(ctx, emit)
}

// ProcessElement merges one partition; after is groupInWaves' (unread).
func (f *mergePairsFn) ProcessElement(ctx context.Context, part int, batches func(*[]byte) bool, after func(*int) bool, emit func(int, []byte)) error {
	g := measureGroup(ctx, "merge_pairs")
	defer g.done()
	batches = g.iter(batches)
	n := hold(f.Lanes, &batches)
	return f.lanes.timed(ctx, n, emit, phase3Time, func() (laneOut[func(int, []byte)], error) {
		out, n, err := f.merge(batches)
		if err == nil {
			// The count the summary prints, as data: a runner's
			// attempted metrics count a retried bundle's pairs twice.
			err = writeKeyTally(ctx, f.TempDir, "paircount", part, map[string]int64{"pairs": n})
		}
		return func(ctx context.Context, emit func(int, []byte)) error {
			pairsCounted.Inc(ctx, n)
			emitPairBatches(ctx, part, out, emit)
			return nil
		}, err
	})
}

// merge sums one pair partition's counts per pair, and returns them
// packed, and how many pairs.
func (f *mergePairsFn) merge(batches func(*[]byte) bool) ([]byte, int64, error) {
	sorted := packed.NewPairSorter()
	if err := sortBatches(batches, packed.AppendPackedPairs, 0, sorted); err != nil {
		return nil, 0, err
	}
	var out []byte
	var n int64
	var ranks [][2]uint16
	for all := sorted.Next(); all != nil; all = sorted.Next() {
		if f.Sketch.Kind != sketch.Min {
			for _, p := range sumCounts(all) {
				out = p.Append(out)
				n++
			}
			continue
		}
		for i := 0; i < len(all); {
			j := i + 1
			for j < len(all) && all[j].A == all[i].A && all[j].B == all[i].B {
				j++
			}
			ranks = ranks[:0]
			for _, p := range all[i:j] {
				ranks = append(ranks, [2]uint16{p.RankA, p.RankB})
			}
			p := all[i]
			p.Count = uint32(j - i)
			p.MinShared = uint32(sketch.MinSharedInUnion(ranks, f.Sketch.N))
			p.RankA, p.RankB = 0, 0
			out = p.Append(out)
			n++
			i = j
		}
	}
	return out, n, nil
}
