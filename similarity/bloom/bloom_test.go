package bloom

import (
	"errors"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// features returns n distinct sorted random fingerprints.
func features(r *rand.Rand, n int) []uint64 {
	seen := make(map[uint64]bool, n)
	out := make([]uint64, 0, n)
	for len(out) < n {
		x := r.Uint64()
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// overlapping returns sorted sets of nA and nB fingerprints sharing
// exactly c.
func overlapping(r *rand.Rand, nA, nB, c int) (a, b []uint64) {
	all := features(r, nA+nB-c)
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	a = slices.Clone(all[:nA])
	b = slices.Concat(all[:c], all[nA:])
	slices.Sort(a)
	slices.Sort(b)
	return a, b
}

func popcount(ws []uint64) int {
	n := 0
	for _, w := range ws {
		n += bits.OnesCount64(w)
	}
	return n
}

// has reports whether every bit of feature x is set in f.
func has(f Filter, x uint64) bool {
	mask := uint64(f.M() - 1)
	h, step := x, stride(x)
	for range int(f.K) {
		p := h & mask
		if f.Bits[p>>6]&(1<<(p&63)) == 0 {
			return false
		}
		h += step
	}
	return true
}

func TestK(t *testing.T) {
	for _, c := range []struct{ bpf, k int }{{-3, 1}, {0, 1}, {1, 1}, {2, 1}, {3, 2}, {4, 3}, {8, 6}, {10, 7}, {16, 11}, {1000, 255}} {
		if got := K(c.bpf); got != c.k {
			t.Errorf("K(%d) = %d, want %d", c.bpf, got, c.k)
		}
	}
}

func TestNew(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, c := range []struct{ n, bpf, bits int }{
		{0, 8, 64}, {1, 8, 64}, {8, 8, 64}, {9, 8, 128}, {100, 8, 1024}, {128, 8, 1024}, {129, 8, 2048},
		{100, 4, 512}, {100, 1, 128}, {100, 0, 128}, {8192, 8, MaxBits}, {20000, 8, MaxBits},
	} {
		fs := features(r, c.n)
		f := New(fs, c.bpf)
		if f.M() != c.bits || int(f.N) != c.n || int(f.K) != K(c.bpf) {
			t.Errorf("New(%d features, %d): N %d K %d m %d, want N %d K %d m %d", c.n, c.bpf, f.N, f.K, f.M(), c.n, K(c.bpf), c.bits)
		}
		// A feature sets K distinct bits: exactly N*K bits without
		// collisions, and never more.
		if ones := popcount(f.Bits); ones > c.n*int(f.K) || (c.n > 0 && ones < int(f.K)) {
			t.Errorf("New(%d features, %d): %d bits set", c.n, c.bpf, ones)
		}
		for _, x := range fs {
			if !has(f, x) {
				t.Fatalf("New(%d features, %d): feature %#x not in its filter", c.n, c.bpf, x)
			}
		}
	}
	// One feature in a 64-bit filter: exactly K distinct bits.
	for i := range 1000 {
		if f := New([]uint64{uint64(i) * 0x9e3779b97f4a7c15}, 8); popcount(f.Bits) != int(f.K) {
			t.Fatalf("feature %d set %d bits, want %d distinct", i, popcount(f.Bits), f.K)
		}
	}
}

// TestFold: folding is building at the smaller size.
func TestFold(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{1, 7, 100, 1000, 5000} {
		fs := features(r, n)
		f := New(fs, DefaultBitsPerFeature)
		for w := len(f.Bits); w >= 1; w /= 2 {
			got := f.Fold(w)
			want := build(fs, int(f.K), w)
			if got.N != want.N || got.K != want.K || !slices.Equal(got.Bits, want.Bits) {
				t.Fatalf("%d features: Fold(%d) of %d words differs from the %d-word filter", n, w, len(f.Bits), w)
			}
			if w > 1 && !slices.Equal(got.Fold(w/2).Bits, f.Fold(w/2).Bits) {
				t.Fatalf("%d features: folding twice differs from folding once", n)
			}
		}
		g := f.Fold(len(f.Bits))
		g.Bits[0] ^= 1
		if g.Bits[0] == f.Bits[0] {
			t.Fatal("Fold shares the filter's words")
		}
	}
	for _, w := range []int{0, 3, 32} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Fold(%d) of a 16-word filter did not panic", w)
				}
			}()
			New(features(r, 100), 8).Fold(w) // 16 words
		}()
	}
}

func TestEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var filters []Filter
	var b []byte
	for _, n := range []int{0, 1, 50, 3000, 20000} {
		f := New(features(r, n), DefaultBitsPerFeature)
		filters = append(filters, f)
		b = f.Append(b)
	}
	rest := b
	for i, want := range filters {
		var got Filter
		var err error
		got, rest, err = Decode(rest)
		if err != nil {
			t.Fatalf("filter %d: %v", i, err)
		}
		if got.N != want.N || got.K != want.K || !slices.Equal(got.Bits, want.Bits) {
			t.Fatalf("filter %d: round trip changed it", i)
		}
	}
	if len(rest) != 0 {
		t.Fatalf("%d bytes left after the last filter", len(rest))
	}
	if len(filters[1].Append(nil)) != headerLen+8 {
		t.Errorf("a one-word filter takes %d bytes", len(filters[1].Append(nil)))
	}

	one := filters[2].Append(nil)
	for i := range len(one) {
		if _, _, err := Decode(one[:i]); !errors.Is(err, ErrMalformed) {
			t.Fatalf("truncated to %d of %d bytes: %v", i, len(one), err)
		}
	}
	bad := func(name string, edit func(b []byte) []byte) {
		t.Helper()
		b := edit(slices.Clone(one))
		if _, _, err := Decode(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	bad("K 0", func(b []byte) []byte { b[4] = 0; return b })
	bad("3 words", func(b []byte) []byte { b[5] = 3; return b })
	bad("0 words", func(b []byte) []byte { b[5], b[6] = 0, 0; return b })
	bad("2048 words", func(b []byte) []byte {
		b[5], b[6] = 0, 8
		return append(b, make([]byte, 8*2048)...)
	})
	bad("2^31 words", func(b []byte) []byte { b[8] = 0x80; return b })
	bad("more bits than N features set", func(b []byte) []byte { b[0], b[1], b[2], b[3] = 1, 0, 0, 0; return b })
	// Random bytes never panic.
	for range 20000 {
		junk := make([]byte, r.IntN(40))
		for i := range junk {
			junk[i] = byte(r.Uint32())
		}
		if r.IntN(2) == 0 && len(junk) >= headerLen {
			junk[4] = byte(1 + r.IntN(8))
			junk[5], junk[6], junk[7], junk[8] = byte(1<<r.IntN(3)), 0, 0, 0
		}
		if f, _, err := Decode(junk); err == nil && (f.K == 0 || len(f.Bits) == 0) {
			t.Fatalf("Decode(%x) accepted %+v", junk, f)
		}
	}
}

func TestCompareBasics(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	a, b := overlapping(r, 800, 600, 0)
	fa, fb := New(a, 8), New(b, 8)
	if _, err := Compare(fa, New(b, 4)); err == nil {
		t.Error("filters with different K compared")
	}
	if _, err := Compare(Filter{N: 1, K: 6}, fb); err == nil {
		t.Error("a filter without words compared")
	}
	if e, err := Compare(fa, New(nil, 8)); err != nil || e != (Estimate{}) {
		t.Errorf("against the empty set: %+v, %v", e, err)
	}
	if e, err := Compare(New(nil, 8), New(nil, 8)); err != nil || e != (Estimate{}) {
		t.Errorf("two empty sets: %+v, %v", e, err)
	}

	same, _ := Compare(fa, New(slices.Clone(a), 8))
	if same.Resemblance != 1 || same.Intersection != 800 || same.AInB != 1 || same.BInA != 1 {
		t.Errorf("identical sets: %+v", same)
	}
	disjoint, _ := Compare(fa, fb)
	if disjoint.Resemblance > 0.03 || disjoint.AInB > 0.05 || disjoint.BInA > 0.05 {
		t.Errorf("disjoint sets: %+v", disjoint)
	}
	// b within a: the subset's bits all lie in the superset's.
	sub := slices.Clone(a[:500])
	in, _ := Compare(New(sub, 8), fa)
	if in.AInB != 1 || in.Intersection != 500 || math.Abs(in.Resemblance-500.0/800) > 1e-12 {
		t.Errorf("a subset: %+v", in)
	}
	// Symmetry, including equal sizes.
	for _, sizes := range [][3]int{{800, 600, 300}, {500, 500, 250}, {100, 3000, 80}} {
		a, b := overlapping(r, sizes[0], sizes[1], sizes[2])
		fa, fb := New(a, 8), New(b, 8)
		x, _ := Compare(fa, fb)
		y, _ := Compare(fb, fa)
		if x.Intersection != y.Intersection || x.Resemblance != y.Resemblance || x.AInB != y.BInA || x.BInA != y.AInB {
			t.Errorf("%v: Compare(a, b) = %+v, Compare(b, a) = %+v", sizes, x, y)
		}
		if lo := float64(min(sizes[0], sizes[1])); x.Intersection < 0 || x.Intersection > lo {
			t.Errorf("%v: intersection %v outside [0, %v]", sizes, x.Intersection, lo)
		}
	}
}

// TestRawShare measures the share of A's bits set in an unrelated B's
// filter of the same size, the raw ratio Jain thresholds, against the
// paper's false-match figure and 1 - q^n (see the package comment).
func TestRawShare(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for _, n := range []int{128, 256, 600, 1000} { // m/n 8, 8, 13.7, 8.2
		var share, est float64
		const trials = 100
		for range trials {
			a, b := overlapping(r, n, n, 0)
			fa, fb := New(a, 8), New(b, 8)
			both := 0
			for i := range fa.Bits {
				both += bits.OnesCount64(fa.Bits[i] & fb.Bits[i])
			}
			share += float64(both) / float64(popcount(fa.Bits))
			e, _ := Compare(fa, fb)
			est += e.AInB
		}
		share /= trials
		est /= trials
		m := float64(New(make([]uint64, n), 8).M())
		expect := 1 - math.Pow(1-float64(K(8))/m, float64(n))
		paper := 2 * (1 - math.Pow(0.5, math.Pow(0.6185, m/float64(n))))
		t.Logf("n %d, m/n %.1f: raw share of bits %.4f (expected 1-q^n %.4f, paper's figure %.4f); corrected containment %.4f", n, m/float64(n), share, expect, paper, est)
		if math.Abs(share-expect) > 0.02 {
			t.Errorf("n %d: raw share %.4f, expected %.4f", n, share, expect)
		}
		if share < 10*paper || share < 0.25 {
			t.Errorf("n %d: raw share %.4f not far above the paper's %.4f", n, share, paper)
		}
		if est > 0.035 {
			t.Errorf("n %d: corrected containment of unrelated sets %.4f", n, est)
		}
	}
}

// errStats accumulates the errors of an estimator over trials.
type errStats struct{ n, sum, sq float64 }

func (s *errStats) add(d float64) { s.n++; s.sum += d; s.sq += d * d }
func (s errStats) mean() float64  { return s.sum / s.n }
func (s errStats) rmse() float64  { return math.Sqrt(s.sq / s.n) }

// trial draws sets of sizes in [lo, hi] with the larger at most ratio
// times the smaller and at least ratioLo times, and an overlap by mode:
// none, all of the smaller, or uniform in between.
func trial(r *rand.Rand, ratioLo, ratio float64, mode string) (a, b []uint64, c int) {
	for {
		nA := 20 + r.IntN(1981)
		nB := int(math.Round(float64(nA) * (ratioLo + r.Float64()*(ratio-ratioLo))))
		if nB < 20 || nB > 2000 {
			continue
		}
		if r.IntN(2) == 0 {
			nA, nB = nB, nA
		}
		switch lo := min(nA, nB); mode {
		case "none":
			c = 0
		case "all":
			c = lo
		default:
			c = r.IntN(lo + 1)
		}
		a, b = overlapping(r, nA, nB, c)
		return a, b, c
	}
}

// TestAccuracy is the estimator's property test: sets of 20 to 2,000
// features with known overlaps, errors in units of the smaller set's
// size, by size ratio. Where the sizes are within a factor of 3 Compare
// always answers; further apart it may find no evidence and answer zeros
// (see minEvidence), and the bounds are on the answers it does give.
// Bounds hold the measured figures (in the log) with margin; the seeds
// are fixed.
func TestAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	type bound struct{ bias, rmse, resRMSE, abstain float64 }
	for _, c := range []struct {
		lo, hi float64
		mode   string
		max    bound
	}{
		{1, 1.5, "none", bound{0.015, 0.03, 0.015, 0}},
		{1, 1.5, "all", bound{0.002, 0.002, 0.002, 0}}, // the smaller's bits all in the larger's: exact
		{1, 1.5, "uniform", bound{0.005, 0.03, 0.02, 0}},
		{1.5, 3, "none", bound{0.03, 0.06, 0.025, 0}},
		{1.5, 3, "all", bound{0.002, 0.002, 0.002, 0}},
		{1.5, 3, "uniform", bound{0.005, 0.05, 0.025, 0}},
		{3, 10, "none", bound{0.07, 0.13, 0.025, 0.45}},
		{3, 10, "all", bound{0.002, 0.002, 0.002, 0.45}},
		{3, 10, "uniform", bound{0.015, 0.13, 0.025, 0.45}},
	} {
		var est, raw, res errStats
		abstained, falseHigh := 0, 0
		const trials = 400
		for range trials {
			a, b, n := trial(r, c.lo, c.hi, c.mode)
			fa, fb := New(a, DefaultBitsPerFeature), New(b, DefaultBitsPerFeature)
			e, err := Compare(fa, fb)
			if err != nil {
				t.Fatal(err)
			}
			lo := float64(min(len(a), len(b)))
			if e.Intersection < 0 || e.Intersection > lo || e.Resemblance < 0 || e.Resemblance > 1 || e.AInB > 1 || e.BInA > 1 {
				t.Fatalf("estimate out of range: %+v for %d, %d", e, len(a), len(b))
			}
			if e.Intersection/lo >= 0.8 && float64(n)/lo < 0.5 {
				falseHigh++
			}
			// The raw AND share of the smaller filter, read as its
			// containment.
			small, big := fa, fb
			if len(b) < len(a) {
				small, big = fb, fa
			}
			z := zeros(small.Bits, big.Bits)
			m := small.M()
			rawShare := float64(m-z.a-z.b+z.or) / float64(m-z.a)
			raw.add(rawShare - float64(n)/lo)
			if !informative(fa, fb) {
				if e != (Estimate{}) {
					t.Fatalf("no evidence, yet %+v", e)
				}
				abstained++
				continue
			}
			est.add((e.Intersection - float64(n)) / lo)
			res.add(e.Resemblance - float64(n)/float64(len(a)+len(b)-n))
		}
		share := float64(abstained) / trials
		t.Logf("sizes %.1f-%.1fx, overlap %-7s: no evidence %4.1f%%; otherwise intersection/min error mean %+.4f rmse %.4f, resemblance error mean %+.4f rmse %.4f; raw AND share error mean %+.4f",
			c.lo, c.hi, c.mode, 100*share, est.mean(), est.rmse(), res.mean(), res.rmse(), raw.mean())
		if math.Abs(est.mean()) > c.max.bias || est.rmse() > c.max.rmse || res.rmse() > c.max.resRMSE || share > c.max.abstain {
			t.Errorf("sizes %.1f-%.1fx, overlap %s: error mean %+.4f rmse %.4f, resemblance rmse %.4f, %.1f%% no evidence; want within %+v",
				c.lo, c.hi, c.mode, est.mean(), est.rmse(), res.rmse(), 100*share, c.max)
		}
		if falseHigh > 0 {
			t.Errorf("sizes %.1f-%.1fx, overlap %s: %d pairs sharing under half estimated at 0.8 or more", c.lo, c.hi, c.mode, falseHigh)
		}
		if c.mode == "none" && raw.mean() < 10*math.Abs(est.mean()) {
			t.Errorf("sizes %.1f-%.1fx, no overlap: the raw share's error %+.4f is not clearly worse than %+.4f", c.lo, c.hi, raw.mean(), est.mean())
		}
	}
}

