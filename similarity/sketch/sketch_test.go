package sketch

import (
	"fmt"
	"math"
	mrand "math/rand"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/quick"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		str  string
	}{
		{"mod:25", Spec{Mod, 25}, "mod:25"},
		{"min:100", Spec{Min, 100}, "min:100"},
		{"MOD:1", Spec{Mod, 1}, "mod:1"},
		{"Min:65535", Spec{Min, 65535}, "min:65535"},
		{"mod:1000000007", Spec{Mod, 1000000007}, "mod:1000000007"},
		{"minhash:128", Spec{MinHash, 128}, "minhash:128"},
		{"MinHash:1", Spec{MinHash, 1}, "minhash:1"},
		{"MINHASH:4096", Spec{MinHash, MaxMinHashK}, "minhash:4096"},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			continue
		}
		if got.String() != tc.str {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.str)
		}
		if again, err := Parse(got.String()); err != nil || again != got {
			t.Errorf("round trip of %q: %v, %v", tc.in, again, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{
		"", "mod", "mod25", "mod:", "mod:x", "mod:0", "mod:-3", "min:0",
		"min:65536", "max:10", "mod:2.5", " mod:25", "mod:25 ", "mod:25:1",
		"minhash:0", "minhash:4097", "minhash:", "minhash", "min-hash:8", "minhash:-1",
	} {
		_, err := Parse(in)
		if err == nil {
			t.Errorf("Parse(%q) succeeded", in)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", in)) {
			t.Errorf("Parse(%q) error %q does not name the input", in, err)
		}
	}
}

func TestSpecStringRoundTrip(t *testing.T) {
	f := func(min bool, n uint16) bool {
		s := Spec{Mod, int(n) + 1}
		if min {
			s = Spec{Min, max(int(n), 1)}
		}
		got, err := Parse(s.String())
		return err == nil && got == s
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 2000, Rand: mrand.New(mrand.NewSource(1))}); err != nil {
		t.Error(err)
	}
	if got := (Spec{Kind: 9, N: 3}).String(); got != "Kind(9):3" {
		t.Errorf("invalid kind prints %q", got)
	}
}

func TestSelectMod(t *testing.T) {
	// MaxUint64-15 = 2^64-16 is a multiple of 400 (= 16*25); MaxUint64
	// is neither a multiple of 16 nor of 25.
	in := []uint64{0, 1, 5, 24, 25, 26, 50, 75, 99, 100, math.MaxUint64 - 15, math.MaxUint64}
	got := Spec{Mod, 25}.Select(nil, in)
	if want := []uint64{0, 25, 50, 75, 100, math.MaxUint64 - 15}; !slices.Equal(got, want) {
		t.Errorf("mod:25 = %v, want %v", got, want)
	}
	if got := (Spec{Mod, 1}).Select(nil, in); !slices.Equal(got, in) {
		t.Errorf("mod:1 = %v, want everything", got)
	}
	if got := (Spec{Mod, 16}).Select(nil, in); !slices.Equal(got, []uint64{0, math.MaxUint64 - 15}) {
		t.Errorf("mod:16 = %v", got)
	}
}

func TestDivisorMatchesModulo(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	ms := []uint64{1, 2, 3, 5, 7, 24, 25, 64, 96, 1000, 1 << 40, 3 << 40, math.MaxUint64, math.MaxUint64 - 1}
	for range 50 {
		ms = append(ms, r.Uint64N(1<<20)+1, r.Uint64()|1, r.Uint64())
	}
	for _, m := range ms {
		if m == 0 {
			continue
		}
		d := newDivisor(m)
		for range 2000 {
			var x uint64
			switch r.IntN(3) {
			case 0:
				x = r.Uint64()
			case 1:
				x = m * r.Uint64() // a multiple (mod 2^64 wrap may break it)
			default:
				x = m*r.Uint64N(1<<10) + r.Uint64N(3) - 1
			}
			if d.divides(x) != (x%m == 0) {
				t.Fatalf("divides(%d) by %d = %v, want %v", x, m, d.divides(x), x%m == 0)
			}
		}
	}
}

