package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestFloorSelectWorked(t *testing.T) {
	// M = 4: L = (2^64-1)/4 = 2^62-1, so "small" values are below 2^62.
	const q = uint64(1) << 62 // the first value above L
	f := Floor{M: 4, K: 3}
	if f.Limit() != q-1 {
		t.Fatalf("Limit = %d, want %d", f.Limit(), q-1)
	}
	long := []uint64{1, 2, 3, 4, q - 1, q, q + 1} // 5 values <= L: the rate rules
	short := []uint64{5, q, q + 7, q + 9}         // 1 value <= L: the floor rules
	tiny := []uint64{q + 3, q + 5}                // fewer than K: all of it
	for _, tc := range []struct {
		in    []uint64
		want  []uint64
		below int
	}{
		{long, long[:5], 5},
		{short, short[:3], 1},
		{tiny, tiny, 0},
		{nil, nil, 0},
	} {
		got, below := f.Select(tc.in)
		if !slices.Equal(got, tc.want) || below != tc.below {
			t.Errorf("Select(%v) = %v, %d; want %v, %d", tc.in, got, below, tc.want, tc.below)
		}
	}
	// A value equal to L is in the rate sample, and counts as a shared
	// rate value: {1, L} against {L, q}, both long with K = 2, share
	// L of a rate union {1, L}.
	f2 := Floor{M: 4, K: 2}
	a2, b2 := []uint64{1, q - 1, q}, []uint64{q - 1, q}
	sa, _ := f2.Select(a2)
	sb, _ := f2.Select(b2)
	if e := f2.Compare(sa, sb); e.Resemblance != 0.5 || e.Samples != 2 || e.FromMin {
		t.Errorf("L itself: %+v, want 1/2 of the rate sample", e)
	}
	// Below == K is long: the rate rules, and ranks are not needed.
	if (FloorDoc{Size: 3, Below: 3}).short(3) || !(FloorDoc{Size: 3, Below: 2}).short(3) {
		t.Error("short: a document with K values <= L is long")
	}
	if got, _ := (Floor{M: 4}).Select(short); !slices.Equal(got, short[:1]) {
		t.Errorf("K=0 keeps %v, want the rate sample only", got)
	}
	if got, below := (Floor{M: 1, K: 2}).Select(long); !slices.Equal(got, long) || below != len(long) {
		t.Errorf("M=1 keeps %v (%d below), want everything", got, below)
	}
}

func TestFloorValidate(t *testing.T) {
	for _, f := range []Floor{{0, 1}, {-1, 0}, {25, -1}, {25, MaxMinN + 1}} {
		if f.Validate() == nil {
			t.Errorf("%v validates", f)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Select with %v did not panic", f)
				}
			}()
			f.Select([]uint64{1})
		}()
	}
	for _, f := range []Floor{{1, 0}, {25, 16}, {math.MaxInt32, MaxMinN}} {
		if err := f.Validate(); err != nil {
			t.Errorf("%v: %v", f, err)
		}
	}
}

// floorRef is the definition, on whole sets: a document keeps every x <=
// max(L, its K-th smallest).
func floorRef(f Floor, s []uint64) []uint64 {
	t := f.Limit()
	if f.K >= 1 && len(s) >= f.K {
		t = max(t, s[f.K-1])
	} else if f.K >= 1 {
		t = math.MaxUint64
	}
	var out []uint64
	for _, x := range s {
		if x <= t {
			out = append(out, x)
		}
	}
	return out
}

// floorEstimateRef computes the estimate from the two whole sets, as the
// derivation defines it and without ranks or counts: the union's elements
// at or below θ = max(L, u_(K)), and the share of them in both sets.
// Containment: the rate samples of A and of B (the whole sets when both
// are shorter than K).
func floorEstimateRef(f Floor, a, b []uint64) (res float64, n int, aInB, bInA float64) {
	inA, inB := map[uint64]bool{}, map[uint64]bool{}
	var union []uint64
	for _, x := range a {
		inA[x] = true
		union = append(union, x)
	}
	for _, x := range b {
		inB[x] = true
		if !inA[x] {
			union = append(union, x)
		}
	}
	slices.Sort(union)
	theta := f.Limit()
	if f.K >= 1 {
		if len(union) < f.K {
			theta = math.MaxUint64
		} else {
			theta = max(theta, union[f.K-1])
		}
	}
	shared := 0
	for _, x := range union {
		if x <= theta {
			n++
			if inA[x] && inB[x] {
				shared++
			}
		}
	}
	if n > 0 {
		res = float64(shared) / float64(n)
	}
	lim := f.Limit()
	if len(a) < f.K && len(b) < f.K {
		lim = math.MaxUint64
	}
	var na, nb, nab int
	for _, x := range union {
		if x <= lim {
			if inA[x] {
				na++
			}
			if inB[x] {
				nb++
			}
			if inA[x] && inB[x] {
				nab++
			}
		}
	}
	return res, n, Containment(nab, na), Containment(nab, nb)
}