// TestUninformative: at sizes 10 to 100 times apart the folded filter of
// the larger is full or nearly: Compare finds no evidence and answers
// zeros, rather than the containment 1 that the smaller's bits, all set
// in the larger's by chance, would otherwise show.
func TestUninformative(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, mode := range []string{"none", "all"} {
		answered, high, allSet := 0, 0, 0
		for range 200 {
			a, b, _ := trial(r, 10, 100, mode)
			fa, fb := New(a, 8), New(b, 8)
			e, _ := Compare(fa, fb)
			lo, hi := float64(min(len(a), len(b))), float64(max(len(a), len(b)))
			if e.Intersection < 0 || e.Intersection > lo || e.Resemblance > lo/hi+1e-12 {
				t.Fatalf("%d, %d: %+v", len(a), len(b), e)
			}
			if informative(fa, fb) {
				answered++
			} else if e != (Estimate{}) {
				t.Fatalf("no evidence, yet %+v", e)
			}
			if e.Intersection >= 0.8*lo {
				high++
			}
			if z := zeros(fa.Bits, fb.Bits); z.or == min(z.a, z.b) {
				allSet++ // the smaller's bits all set in the larger's
			}
		}
		t.Logf("sizes 10-100x, overlap %s: %d of 200 answered, %d at containment 0.8 or more; the smaller's bits all in the larger's in %d", mode, answered, high, allSet)
		if mode == "none" && (high > 0 || allSet < 100) {
			t.Errorf("overlap none: %d estimates at 0.8 or more, %d of 200 all bits set", high, allSet)
		}
		if answered > 20 {
			t.Errorf("overlap %s: %d of 200 answered", mode, answered)
		}
	}
}

