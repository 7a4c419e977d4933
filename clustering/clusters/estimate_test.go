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
