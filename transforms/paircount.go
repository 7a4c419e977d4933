package transforms

import (
	"context"
	"math/bits"
	"time"
	"unsafe"

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
		register.Function4x0(fn.StartBundle)
		register.Function6x1(fn.ProcessElement)
		register.Function4x1(fn.FinishBundle)
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
//
// A pair counted on a list over the cap (anchored, ListCap.AnchorPairs)
// has its count completed from the two documents' sketches, reps (the
// representatives' packed.Sketch batches by doc partition, as Identical
// returns them), as super-shingle candidates are (SuperShingles).
func PairCount(s beam.Scope, lists Waves, reps beam.PCollection, link Linking, firstNewDoc uint64, place Placement) beam.PCollection {
	s = s.Scope("PairCount")
	triplets := eachWave(lists, func(l beam.PCollection) beam.PCollection {
		return beam.ParDo(s, &expandPairsFn{Linking: link, FirstNewDoc: firstNewDoc, Partitions: place.Partitions}, l)
	})
	return countPairs(s, triplets, reps, link, place)
}

// countPairs merges triplets (mergePairs) and completes the anchored
// pairs' counts from reps (completePairs).
func countPairs(s beam.Scope, triplets Waves, reps beam.PCollection, link Linking, place Placement) beam.PCollection {
	counted, anchored := mergePairs(s, triplets, link, place)
	if link.AnchorDocs == 0 {
		return counted // none is anchored
	}
	return beam.Flatten(s, counted, completePairs(s, anchored, reps, link.Sketch, place))
}

// completePairs counts the values each anchored pair's sketches share
// (attachSketchAFn, estimateCandidatesFn): the pairs come out as
// mergePairs' do.
func completePairs(s beam.Scope, anchored, reps beam.PCollection, sk sketch.Spec, place Placement) beam.PCollection {
	s = s.Scope("CompleteAnchored")
	withA := beam.ParDo(s, &attachSketchAFn{Partitions: place.Partitions, Anchored: true}, beam.CoGroupByKey(s, reps, anchored))
	return beam.ParDo(s, &estimateCandidatesFn{Sketch: sk, TempDir: place.TempDir, Anchored: true, Partitions: place.Partitions}, beam.CoGroupByKey(s, reps, withA))
}

// mergePairs groups triplets by pair partition and sums them (mergePairsFn),
// in place.Waves waves: the triplets are the pair-heavy runs' biggest
// shuffle. The merged pairs come out whole, and apart from them the
// anchored ones (anchoredBit), plain packed.Pair records by the doc
// partition of A, for completePairs.
func mergePairs(s beam.Scope, triplets Waves, link Linking, place Placement) (counted, anchored beam.PCollection) {
	outs := groupInWaves(s, triplets, place.Waves, func(s beam.Scope, grouped, after beam.PCollection) []beam.PCollection {
		c, a := beam.ParDo2(s, &mergePairsFn{Sketch: link.Sketch, Lanes: place.Lanes, TempDir: place.TempDir, Partitions: place.Partitions}, grouped, beam.SideInput{Input: after})
		return []beam.PCollection{c, a}
	})
	return outs[0].flatten(s), outs[1].flatten(s)
}

type expandPairsFn struct {
	Linking     Linking // which pairs may link
	FirstNewDoc uint64
	// Uncount: the lists are an update's recapped ones (ShingleMerge),
	// all the index's, and each of their pairs loses a shingle: counted
	// once whatever the cap, never anchored.
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
		count := uint32(1)
		add := func(a, b packed.Posting) {
			if !f.Linking.sizesMayLink(a.Size, b.Size) || !f.Linking.prefixesMayLink(a, b) {
				skipped++
				return
			}
			p := int(packed.PairHash(a.Doc, b.Doc) % uint64(parts))
			byPart[p] = append(byPart[p], packed.Pair{A: a.Doc, B: b.Doc, Count: count,
				SizeA: a.Size, SizeB: b.Size, RankA: a.Rank, RankB: b.Rank})
			n++
		}
		switch {
		case f.Uncount:
			// A list of the index's documents the update pushed over
			// the cap: every pair loses this shingle, or under
			// --anchor-docs is counted again (UpdatePairs).
			for x := range docs {
				for y := x + 1; y < len(docs); y++ {
					add(docs[x], docs[y])
				}
			}
		case f.Linking.Over(len(docs)):
			// Marked: a pair counted on some of the lists it shares
			// and not others (its anchors differ between them) has
			// its count completed from the sketches (PairCount).
			count |= anchoredBit
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

// anchoredBit marks the count of a pair counted on an anchored list
// (ListCap.AnchorPairs): its count is then completed from the two
// documents' sketches, as a pair's anchors may differ from one list to
// the next, and the lists count it on some of the values it shares and
// not on others. Counts never reach it: a sketch has fewer values.
const anchoredBit = 1 << 31

// addCounts sums two counts, either of which may be marked anchored.
func addCounts(a, b uint32) uint32 {
	return (a&^anchoredBit + b&^anchoredBit) | (a|b)&anchoredBit
}

// sumCounts sums the counts of equal (A, B) in pairs sorted by
// packed.ComparePairs, in place.
func sumCounts(pairs []packed.Pair) []packed.Pair {
	out := pairs[:0]
	for _, p := range pairs {
		if n := len(out); n > 0 && out[n-1].A == p.A && out[n-1].B == p.B {
			out[n-1].Count = addCounts(out[n-1].Count, p.Count)
			continue
		}
		out = append(out, p)
	}
	return out
}

type mergePairsFn struct {
	Sketch     sketch.Spec // MIN_s pairs are merged by their shared shingles' ranks
	Lanes      int
	TempDir    string // where its count goes (writeKeyTally)
	Partitions int    // the doc partitions the anchored pairs go to
	lanes      lanes[[2]func(int, []byte)]
	anchored   *batcher // the anchored pairs', kept for the bundle (see batcher)
	sideRead   bool     // the bundle has measured its side input
}

func (f *mergePairsFn) StartBundle(ctx context.Context, _ func(*int) bool, emit, emitAnchored func(int, []byte)) {
	f.lanes.reset()
	f.anchored = nil
	f.sideRead = false
}

func (f *mergePairsFn) FinishBundle(ctx context.Context, _ func(*int) bool, emit, emitAnchored func(int, []byte)) error {
	if err := f.lanes.finish(ctx, [2]func(int, []byte){emit, emitAnchored}); err != nil {
		return err
	}
	finishBatcher(&f.anchored, ctx, emitAnchored)
	return nil
}

// ProcessElement merges one partition; after is groupInWaves' (empty).
func (f *mergePairsFn) ProcessElement(ctx context.Context, part int, batches func(*[]byte) bool, after func(*int) bool, emit, emitAnchored func(int, []byte)) error {
	waveSideInput(ctx, "merge_pairs", &f.sideRead, after)
	g := measureGroup(ctx, "merge_pairs")
	defer g.done()
	batches = g.iter(batches)
	n := hold(f.Lanes, &batches)
	return f.lanes.timed(ctx, n, [2]func(int, []byte){emit, emitAnchored}, phase3Time, func(ctx context.Context) (laneOut[[2]func(int, []byte)], error) {
		out, n, anchored, err := f.merge(batches)
		if err == nil {
			// The count the summary prints, as data: a runner's
			// attempted metrics count a retried bundle's pairs twice.
			// The anchored pairs are counted where they are completed.
			err = writeKeyTally(ctx, f.TempDir, "paircount", part, map[string]int64{"pairs": n})
		}
		return func(ctx context.Context, emit [2]func(int, []byte)) error {
			pairsCounted.Inc(ctx, n)
			emitPairBatches(ctx, part, out, emit[0])
			b := bundleBatcher(&f.anchored, ctx, "anchored_pairs", f.Partitions, emit[1])
			for _, p := range anchored {
				b.add(packed.Partition(p.A, f.Partitions), p)
			}
			return nil
		}, err
	})
}

// merge sums one pair partition's counts per pair, and returns them
// packed, and how many pairs; and apart, the anchored ones, their counts
// to be completed.
//
// A partition's triplets are held as they came, sealed (a tenth of their
// size or less), and decoded and sorted a range of their pair hash at a
// time (mergePasses), so that the records decoded at once stay within
// mergePassBudget whatever the group's size: on the 1 GB skewed input
// (BENCHMARKS.md, issue 55) a partition's 35 MB of sealed triplets decode
// to 6.6 million records, 265 MB, and two lanes' decoded groups were what
// took a run under a 2 GiB cap past it. Each pass's pairs follow the last
// one's in ComparePairs order, so the output is the same as one pass's.
func (f *mergePairsFn) merge(batches func(*[]byte) bool) ([]byte, int64, []packed.Pair, error) {
	held, err := holdSealed(batches)
	if err != nil {
		return nil, 0, nil, err
	}
	passes, err := mergePasses(held)
	if err != nil {
		return nil, 0, nil, err
	}
	var out []byte
	var n int64
	var anchored []packed.Pair
	for pass := range passes {
		sorted := packed.NewPairSorter()
		inPass := func(p *packed.Pair) bool { return keyPass(packed.PairHash(p.A, p.B), passes) == pass }
		if err := sortHeld(held, packed.AppendPackedPairs, inPass, sorted); err != nil {
			return nil, 0, nil, err
		}
		out, n, anchored = f.mergeSorted(sorted, out, n, anchored)
	}
	return out, n, anchored, nil
}

// mergePassBudget bounds the bytes of records one pass of merge decodes.
var mergePassBudget = 128 << 20

// mergePasses is how many passes merge makes over held: enough that each
// pass's share of the records, counted from the batches' heads, fits
// mergePassBudget. A group of up to mergePassBudget/64 sealed bytes takes
// one pass without being counted: triplets seal to about 6 bytes of the
// 40 a record takes (467 MB for 72.8 million on the skewed input), so it
// would take one pass anyway, and a group that opened to more would only
// be merged in one pass, as every group was before.
func mergePasses(held [][]byte) (int, error) {
	sealed := 0
	for _, b := range held {
		sealed += len(b)
	}
	if sealed <= mergePassBudget/64 {
		return 1, nil
	}
	records := 0
	var buf []byte
	for _, b := range held {
		var err error
		if buf, err = packed.Open(buf[:0], b); err != nil {
			return 0, err
		}
		n, err := packed.PackedPairsLen(buf)
		if err != nil {
			return 0, err
		}
		records += n
	}
	need := records * int(unsafe.Sizeof(packed.Pair{}))
	return max(1, (need+mergePassBudget-1)/mergePassBudget), nil
}

// keyPass is the pass of passes that takes a record of uniform 64-bit key:
// contiguous key ranges, in key order.
func keyPass(key uint64, passes int) int {
	hi, _ := bits.Mul64(key, uint64(passes))
	return int(hi)
}

// mergeSorted sums the counts of sorted's pairs, appending them packed to
// out (n of them) and the anchored ones to anchored.
func (f *mergePairsFn) mergeSorted(sorted *packed.RangeSorter[packed.Pair], out []byte, n int64, anchored []packed.Pair) ([]byte, int64, []packed.Pair) {
	var ranks [][2]uint16
	for all := sorted.Next(); all != nil; all = sorted.Next() {
		if f.Sketch.Kind != sketch.Min {
			for _, p := range sumCounts(all) {
				if p.Count&anchoredBit != 0 {
					anchored = append(anchored, packed.Pair{A: p.A, B: p.B, Count: 1})
					continue
				}
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
			marked := false
			for _, p := range all[i:j] {
				ranks = append(ranks, [2]uint16{p.RankA, p.RankB})
				marked = marked || p.Count&anchoredBit != 0
			}
			p := all[i]
			i = j
			if marked {
				anchored = append(anchored, packed.Pair{A: p.A, B: p.B, Count: 1})
				continue
			}
			p.Count = uint32(len(ranks))
			p.MinShared = uint32(sketch.MinSharedInUnion(ranks, f.Sketch.N))
			p.RankA, p.RankB = 0, 0
			out = p.Append(out)
			n++
		}
	}
	return out, n, anchored
}