// informative reports whether Compare finds evidence in the filters of
// two non-empty sets.
func informative(a, b Filter) bool {
	z := zeros(a.Bits, b.Bits)
	zS, zO := z.a, z.b
	if smallerB(float64(a.N), float64(b.N), z) {
		zS, zO = z.b, z.a
	}
	return z.or > 0 && evidence(float64(64*min(len(a.Bits), len(b.Bits))), zS, zO) >= minEvidence
}

// expectedFill is the literal inversion of m P(c) = popcount(A AND B),
// q^nA and q^nB from the sizes: the reference Compare improves on.
func expectedFill(fa, fb Filter) float64 {
	words := min(len(fa.Bits), len(fb.Bits))
	z := zeros(fa.Bits, fb.Bits)
	m := float64(64 * words)
	both := m - float64(z.a+z.b-z.or)
	lnq := math.Log1p(-float64(fa.K) / m)
	nA, nB := float64(fa.N), float64(fb.N)
	rr := both/m - 1 + math.Exp(nA*lnq) + math.Exp(nB*lnq)
	if rr <= 0 {
		return 0
	}
	return max(0, min(nA, nB, nA+nB-math.Log(rr)/lnq))
}

// TestObservedFillBeatsExpected: reading q^nA and q^nB off the filters
// is more accurate than taking their expectations.
func TestObservedFillBeatsExpected(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	var obs, exp errStats
	for range 600 {
		a, b, c := trial(r, 1, 3, "uniform")
		fa, fb := New(a, 8), New(b, 8)
		e, _ := Compare(fa, fb)
		lo := float64(min(len(a), len(b)))
		obs.add((e.Intersection - float64(c)) / lo)
		exp.add((expectedFill(fa, fb) - float64(c)) / lo)
	}
	t.Logf("sizes 1-3x: rmse of intersection/min: observed fill %.4f, expected fill %.4f; mean %+.4f, %+.4f", obs.rmse(), exp.rmse(), obs.mean(), exp.mean())
	if obs.rmse() > 0.85*exp.rmse() {
		t.Errorf("observed fill rmse %.4f, expected fill %.4f", obs.rmse(), exp.rmse())
	}
}

func BenchmarkNew(b *testing.B) {
	fs := features(rand.New(rand.NewPCG(9, 9)), 1000)
	for b.Loop() {
		New(fs, DefaultBitsPerFeature)
	}
}

func BenchmarkCompare(b *testing.B) {
	r := rand.New(rand.NewPCG(10, 10))
	for _, sizes := range []struct {
		name   string
		nA, nB int
	}{{"1000x1000", 1000, 1000}, {"1000x300", 1000, 300}, {"300x300", 300, 300}} {
		a, c := overlapping(r, sizes.nA, sizes.nB, sizes.nB/2)
		fa, fc := New(a, 8), New(c, 8)
		b.Run(sizes.name, func(b *testing.B) {
			for b.Loop() {
				Compare(fa, fc)
			}
		})
	}
}
