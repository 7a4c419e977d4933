package transforms

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/shuffle/packed"
)

var (
	pairsVerified = beam.NewCounter(Namespace, "pairs_verified")
	pairsPruned   = beam.NewCounter(Namespace, "pairs_verify_pruned")
	verifyTime    = newPhaseTimer("verify")
)

func init() {
	register.DoFn4x1[context.Context, int, []byte, func(int, []byte), error](&routePairsFn{})
	register.DoFn5x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), error](&sendFeaturesFn{})
	register.DoFn6x1[context.Context, int, func(*[]byte) bool, func(*[]byte) bool, func(int, []byte), func(string, int64), error](&verifyPairsFn{})
}

// Verify checks every candidate pair on the two documents' whole feature
// sets (settings.Config.Verification), as clusters.VerifyPair does under
// pol: exactly, with ppjoin+'s verification (simjoin.Overlap, its suffix
// and positional filters), or through their Bloom filters (bloom.Compare),
// whichever features Sketch made. It takes the counted pairs of PairCount
// or SuperShingles, PCollection<KV<int, []byte>> by pair partition, and
// the features of Sketch by doc partition, and returns
// PCollection<KV<int, []byte>> of packed.Verified batches by pair
// partition, for Cluster.
//
// Only the candidates' documents travel: each pair tells its two
// documents' partitions which pair partitions want them, and each
// document's features go once to each such partition, however many of its
// pairs are there.
func Verify(s beam.Scope, pairs, features beam.PCollection, pol policy.Policy, place Placement) beam.PCollection {
	s = s.Scope("Verify")
	wanted := beam.ParDo(s, &routePairsFn{Partitions: place.Partitions}, pairs)
	sent := beam.ParDo(s, &sendFeaturesFn{Partitions: place.Partitions, Lanes: place.Lanes}, beam.CoGroupByKey(s, wanted, features))
	verified, tallies := beam.ParDo2(s, &verifyPairsFn{Policy: pol, Lanes: place.Lanes}, beam.CoGroupByKey(s, pairs, sent))
	writeTallies(s, "verify", place.TempDir, tallies)
	return verified
}

// routePairsFn sends, for every pair, <doc, pair partition> to the
// partition of each of its two documents.
type routePairsFn struct {
	Partitions int
	bundleOut  // its batcher, kept for the bundle
}

func (f *routePairsFn) ProcessElement(ctx context.Context, part int, batch []byte, emit func(int, []byte)) error {
	pairs, err := packed.AppendPairs(nil, batch)
	if err != nil {
		return err
	}
	parts := f.Partitions
	arcs := make([]packed.Arc, 0, 2*len(pairs))
	for _, p := range pairs {
		arcs = append(arcs, packed.Arc{U: p.A, V: uint64(part)}, packed.Arc{U: p.B, V: uint64(part)})
	}
	slices.SortFunc(arcs, compareArcs)
	out := f.bundle(ctx, "verify_routes", parts, emit)
	for i, a := range arcs {
		if i == 0 || a != arcs[i-1] {
			out.add(packed.Partition(a.U, parts), a)
		}
	}
	return nil
}

func compareArcs(x, y packed.Arc) int {
	return cmp.Or(cmp.Compare(x.U, y.U), cmp.Compare(x.V, y.V))
}

// sendFeaturesFn meets, on one doc partition, the routes of its documents
// and their features, and sends each wanted document's features once to
// each pair partition that wants them.
type sendFeaturesFn struct {
	Partitions int
	Lanes      int
	out        *batcher // the bundle's
	lanes      lanes[func(int, []byte)]
}

func (f *sendFeaturesFn) StartBundle(ctx context.Context, emit func(int, []byte)) {
	f.lanes.reset()
	f.out = nil
}

func (f *sendFeaturesFn) FinishBundle(ctx context.Context, emit func(int, []byte)) error {
	if err := f.lanes.finish(ctx, emit); err != nil {
		return err
	}
	finishBatcher(&f.out, ctx, emit)
	return nil
}

