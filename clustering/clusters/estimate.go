package clusters

import (
	"math"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/bloom"
	"github.com/neardup/neardup/similarity/simjoin"
	"github.com/neardup/neardup/similarity/sketch"
)

// The figures phase 4 links a pair on: Broder's estimates from the
// pair's counted sketch values, or the verification's on the two
// documents' whole feature sets.

// Estimate computes Broder's estimates for one counted pair: the resemblance
// (MOD_m: shared/(|V(A)|+|V(B)|-shared); MIN_s: the share of the s smallest
// of F(A)∪F(B) found in both; MinHash: the share of agreeing positions)
// and, for MOD_m only, the containments of A in B and of B in A. MIN_s and
// MinHash sketches cannot estimate containment: nil then.
func Estimate(p packed.Pair, spec sketch.Spec) (res float64, aInB, bInA *float64) {
	switch spec.Kind {
	case sketch.MinHash:
		return sketch.MinHashResemblance(int(p.Count), spec.N), nil, nil
	case sketch.Min:
		union := min(spec.N, int(p.SizeA)+int(p.SizeB)-int(p.Count))
		if union > 0 {
			res = float64(p.MinShared) / float64(union)
		}
		return res, nil, nil
	}
	res = sketch.ModResemblance(int(p.Count), int(p.SizeA), int(p.SizeB))
	a := sketch.Containment(int(p.Count), int(p.SizeA))
	b := sketch.Containment(int(p.Count), int(p.SizeB))
	return res, &a, &b
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

// UncertainZ is how many standard errors from a threshold a sketch
// estimate must be for its link (or its absence) to be taken on trust:
// the offline study of docs/sketch-study.md found that verifying the
// pairs closer than 2.5 standard errors met precision and recall 0.95 on
// every shared corpus and seed.
const UncertainZ = 2.5

// Uncertain reports whether a pair whose sketches share shared values, of
// sizes sizeA and sizeB, with resemblance estimate res under spec, is
// within UncertainZ standard errors of one of pol's thresholds: too few
// sampled shingles to tell a pair at the threshold from one on the other
// side of it. The error is taken at the threshold, on the samples the
// estimate rests on: the union's for the resemblance (sketch.Spec.Samples);
// for a containment, which only a mod:M sketch estimates, the contained
// document's own size values (shared/size is the share of its sample
// found in the other's).
func Uncertain(spec sketch.Spec, pol policy.Policy, shared, sizeA, sizeB int, res float64) bool {
	if pol.Resemblance > 0 {
		n, u := spec.Samples(shared, sizeA, sizeB)
		if sketch.Uncertain(res, pol.Resemblance, UncertainZ, n, u) {
			return true
		}
	}
	if pol.Containment <= 0 || spec.Kind != sketch.Mod {
		return false
	}
	for _, size := range []int{sizeA, sizeB} {
		u := 0 // unknown: MOD_m samples a share of the document
		if spec.N == 1 {
			u = size // the whole document
		}
		if size > 0 && sketch.Uncertain(sketch.Containment(shared, size), pol.Containment, UncertainZ, size, u) {
			return true
		}
	}
	return false
}