// randomOverlapping returns two sorted sets that share values, with
// values spread over the whole uint64 range (so that about one in M is
// <= L) or, when lowHeavy, mostly below L (so that long documents occur
// at small sizes).
func randomOverlapping(r *rand.Rand, f Floor, lowHeavy bool) (a, b []uint64) {
	c, pa, pb := r.IntN(40), r.IntN(40), r.IntN(40)
	draw := func() uint64 {
		if lowHeavy && r.IntN(2) == 0 && f.Limit() < math.MaxUint64 {
			return r.Uint64N(f.Limit() + 1)
		}
		return r.Uint64()
	}
	for range c {
		x := draw()
		a, b = append(a, x), append(b, x)
	}
	for range pa {
		a = append(a, draw())
	}
	for range pb {
		b = append(b, draw())
	}
	slices.Sort(a)
	slices.Sort(b)
	return slices.Compact(a), slices.Compact(b)
}

func TestFloorMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	for i := range 20000 {
		f := Floor{M: 1 + r.IntN(8), K: r.IntN(20)}
		if i%10 == 0 {
			f.M = 1
		}
		a, b := randomOverlapping(r, f, i%2 == 0)
		sa, belowA := f.Select(a)
		sb, _ := f.Select(b)
		if want := floorRef(f, a); !slices.Equal(sa, want) {
			t.Fatalf("%v: Select(%v) = %v, want %v", f, a, sa, want)
		}
		if want := len(floorRef(Floor{M: f.M}, a)); belowA != want {
			t.Fatalf("%v: below = %d, want %d", f, belowA, want)
		}
		got := f.Compare(sa, sb)
		res, n, aInB, bInA := floorEstimateRef(f, a, b)
		if got.Resemblance != res || got.Samples != n || got.AInB != aInB || got.BInA != bInA {
			t.Fatalf("%v on\n a=%v\n b=%v:\n got %+v\n want resemblance %v from %d, containments %v %v",
				f, a, b, got, res, n, aInB, bInA)
		}
		// The union's size is reported only when the sketches are the
		// whole sets, and then it is the union's.
		if got.Universe != 0 {
			if u := len(a) + len(b) - IntersectCount(a, b); got.Universe != u || !slices.Equal(sa, a) || !slices.Equal(sb, b) {
				t.Fatalf("%v: Universe %d, union %d, whole %v %v", f, got.Universe, u, slices.Equal(sa, a), slices.Equal(sb, b))
			}
		}
		if got.Universe != 0 && got.Samples == got.Universe && got.Resemblance != Jaccard(a, b) {
			t.Fatalf("%v: whole-union estimate %v, Jaccard %v", f, got.Resemblance, Jaccard(a, b))
		}
	}
}

// TestFloorEstimateFromCounts: the pipeline's view. For pairs with a
// long document, the estimate needs no ranks (garbage ranks change
// nothing), so counts can be summed before the shuffle; for two short
// documents it equals Broder's MIN_K on the two sketches.
func TestFloorEstimateFromCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	for range 5000 {
		f := Floor{M: 1 + r.IntN(6), K: 1 + r.IntN(20)}
		a, b := randomOverlapping(r, f, r.IntN(2) == 0)
		sa, belowA := f.Select(a)
		sb, belowB := f.Select(b)
		got := f.Compare(sa, sb)
		da, db := FloorDoc{len(sa), belowA}, FloorDoc{len(sb), belowB}
		sharedBelow := 0
		for _, x := range sa {
			if x <= f.Limit() && slices.Contains(sb, x) {
				sharedBelow++
			}
		}
		if da.short(f.K) && db.short(f.K) {
			if got.FromMin != (belowA+belowB-sharedBelow < f.K) {
				t.Fatalf("%v: FromMin %v with %d+%d-%d below", f, got.FromMin, belowA, belowB, sharedBelow)
			}
			if got.FromMin {
				if want := MinResemblance(sa, sb, f.K); got.Resemblance != want {
					t.Fatalf("%v: %v, MIN_K gives %v", f, got.Resemblance, want)
				}
			}
			continue
		}
		if got.FromMin {
			t.Fatalf("%v: a long document, yet the K smallest", f)
		}
		junk := [][2]uint16{{0, 0}, {1, 1}, {2, 2}}
		if e := f.Estimate(da, db, sharedBelow, junk); e != got {
			t.Fatalf("%v: ranks changed a pair with a long document: %+v vs %+v", f, e, got)
		}
	}
}

// simFloor draws trials pairs with |A∩B| = c, |A\B| = pa, |B\A| = pb and
// returns the Floor estimates (MOD_M under Spec{Mod, M}'s rule when k < 0).
func simFloor(r *rand.Rand, m, k, c, pa, pb, trials int) []float64 {
	est := make([]float64, 0, trials)
	var va, vb []uint64
	for range trials {
		a, b := pair(r, c, pa, pb)
		if k < 0 {
			spec := Spec{Mod, m}
			va, vb = spec.Select(va, a), spec.Select(vb, b)
			est = append(est, ModResemblance(IntersectCount(va, vb), len(va), len(vb)))
			continue
		}
		f := Floor{M: m, K: k}
		sa, _ := f.Select(a)
		sb, _ := f.Select(b)
		est = append(est, f.Compare(sa, sb).Resemblance)
	}
	return est
}