func TestSelectMin(t *testing.T) {
	in := []uint64{3, 8, 9, 20, 40}
	if got := (Spec{Min, 3}).Select(nil, in); !slices.Equal(got, []uint64{3, 8, 9}) {
		t.Errorf("min:3 = %v", got)
	}
	if got := (Spec{Min, 10}).Select(nil, in); !slices.Equal(got, in) {
		t.Errorf("min:10 = %v, want all", got)
	}
	if got := (Spec{Min, 3}).Select(nil, nil); len(got) != 0 {
		t.Errorf("min of nothing = %v", got)
	}
	// dst is reused from its start, and the result never aliases the
	// input.
	dst := []uint64{7, 7, 7, 7}
	got := Spec{Min, 2}.Select(dst, in)
	if !slices.Equal(got, []uint64{3, 8}) || &got[0] != &dst[0] {
		t.Errorf("Select did not reuse dst: %v", got)
	}
	got[0] = 99
	if in[0] != 3 {
		t.Error("Select result aliases its input")
	}
}

func TestSelectInPlace(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for _, spec := range []Spec{{Mod, 3}, {Mod, 1}, {Min, 5}, {Min, 1000}, {MinHash, 7}, {MinHash, 600}} {
		for range 100 {
			in := randomSet(r, r.IntN(300), 1000)
			want := spec.Select(nil, in)
			got := spec.Select(in[:0], in)
			if !slices.Equal(got, want) {
				t.Fatalf("%v in place: %v, want %v", spec, got, want)
			}
		}
	}
}

func TestSelectInvalidPanics(t *testing.T) {
	for _, s := range []Spec{{}, {Mod, 0}, {Min, 0}, {Min, 70000}, {7, 5}, {MinHash, 0}, {MinHash, MaxMinHashK + 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Select with %v did not panic", s)
				}
			}()
			s.Select(nil, []uint64{1})
		}()
	}
}

func TestEstimatorEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"mod empty", ModResemblance(0, 0, 0), 0},
		{"mod disjoint", ModResemblance(0, 3, 4), 0},
		{"mod equal", ModResemblance(5, 5, 5), 1},
		{"mod half", ModResemblance(2, 3, 3), 0.5},
		{"mod one empty", ModResemblance(0, 0, 7), 0},
		{"containment empty", Containment(0, 0), 0},
		{"containment full", Containment(4, 4), 1},
		{"containment part", Containment(1, 4), 0.25},
		{"min empty", MinResemblance(nil, nil, 10), 0},
		{"min one empty", MinResemblance(nil, []uint64{1}, 10), 0},
		{"min equal", MinResemblance([]uint64{1, 2}, []uint64{1, 2}, 10), 1},
		{"min s=0", MinResemblance([]uint64{1}, []uint64{1}, 0), 0},
		{"jaccard empty", Jaccard(nil, nil), 0},
		{"jaccard", Jaccard([]uint64{1, 2, 3}, []uint64{2, 3, 4}), 0.5},
		{"ranks empty", MinResemblanceFromRanks(nil, 0, 0, 5), 0},
		{"ranks disjoint", MinResemblanceFromRanks(nil, 3, 3, 5), 0},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestMinResemblanceWorked(t *testing.T) {
	// A = {1,3,5,7,9}, B = {1,2,3,4,5}, s = 4: the union's 4 smallest are
	// {1,2,3,4}, of which 1 and 3 are in both: 2/4.
	a, b := []uint64{1, 3, 5, 7, 9}, []uint64{1, 2, 3, 4, 5}
	fa, fb := Spec{Min, 4}.Select(nil, a), Spec{Min, 4}.Select(nil, b)
	if got := MinResemblance(fa, fb, 4); got != 0.5 {
		t.Errorf("MinResemblance = %v, want 0.5", got)
	}
	// Shared elements of F(A)={1,3,5,7}, F(B)={1,2,3,4}: 1 at ranks
	// (0,0), 3 at (1,2). Union ranks 0 and 1+2-1 = 2, both < 4.
	ranks := [][2]uint16{{0, 0}, {1, 2}}
	if got := MinSharedInUnion(ranks, 4); got != 2 {
		t.Errorf("MinSharedInUnion = %d, want 2", got)
	}
	if got := MinSharedInUnion(ranks, 2); got != 1 {
		t.Errorf("MinSharedInUnion(s=2) = %d, want 1", got)
	}
	if got := MinResemblanceFromRanks(ranks, 4, 4, 4); got != 0.5 {
		t.Errorf("MinResemblanceFromRanks = %v, want 0.5", got)
	}
}

// sharedRanks lists, for the elements common to sorted a and b, their
// ranks in a and in b, in ascending value order: what a pipeline that
// joins two sketches on shared shingles sees.
func sharedRanks(a, b []uint64) [][2]uint16 {
	var out [][2]uint16
	for i, x := range a {
		if j, ok := slices.BinarySearch(b, x); ok {
			out = append(out, [2]uint16{uint16(i), uint16(j)})
		}
	}
	return out
}

func TestMinResemblanceFromRanksMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for range 3000 {
		s := 1 + r.IntN(60)
		// A small universe makes overlaps, including whole-sketch ones.
		universe := uint64(1 + r.IntN(200))
		a := randomSet(r, r.IntN(150), universe)
		b := randomSet(r, r.IntN(150), universe)
		spec := Spec{Min, s}
		fa, fb := spec.Select(nil, a), spec.Select(nil, b)
		want := MinResemblance(fa, fb, s)
		ranks := sharedRanks(fa, fb)
		got := MinResemblanceFromRanks(ranks, len(fa), len(fb), s)
		if got != want {
			t.Fatalf("s=%d fa=%v fb=%v: from ranks %v, direct %v", s, fa, fb, got, want)
		}
		// MIN_s of the union of the sketches is MIN_s of the union of
		// the sets, so the full sets give the same value too.
		if full := MinResemblance(a, b, s); full != want {
			t.Fatalf("s=%d: from sets %v, from sketches %v", s, full, want)
		}
	}
}

func randomSet(r *rand.Rand, n int, universe uint64) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = r.Uint64N(universe)
	}
	slices.Sort(s)
	return slices.Compact(s)
}

func TestIntersectAndJaccardAgainstMaps(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 500 {
		a := randomSet(r, r.IntN(100), 150)
		b := randomSet(r, r.IntN(100), 150)
		in := map[uint64]bool{}
		for _, x := range a {
			in[x] = true
		}
		n := 0
		for _, x := range b {
			if in[x] {
				n++
			}
		}
		if got := IntersectCount(a, b); got != n {
			t.Fatalf("IntersectCount = %d, want %d", got, n)
		}
		if u := len(a) + len(b) - n; u > 0 && Jaccard(a, b) != float64(n)/float64(u) {
			t.Fatalf("Jaccard wrong")
		}
	}
}

// pair builds two random fingerprint sets sharing a core of c values, A
// with pa and B with pb private values: |A∩B| = c, |A∪B| = c+pa+pb.
// Fresh random values each call amount to a fresh random permutation,
// which is what the estimators' expectation is over.
func pair(r *rand.Rand, c, pa, pb int) (a, b []uint64) {
	a = make([]uint64, 0, c+pa)
	b = make([]uint64, 0, c+pb)
	for range c {
		x := r.Uint64()
		a = append(a, x)
		b = append(b, x)
	}
	for range pa {
		a = append(a, r.Uint64())
	}
	for range pb {
		b = append(b, r.Uint64())
	}
	slices.Sort(a)
	slices.Sort(b)
	// 64-bit values repeat with probability ~n^2/2^65; check anyway,
	// since the exact J below assumes distinct values.
	if len(slices.Compact(slices.Clone(a))) != len(a) || IntersectCount(a, b) != c {
		panic("random values collided")
	}
	return a, b
}

// meanSE returns the sample mean and its standard error.
func meanSE(xs []float64) (mean, se float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	return mean, sd / math.Sqrt(float64(len(xs)))
}

// checkUnbiased asserts |mean - want| < 4 SE (+ a tiny epsilon for the
// zero-variance case): an unbiased estimator fails this with probability
// about 6e-5, and the fixed seed makes the outcome deterministic anyway.
func checkUnbiased(t *testing.T, name string, xs []float64, want float64) {
	t.Helper()
	mean, se := meanSE(xs)
	if d := math.Abs(mean - want); d >= 4*se+1e-9 {
		t.Errorf("%s: mean %.4f over %d trials, want %.4f (|diff| %.4f >= 4 SE = %.4f)", name, mean, len(xs), want, d, 4*se)
	} else {
		t.Logf("%s: mean %.4f ± %.4f (SE), exact %.4f", name, mean, se, want)
	}
}