func (f *sendFeaturesFn) ProcessElement(ctx context.Context, part int, routesIt, featuresIt func(*[]byte) bool, emit func(int, []byte)) error {
	routesIt, featuresIt = hold(routesIt), hold(featuresIt)
	return f.lanes.timed(ctx, f.Lanes, emit, verifyTime, func() (laneOut[func(int, []byte)], error) {
		routes, err := decodeBatches(routesIt, packed.AppendArcs)
		if err != nil {
			return nil, err
		}
		slices.SortFunc(routes, compareArcs)
		var sends []packed.Features
		var dests []int
		err = eachBatch(featuresIt, func(b []byte) error {
			fs, err := packed.AppendFeatures(nil, b)
			for _, x := range fs {
				i, _ := slices.BinarySearchFunc(routes, x.Doc, func(a packed.Arc, doc uint64) int { return cmp.Compare(a.U, doc) })
				for ; i < len(routes) && routes[i].U == x.Doc; i++ {
					sends, dests = append(sends, x), append(dests, int(routes[i].V))
				}
			}
			return err
		})
		return func(ctx context.Context, emit func(int, []byte)) error {
			out := bundleBatcher(&f.out, ctx, "verify_features", f.Partitions, emit)
			for i, x := range sends {
				out.add(dests[i], x)
			}
			return nil
		}, err
	})
}

// verifyPairsFn meets, on one pair partition, its pairs and the features
// of their documents, and verifies each pair.
type verifyPairsFn struct {
	Policy policy.Policy // whose floors the exact verification computes figures above
	Lanes  int
	lanes  lanes[verifyEmit]
}

// verifyEmit is verifyPairsFn's emitters: the verified pairs, and the
// counts as data (see writeTallies).
type verifyEmit struct {
	pairs func(int, []byte)
	tally func(string, int64)
}

func (f *verifyPairsFn) StartBundle(ctx context.Context, emit func(int, []byte), tally func(string, int64)) {
	f.lanes.reset()
}

func (f *verifyPairsFn) FinishBundle(ctx context.Context, emit func(int, []byte), tally func(string, int64)) error {
	return f.lanes.finish(ctx, verifyEmit{emit, tally})
}

func (f *verifyPairsFn) ProcessElement(ctx context.Context, part int, pairsIt, featuresIt func(*[]byte) bool, emit func(int, []byte), tally func(string, int64)) error {
	pairsIt, featuresIt = hold(pairsIt), hold(featuresIt)
	return f.lanes.timed(ctx, f.Lanes, verifyEmit{emit, tally}, verifyTime, func() (laneOut[verifyEmit], error) {
		out, checked, pruned, err := f.verify(pairsIt, featuresIt)
		return func(ctx context.Context, emit verifyEmit) error {
			pairsVerified.Inc(ctx, checked)
			pairsPruned.Inc(ctx, pruned)
			emit.tally("pairs_verified", checked)
			emit.tally("pairs_verify_pruned", pruned)
			if len(out) > 0 {
				emit.pairs(part, out)
			}
			return nil
		}, err
	})
}

func (f *verifyPairsFn) verify(pairsIt, featuresIt func(*[]byte) bool) (out []byte, checked, pruned int64, err error) {
	// Counted pairs travel unsealed (PairCount, SuperShingles).
	var pairs []packed.Pair
	var b []byte
	for pairsIt(&b) {
		if pairs, err = packed.AppendPairs(pairs, b); err != nil {
			return nil, 0, 0, err
		}
	}
	fs, err := decodeBatches(featuresIt, packed.AppendFeatures)
	if err != nil {
		return nil, 0, 0, err
	}
	byDoc := make(map[uint64]packed.Features, len(fs))
	for _, x := range fs {
		byDoc[x.Doc] = x
	}
	// The pairs in a fixed order, so the batch is the same whatever order
	// the shuffle delivered them in.
	packed.SortPairs(pairs)
	for _, p := range pairs {
		a, okA := byDoc[p.A]
		b, okB := byDoc[p.B]
		if !okA || !okB {
			return nil, 0, 0, fmt.Errorf("verify: the features of a document of pair (%d, %d) did not arrive", p.A, p.B)
		}
		v, err := clusters.VerifyPair(a, b, f.Policy)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("verify pair (%d, %d): %w", p.A, p.B, err)
		}
		v.Pair = p
		if v.Checked {
			checked++
		} else {
			pruned++
		}
		out = v.Append(out)
	}
	return out, checked, pruned, nil
}

// verifiedEstimates are what a pair's verification says, for the policy:
// the zero Estimates when its filters proved it below.
func verifiedEstimates(v packed.Verified) policy.Estimates {
	if !v.Checked {
		return policy.Estimates{Shared: int(v.Count)}
	}
	return policy.Estimates{Shared: int(v.Count), Resemblance: v.Resemblance, AInB: &v.AInB, BInA: &v.BInA}
}
