package clusters

import (
	"math"
	"testing"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/bloom"
	"github.com/neardup/neardup/similarity/sketch"
)

// TestEstimate: each sketch's estimate of a counted pair, and
// containments only where MOD_m can tell them.
func TestEstimate(t *testing.T) {
	near := func(x, want float64) bool { return math.Abs(x-want) < 1e-12 }
	res, aInB, bInA := Estimate(packed.Pair{Count: 2, SizeA: 4, SizeB: 6}, sketch.Spec{Kind: sketch.Mod, N: 25})
	if !near(res, 2.0/8) || aInB == nil || bInA == nil || !near(*aInB, 0.5) || !near(*bInA, 2.0/6) {
		t.Errorf("MOD_m: %g, %v, %v; want 0.25, 0.5, 1/3", res, aInB, bInA)
	}
	res, aInB, bInA = Estimate(packed.Pair{Count: 5, SizeA: 10, SizeB: 10, MinShared: 3}, sketch.Spec{Kind: sketch.Min, N: 10})
	if !near(res, 0.3) || aInB != nil || bInA != nil {
		t.Errorf("MIN_s: %g, %v, %v; want 0.3 (3 of the 10 smallest), no containments", res, aInB, bInA)
	}
	res, aInB, bInA = Estimate(packed.Pair{Count: 3, SizeA: 4, SizeB: 4}, sketch.Spec{Kind: sketch.MinHash, N: 4})
	if !near(res, 0.75) || aInB != nil || bInA != nil {
		t.Errorf("MinHash: %g, %v, %v; want 0.75, no containments", res, aInB, bInA)
	}
}

// TestVerifyPair: the exact figures of a pair above the floors; a pair
// below every policy the pairs table serves comes back unchecked; Bloom
// filters of the same sets estimate what the exact figures are.
func TestVerifyPair(t *testing.T) {
	seq := func(from, to uint64) []uint64 {
		var s []uint64
		for x := from; x < to; x++ {
			s = append(s, x)
		}
		return s
	}
	a, b := seq(0, 100), seq(10, 110) // 90 shared of 110
	v, err := VerifyPair(packed.Features{Values: a}, packed.Features{Values: b}, policy.Default)
	if err != nil || !v.Checked || v.Resemblance != 90.0/110 || v.AInB != 0.9 || v.BInA != 0.9 {
		t.Errorf("exact: %+v, %v; want resemblance 90/110, containments 0.9, checked", v, err)
	}
	v, err = VerifyPair(packed.Features{Values: seq(0, 100)}, packed.Features{Values: seq(95, 195)}, policy.Default)
	if err != nil || v.Checked {
		t.Errorf("exact, 5 shared of 195: %+v, %v; want unchecked (below every floor)", v, err)
	}
	fa, fb := bloom.New(a, bloom.DefaultBitsPerFeature), bloom.New(b, bloom.DefaultBitsPerFeature)
	v, err = VerifyPair(packed.Features{N: fa.N, K: uint32(fa.K), Values: fa.Bits}, packed.Features{N: fb.N, K: uint32(fb.K), Values: fb.Bits}, policy.Default)
	if err != nil || !v.Checked || math.Abs(v.Resemblance-90.0/110) > 0.15 {
		t.Errorf("bloom: %+v, %v; want a checked estimate near 90/110", v, err)
	}
}

// TestUncertain: a pair is uncertain when an estimate is within 2.5
// standard errors, sqrt(t(1-t)/n) at the threshold t, of t, n being the
// union's sampled values for the resemblance, the contained document's for
// a containment; figures worked by hand.
func TestUncertain(t *testing.T) {
	mod, min100 := sketch.Spec{Kind: sketch.Mod, N: 25}, sketch.Spec{Kind: sketch.Min, N: 100}
	half := policy.Policy{Resemblance: 0.5}
	for _, c := range []struct {
		spec                 sketch.Spec
		pol                  policy.Policy
		shared, sizeA, sizeB int
		res                  float64
		want                 bool
	}{
		// n = 3: the error at 0.5 is 0.289, 2.5 of them 0.72 > |1 - 0.5|.
		{mod, half, 3, 3, 3, 1, true},
		// n = 80: 0.056, 2.5 of them 0.14 < 0.5.
		{mod, half, 80, 80, 80, 1, false},
		// n = 60 + 60 - 40 = 80: |0.5 - 0.5| = 0 < 0.14.
		{mod, half, 40, 60, 60, 0.5, true},
		// n = 80: |0.7 - 0.5| = 0.2 > 0.14; |0.6 - 0.5| = 0.1 < 0.14.
		{mod, half, 40, 60, 60, 0.7, false},
		{mod, half, 40, 60, 60, 0.6, true},
		// MIN_100 of two long documents: n = 100, 0.05 each, 0.125 in all.
		{min100, half, 70, 100, 100, 0.6, true},
		{min100, half, 70, 100, 100, 0.65, false},
		// Threshold 0.8, n = 100: sqrt(0.16/100) = 0.04, 0.1 in all.
		{mod, policy.Policy{Resemblance: 0.8}, 60, 80, 80, 0.85, true},
		{mod, policy.Policy{Resemblance: 0.8}, 60, 80, 80, 0.95, false},
		// Containment 0.8: A's 3 values all in B, sqrt(0.16/3) = 0.23,
		// 0.58 in all > |1 - 0.8|.
		{mod, policy.Policy{Containment: 0.8}, 3, 3, 3, 1, true},
		// 95 of A's 100 in B: 0.04 each, 0.1 in all < 0.15; B in A,
		// 95/1000, is far below on 1000 samples.
		{mod, policy.Policy{Containment: 0.8}, 95, 100, 1000, 0.095, false},
		// 85 of 100: 0.05 < 0.1.
		{mod, policy.Policy{Containment: 0.8}, 85, 100, 1000, 0.085, true},
		// B in A near the threshold: 85 of B's 100.
		{mod, policy.Policy{Containment: 0.8}, 85, 1000, 100, 0.085, true},
		// mod:1 holds the whole documents: exact figures, no error.
		{sketch.Spec{Kind: sketch.Mod, N: 1}, policy.Policy{Containment: 0.8}, 85, 100, 1000, 0.085, false},
		// MIN_s estimates no containment: nothing to be uncertain of.
		{min100, policy.Policy{Containment: 0.8}, 3, 3, 3, 1, false},
	} {
		if got := Uncertain(c.spec, c.pol, c.shared, c.sizeA, c.sizeB, c.res); got != c.want {
			t.Errorf("%v %+v shared %d of %d, %d, estimate %g: uncertain %v, want %v", c.spec, c.pol, c.shared, c.sizeA, c.sizeB, c.res, got, c.want)
		}
	}
}