func sd(xs []float64) float64 {
	mean, _ := meanSE(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// TestFloorUnbiased checks the estimate's mean against the exact Jaccard
// of the sets, and its spread against StdDev, by set size: short
// documents (the floor rules), long ones (the rate rules) and between.
func TestFloorUnbiased(t *testing.T) {
	const trials = 1500
	r := rand.New(rand.NewPCG(13, 13))
	for _, k := range []int{4, 16, 64} {
		f := Floor{M: 25, K: k}
		for _, n := range []int{6, 30, 120, 400, 1500} { // |A| = |B| = n
			for _, j := range []float64{0.3, 0.5, 0.8} {
				// |A∩B| = c, |A|=|B|=n: J = c/(2n-c).
				c := int(math.Round(2 * float64(n) * j / (1 + j)))
				exact := float64(c) / float64(2*n-c)
				est := simFloor(r, f.M, f.K, c, n-c, n-c, trials)
				name := fmt.Sprintf("%v n=%d J=%.3f", f, n, exact)
				checkUnbiased(t, name, est, exact)
				got, want := sd(est), f.StdDev(exact, 2*n-c)
				// The sample SD of 1500 draws is within ±5.5% of
				// the true one at 3 sigma (SE of an SD ≈ SD/sqrt(2N)),
				// plus the hypergeometric's kurtosis: allow 10%.
				if math.Abs(got-want) > 0.10*want+1e-9 {
					t.Errorf("%s: SD %.4f, StdDev says %.4f", name, got, want)
				}
				if bound := math.Sqrt(exact * (1 - exact) / float64(k)); want > bound+1e-12 {
					t.Errorf("%s: StdDev %.4f above sqrt(r(1-r)/K) = %.4f", name, want, bound)
				}
			}
		}
	}
}

// TestFloorSpreadShrinksWithK: on short documents the spread falls as K
// grows, about as 1/sqrt(K), while MOD_25 without a floor is both wider
// and biased low (an empty sample estimates 0).
func TestFloorSpreadShrinksWithK(t *testing.T) {
	const trials = 2000
	r := rand.New(rand.NewPCG(14, 14))
	n, c := 200, 133 // J = 133/267 ≈ 0.498; MOD_25 keeps about 11 values
	exact := float64(c) / float64(2*n-c)
	prev := math.Inf(1)
	for _, k := range []int{8, 16, 32, 64} {
		s := sd(simFloor(r, 25, k, c, n-c, n-c, trials))
		if s >= prev {
			t.Errorf("K=%d: SD %.4f not below K/2's %.4f", k, s, prev)
		}
		prev = s
	}
	mod := simFloor(r, 25, -1, c, n-c, n-c, trials)
	if s := sd(mod); s <= (Floor{M: 25, K: 16}).StdDev(exact, 2*n-c) {
		t.Errorf("MOD_25 SD %.4f not above the floor's", s)
	}
}

// TestFloorContainmentUnbiased: the rate sample's containment, as MOD_m's.
func TestFloorContainmentUnbiased(t *testing.T) {
	const trials = 400
	r := rand.New(rand.NewPCG(15, 15))
	f := Floor{M: 10, K: 16}
	for _, tc := range []struct{ c, pa, pb int }{
		{1000, 0, 3000},
		{900, 100, 1000},
		{500, 500, 1500},
	} {
		want := float64(tc.c) / float64(tc.c+tc.pa)
		var est []float64
		for range trials {
			a, b := pair(r, tc.c, tc.pa, tc.pb)
			sa, _ := f.Select(a)
			sb, _ := f.Select(b)
			est = append(est, f.Compare(sa, sb).AInB)
		}
		checkUnbiased(t, fmt.Sprintf("floor containment %.1f", want), est, want)
	}
}

func ExampleFloor() {
	f := Floor{M: 25, K: 16}
	r := rand.New(rand.NewPCG(1, 2))
	// A 60-shingle page and an edited copy (J = 40/80): MOD_25 keeps
	// about 2 values of each; the floor keeps 16.
	a, b := pair(r, 40, 20, 20)
	sa, _ := f.Select(a)
	sb, _ := f.Select(b)
	e := f.Compare(sa, sb)
	fmt.Printf("%d and %d values; estimate %.2f from %d samples (K smallest: %v), exact %.2f\n",
		len(sa), len(sb), e.Resemblance, e.Samples, e.FromMin, Jaccard(a, b))
	fmt.Printf("standard error at 0.5: %.3f\n", StdErr(0.5, e.Samples, e.Universe))
	// Output:
	// 16 and 16 values; estimate 0.62 from 16 samples (K smallest: true), exact 0.50
	// standard error at 0.5: 0.125
}