func TestEstimatorsUnbiased(t *testing.T) {
	const trials = 300
	r := rand.New(rand.NewPCG(4, 4))
	mod25 := Spec{Mod, 25}
	min100 := Spec{Min, 100}
	var va, vb, fa, fb []uint64
	for _, tc := range []struct{ c, pa, pb int }{
		{800, 1600, 1600},  // J = 0.2
		{2000, 1000, 1000}, // J = 0.5
		{3200, 300, 500},   // J = 0.8
	} {
		j := float64(tc.c) / float64(tc.c+tc.pa+tc.pb)
		var modEst, minEst []float64
		for range trials {
			a, b := pair(r, tc.c, tc.pa, tc.pb)
			if got := Jaccard(a, b); math.Abs(got-j) > 1e-12 {
				t.Fatalf("exact Jaccard %v, want %v", got, j)
			}
			va, vb = mod25.Select(va, a), mod25.Select(vb, b)
			modEst = append(modEst, ModResemblance(IntersectCount(va, vb), len(va), len(vb)))
			fa, fb = min100.Select(fa, a), min100.Select(fb, b)
			minEst = append(minEst, MinResemblance(fa, fb, 100))
		}
		checkUnbiased(t, fmt.Sprintf("MOD_25 J=%.1f", j), modEst, j)
		checkUnbiased(t, fmt.Sprintf("MIN_100 J=%.1f", j), minEst, j)
	}
}

func TestContainmentUnbiased(t *testing.T) {
	const trials = 300
	r := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct{ c, pa, pb, m int }{
		{1000, 0, 3000, 25},    // A inside B: containment 1
		{1800, 200, 2000, 25},  // A mostly inside B: 0.9
		{1000, 1000, 3000, 10}, // half: 0.5
	} {
		spec := Spec{Mod, tc.m}
		want := float64(tc.c) / float64(tc.c+tc.pa)
		var est []float64
		for range trials {
			a, b := pair(r, tc.c, tc.pa, tc.pb)
			va, vb := spec.Select(nil, a), spec.Select(nil, b)
			est = append(est, Containment(IntersectCount(va, vb), len(va)))
		}
		checkUnbiased(t, fmt.Sprintf("containment MOD_%d c=%.1f", tc.m, want), est, want)
	}
}

func Example() {
	spec, err := Parse("mod:4")
	if err != nil {
		panic(err)
	}
	a := []uint64{4, 8, 9, 12, 16, 21}  // sorted shingle fingerprints
	b := []uint64{4, 8, 12, 13, 20, 24} // of two documents
	va, vb := spec.Select(nil, a), spec.Select(nil, b)
	shared := IntersectCount(va, vb)
	fmt.Println(spec, va, vb)
	fmt.Printf("resemblance ≈ %.2f (exact %.2f), containment of a in b ≈ %.2f\n",
		ModResemblance(shared, len(va), len(vb)), Jaccard(a, b), Containment(shared, len(va)))
	// Output:
	// mod:4 [4 8 12 16] [4 8 12 20 24]
	// resemblance ≈ 0.50 (exact 0.33), containment of a in b ≈ 0.75
}

func ExampleMinResemblanceFromRanks() {
	// Sketches of two documents under min:4.
	fa := []uint64{10, 20, 30, 40}
	fb := []uint64{10, 15, 30, 35}
	// A pipeline joining on shared shingles sees 10 at ranks (0,0) and
	// 30 at ranks (2,2), plus both sketch sizes.
	ranks := [][2]uint16{{0, 0}, {2, 2}}
	fmt.Println(MinResemblanceFromRanks(ranks, len(fa), len(fb), 4), MinResemblance(fa, fb, 4))
	// Output: 0.5 0.5
}

var sink []uint64

// opaque25 is a variable so that the compiler cannot turn x%m into a
// multiplication by a known constant, as it cannot in Select.
var opaque25 = 25

func BenchmarkSelect(b *testing.B) {
	r := rand.New(rand.NewPCG(6, 6))
	shingles := randomSet(r, 10000, math.MaxUint64)
	for _, spec := range []Spec{{Mod, 25}, {Mod, 32}, {Min, 100}} {
		b.Run(spec.String(), func(b *testing.B) {
			var dst []uint64
			for b.Loop() {
				dst = spec.Select(dst, shingles)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(shingles)), "ns/shingle")
			sink = dst
		})
	}
	b.Run("mod:25/hw-division", func(b *testing.B) {
		// The straightforward loop, for comparison with the divisor.
		m := uint64(opaque25)
		var dst []uint64
		for b.Loop() {
			dst = dst[:0]
			for _, x := range shingles {
				if x%m == 0 {
					dst = append(dst, x)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(shingles)), "ns/shingle")
		sink = dst
	})
}

func BenchmarkMinResemblance(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	x, y := pair(r, 500, 500, 500)
	fa, fb := Spec{Min, 100}.Select(nil, x), Spec{Min, 100}.Select(nil, y)
	for b.Loop() {
		_ = MinResemblance(fa, fb, 100)
	}
}
