package transforms

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/bloom"
	"github.com/neardup/neardup/similarity/simjoin"
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
// sets (Config.Verification): exactly, with ppjoin+'s verification
// (simjoin.Overlap, its suffix and positional filters), or through their
// Bloom filters (bloom.Compare). It takes the counted pairs of PairCount
// or SuperShingles, PCollection<KV<int, []byte>> by pair partition, and
// the features of Sketch by doc partition, and returns
// PCollection<KV<int, []byte>> of packed.Verified batches by pair
// partition, for Cluster.
//
// Only the candidates' documents travel: each pair tells its two
// documents' partitions which pair partitions want them, and each
// document's features go once to each such partition, however many of its
// pairs are there.
func Verify(s beam.Scope, pairs, features beam.PCollection, cfg Config) beam.PCollection {
	s = s.Scope("Verify")
	wanted := beam.ParDo(s, &routePairsFn{Cfg: cfg}, pairs)
	sent := beam.ParDo(s, &sendFeaturesFn{Cfg: cfg}, beam.CoGroupByKey(s, wanted, features))
	verified, tallies := beam.ParDo2(s, &verifyPairsFn{Cfg: cfg}, beam.CoGroupByKey(s, pairs, sent))
	writeTallies(s, "verify", cfg, tallies)
	return verified
}

// routePairsFn sends, for every pair, <doc, pair partition> to the
// partition of each of its two documents.
type routePairsFn struct {
	Cfg       Config
	bundleOut // its batcher, kept for the bundle
}

func (f *routePairsFn) ProcessElement(ctx context.Context, part int, batch []byte, emit func(int, []byte)) error {
	pairs, err := packed.AppendPairs(nil, batch)
	if err != nil {
		return err
	}
	parts := f.Cfg.Partitions
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
	Cfg   Config
	out   *batcher // the bundle's
	lanes lanes[func(int, []byte)]
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
	return f.lanes.timed(ctx, f.Cfg.Lanes, emit, verifyTime, func() (laneOut[func(int, []byte)], error) {
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
			out := bundleBatcher(&f.out, ctx, "verify_features", f.Cfg.Partitions, emit)
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
	Cfg   Config
	lanes lanes[verifyEmit]
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
	return f.lanes.timed(ctx, f.Cfg.Lanes, verifyEmit{emit, tally}, verifyTime, func() (laneOut[verifyEmit], error) {
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
		v, err := VerifyPair(a, b, f.Cfg.Policy)
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

// VerifyPair verifies a pair on its documents' features: a Bloom filter
// each (K > 0) or the whole sets. A Bloom pair is unchecked when its
// filters show no overlap they can tell from chance. The exact verification computes the
// figures of every pair whose overlap may reach the lower of pol's
// thresholds and the pairs table's floors (policy.MinResemblance,
// policy.MinContainment), so that recluster stays exact; pairs the
// filters prove below come back unchecked.
func VerifyPair(a, b packed.Features, pol policy.Policy) (packed.Verified, error) {
	if a.K > 0 || b.K > 0 {
		e, err := bloom.Compare(bloom.Filter{N: a.N, K: uint8(a.K), Bits: a.Values}, bloom.Filter{N: b.N, K: uint8(b.K), Bits: b.Values})
		if err != nil {
			return packed.Verified{}, err
		}
		// No overlap the filters can tell from chance (an estimate of
		// 0, or one filter too full beside the other to say): no figures.
		return packed.Verified{Resemblance: e.Resemblance, AInB: e.AInB, BInA: e.BInA, Checked: e.Intersection > 0}, nil
	}
	na, nb := len(a.Values), len(b.Values)
	if na == 0 || nb == 0 {
		return packed.Verified{}, nil
	}
	o, ok := simjoin.Overlap(a.Values, b.Values, floorOverlap(pol, na, nb))
	if !ok {
		return packed.Verified{}, nil
	}
	return packed.Verified{
		Resemblance: float64(o) / float64(na+nb-o),
		AInB:        float64(o) / float64(na),
		BInA:        float64(o) / float64(nb),
		Checked:     true,
	}, nil
}

// floorOverlap is the least overlap of sets of sizes na and nb that a
// policy no stricter than pol or the pairs table's floors could link: the
// least of the resemblance and containment bounds.
func floorOverlap(pol policy.Policy, na, nb int) int {
	r, c := policy.MinResemblance, policy.MinContainment
	if pol.Resemblance > 0 {
		r = min(r, pol.Resemblance)
	}
	if pol.Containment > 0 {
		c = min(c, pol.Containment)
	}
	byContainment := int(math.Ceil(c*float64(min(na, nb)) - 1e-9))
	return max(1, min(simjoin.MinOverlap(r, na, nb), byContainment))
}

// verifiedEstimates are what a pair's verification says, for the policy:
// the zero Estimates when its filters proved it below.
func verifiedEstimates(v packed.Verified) policy.Estimates {
	if !v.Checked {
		return policy.Estimates{Shared: int(v.Count)}
	}
	return policy.Estimates{Shared: int(v.Count), Resemblance: v.Resemblance, AInB: &v.AInB, BInA: &v.BInA}
}
