package sketch

import (
	"fmt"
	"math"
	mrand "math/rand"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/quick"

	"github.com/neardup/neardup/hashing/fingerprint"
)

func TestMinHashKind(t *testing.T) {
	if MinHash != 3 || MinHash.String() != "minhash" {
		t.Errorf("MinHash = %d %q, want 3 \"minhash\"", MinHash, MinHash.String())
	}
	f := func(n uint16) bool {
		s := Spec{MinHash, 1 + int(n)%MaxMinHashK}
		got, err := Parse(s.String())
		return err == nil && got == s
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 2000, Rand: mrand.New(mrand.NewSource(1))}); err != nil {
		t.Error(err)
	}
}

// naiveMinHash is MinHashValues written from its definition.
func naiveMinHash(shingles []uint64, k int) []uint64 {
	if len(shingles) == 0 {
		return nil
	}
	out := make([]uint64, k)
	for i := range out {
		key := fingerprint.Mix(uint64(i) + minHashSeedBase)
		out[i] = math.MaxUint64
		for _, x := range shingles {
			out[i] = min(out[i], fingerprint.Mix(x^key))
		}
	}
	return out
}

// TestMinHashGolden pins MinHashValues and the tagged sketch of a small
// input: a changed constant or hash would silently make stored MinHash
// sketches incomparable with new ones.
func TestMinHashGolden(t *testing.T) {
	in := []uint64{1, 2, 3, 1 << 40, math.MaxUint64}
	got := MinHashValues(nil, in, 4)
	// Checked against an independent (Python) evaluation of the
	// definition.
	want := []uint64{0x1937b1551b5e2e77, 0x5a96e32a8284cc3e, 0x5cadeebd2667c3d3, 0x31d426ee56b240f8}
	if !slices.Equal(got, want) {
		t.Errorf("MinHashValues = %#016x, want %#016x", got, want)
	}
	gotSel := Spec{MinHash, 4}.Select(nil, in)
	wantSel := []uint64{0x3420865751a743d7, 0x7e5b02328e8df5e4, 0x9af923a8d45823cc, 0x9d3ec91b59edfb51}
	if !slices.Equal(gotSel, wantSel) {
		t.Errorf("Select(minhash:4) = %#016x, want %#016x", gotSel, wantSel)
	}
}

func TestMinHashValues(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 10))
	for range 200 {
		in := randomSet(r, r.IntN(50), math.MaxUint64)
		k := 1 + r.IntN(40)
		got := MinHashValues([]uint64{9, 9, 9}, in, k)
		want := naiveMinHash(in, k)
		if !slices.Equal(got, want) {
			t.Fatalf("k=%d in=%v: %v, want %v", k, in, got, want)
		}
		// Each minimum is attained by a shingle of the set.
		for i, v := range got {
			key := fingerprint.Mix(uint64(i) + minHashSeedBase)
			if _, ok := slices.BinarySearch(in, fingerprint.UnMix(v)^key); !ok {
				t.Fatalf("position %d: %#x is no shingle's hash", i, v)
			}
		}
	}
	if got := MinHashValues([]uint64{1}, nil, 8); got != nil {
		t.Errorf("empty set: %v, want nil", got)
	}
	if got := (Spec{MinHash, 8}).Select(nil, nil); len(got) != 0 {
		t.Errorf("Select of empty set: %v", got)
	}
	for _, k := range []int{0, -1, MaxMinHashK + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("MinHashValues with k=%d did not panic", k)
				}
			}()
			MinHashValues(nil, []uint64{1}, k)
		}()
	}
}

// agreeing counts the positions at which two MinHashValues outputs agree.
func agreeing(a, b []uint64) int {
	n := 0
	for i := range min(len(a), len(b)) {
		if a[i] == b[i] {
			n++
		}
	}
	return n
}

func TestMinHashSharedTagsAreAgreeingPositions(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	agreeSome := 0
	for range 1000 {
		// A small universe gives every amount of overlap, including
		// equal sets; some positions then agree and others do not.
		universe := uint64(2 + r.IntN(60))
		a := randomSet(r, 1+r.IntN(20), universe)
		b := randomSet(r, 1+r.IntN(20), universe)
		k := 1 + r.IntN(64)
		spec := Spec{MinHash, k}
		sa, sb := spec.Select(nil, a), spec.Select(nil, b)
		if len(sa) != k || len(sb) != k || !slices.IsSorted(sa) {
			t.Fatalf("sketch sizes %d, %d (k=%d) or unsorted", len(sa), len(sb), k)
		}
		n := agreeing(MinHashValues(nil, a, k), MinHashValues(nil, b, k))
		if got := IntersectCount(sa, sb); got != n {
			t.Fatalf("a=%v b=%v k=%d: %d shared tags, %d agreeing positions", a, b, k, got, n)
		}
		if n > 0 && n < k {
			agreeSome++
		}
	}
	if agreeSome < 100 {
		t.Errorf("only %d cases with partial agreement", agreeSome)
	}
	// The same minimum at different positions must not look shared.
	if minHashTag(0, 42) == minHashTag(1, 42) {
		t.Error("tags ignore the position")
	}
}

func TestMinHashSelectAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 12))
	in := randomSet(r, 500, math.MaxUint64)
	dst := make([]uint64, 0, 512)
	for _, k := range []int{1, 128, 512} {
		spec := Spec{MinHash, k}
		if n := testing.AllocsPerRun(20, func() { dst = spec.Select(dst, in) }); n != 0 {
			t.Errorf("Select(minhash:%d) into a big enough dst allocates %v times", k, n)
		}
	}
}

func TestMinHashUnbiased(t *testing.T) {
	const trials, k = 300, 64
	r := rand.New(rand.NewPCG(13, 13))
	spec := Spec{MinHash, k}
	var sa, sb []uint64
	for _, tc := range []struct{ c, pa, pb int }{
		{100, 200, 200}, // J = 0.2
		{250, 100, 150}, // J = 0.5
		{400, 50, 50},   // J = 0.8
		{500, 0, 0},     // J = 1
	} {
		j := float64(tc.c) / float64(tc.c+tc.pa+tc.pb)
		var est []float64
		for range trials {
			a, b := pair(r, tc.c, tc.pa, tc.pb)
			sa, sb = spec.Select(sa, a), spec.Select(sb, b)
			est = append(est, MinHashResemblance(IntersectCount(sa, sb), k))
		}
		name := fmt.Sprintf("MinHash k=%d J=%.1f", k, j)
		checkUnbiased(t, name, est, j)
		// Independent positions make the count of agreeing positions
		// Binomial(k, J): variance J(1-J)/k. Correlated hash functions
		// would inflate it. With 300 trials the sample variance is within
		// about 4 * sqrt(2/299) = 33% of the true one.
		if j < 1 {
			_, se := meanSE(est)
			v, want := se*se*trials, j*(1-j)/k
			if ratio := v / want; ratio < 0.67 || ratio > 1.33 {
				t.Errorf("%s: variance %.5f, binomial %.5f (ratio %.2f)", name, v, want, ratio)
			}
		}
	}
}

// TestMinHashStructuredInputs checks that the K hash functions are
// min-wise on inputs that are far from random (consecutive integers,
// values differing only in high bits), where a weak permutation family
// would be biased: with K = 4096 positions the agreeing fraction of one
// pair is within a few binomial standard errors of the exact resemblance.
func TestMinHashStructuredInputs(t *testing.T) {
	const k = MaxMinHashK
	span := func(lo, hi, step uint64) []uint64 {
		var s []uint64
		for x := lo; x < hi; x++ {
			s = append(s, x*step)
		}
		return s
	}
	for _, tc := range []struct {
		name string
		a, b []uint64
	}{
		{"consecutive", span(0, 1000, 1), span(500, 1500, 1)},
		{"high bits", span(0, 300, 1<<40), span(100, 400, 1<<40)},
		{"tiny", []uint64{1, 2, 3}, []uint64{3, 4, 5}},
		{"pair", []uint64{7}, []uint64{7, 8}},
		{"contained", span(0, 100, 1), span(0, 1000, 1)},
	} {
		j := Jaccard(tc.a, tc.b)
		got := MinHashResemblance(agreeing(MinHashValues(nil, tc.a, k), MinHashValues(nil, tc.b, k)), k)
		se := math.Sqrt(j * (1 - j) / k)
		if d := math.Abs(got - j); d > 4*se+1e-9 {
			t.Errorf("%s: estimate %.4f, exact %.4f (|diff| %.4f > 4 SE = %.4f)", tc.name, got, j, d, 4*se)
		} else {
			t.Logf("%s: estimate %.4f, exact %.4f, SE %.4f", tc.name, got, j, se)
		}
	}
}

func ExampleMinHashResemblance() {
	spec, err := Parse("minhash:256")
	if err != nil {
		panic(err)
	}
	var a, b []uint64 // two documents' shingle fingerprints, sorted
	for x := range uint64(300) {
		a = append(a, fingerprint.Mix(x))
		b = append(b, fingerprint.Mix(x+100))
	}
	slices.Sort(a)
	slices.Sort(b)
	sa, sb := spec.Select(nil, a), spec.Select(nil, b)
	fmt.Println(spec, len(sa), len(sb))
	fmt.Printf("resemblance ≈ %.2f (exact %.2f)\n", MinHashResemblance(IntersectCount(sa, sb), spec.N), Jaccard(a, b))
	// Output:
	// minhash:256 256 256
	// resemblance ≈ 0.49 (exact 0.50)
}

// minHashShinglesOuter is the other loop order: each shingle once, against
// K running minima kept in dst.
func minHashShinglesOuter(dst, shingles []uint64, k int) []uint64 {
	dst = slices.Grow(dst[:0], k)[:k]
	keys := make([]uint64, k)
	for i := range keys {
		keys[i] = minHashSeed(i)
		dst[i] = math.MaxUint64
	}
	for _, x := range shingles {
		for i, key := range keys {
			dst[i] = min(dst[i], fingerprint.Mix(x^key))
		}
	}
	return dst
}

// minHashOnePerPass is the simplest loop: one position per pass.
func minHashOnePerPass(dst, shingles []uint64, k int) []uint64 {
	dst = dst[:0]
	for i := range k {
		key := minHashSeed(i)
		m := uint64(math.MaxUint64)
		for _, x := range shingles {
			m = min(m, fingerprint.Mix(x^key))
		}
		dst = append(dst, m)
	}
	return dst
}

// minHashFourPerPass runs four positions per pass over the shingles.
func minHashFourPerPass(dst, shingles []uint64, k int) []uint64 {
	dst = dst[:0]
	i := 0
	for ; i+4 <= k; i += 4 {
		k0, k1, k2, k3 := minHashSeed(i), minHashSeed(i+1), minHashSeed(i+2), minHashSeed(i+3)
		m0, m1, m2, m3 := uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64), uint64(math.MaxUint64)
		for _, x := range shingles {
			m0 = min(m0, fingerprint.Mix(x^k0))
			m1 = min(m1, fingerprint.Mix(x^k1))
			m2 = min(m2, fingerprint.Mix(x^k2))
			m3 = min(m3, fingerprint.Mix(x^k3))
		}
		dst = append(dst, m0, m1, m2, m3)
	}
	for ; i < k; i++ {
		key := minHashSeed(i)
		m := uint64(math.MaxUint64)
		for _, x := range shingles {
			m = min(m, fingerprint.Mix(x^key))
		}
		dst = append(dst, m)
	}
	return dst
}

func TestMinHashLoopVariantsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 15))
	for range 50 {
		in := randomSet(r, 1+r.IntN(100), math.MaxUint64)
		k := 1 + r.IntN(20)
		want := MinHashValues(nil, in, k)
		for name, f := range map[string]func(dst, shingles []uint64, k int) []uint64{
			"one": minHashOnePerPass, "four": minHashFourPerPass, "outer": minHashShinglesOuter,
		} {
			if got := f(nil, in, k); !slices.Equal(got, want) {
				t.Fatalf("%s k=%d: %v, want %v", name, k, got, want)
			}
		}
	}
}

func BenchmarkMinHashValues(b *testing.B) {
	r := rand.New(rand.NewPCG(14, 14))
	shingles := randomSet(r, 1000, math.MaxUint64)
	const k = 128
	perHash := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(k*len(shingles)), "ns/hash")
	}
	b.Run("k=128/n=1000", func(b *testing.B) {
		var dst []uint64
		for b.Loop() {
			dst = MinHashValues(dst, shingles, k)
		}
		perHash(b)
		sink = dst
	})
	for _, v := range []struct {
		name string
		f    func(dst, shingles []uint64, k int) []uint64
	}{
		{"loops/one-position-per-pass", minHashOnePerPass},
		{"loops/four-positions-per-pass", minHashFourPerPass},
		{"loops/shingles-outer", minHashShinglesOuter},
	} {
		b.Run(v.name, func(b *testing.B) {
			var dst []uint64
			for b.Loop() {
				dst = v.f(dst, shingles, k)
			}
			perHash(b)
			sink = dst
		})
	}
	b.Run("select/minhash:128", func(b *testing.B) {
		var dst []uint64
		spec := Spec{MinHash, k}
		for b.Loop() {
			dst = spec.Select(dst, shingles)
		}
		perHash(b)
		sink = dst
	})
}

func TestTagMinHashIsSelect(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	set := make([]uint64, 300)
	for i := range set {
		set[i] = rng.Uint64()
	}
	slices.Sort(set)
	spec := Spec{Kind: MinHash, N: 64}
	want := spec.Select(nil, set)
	got := TagMinHash(nil, MinHashValues(nil, set, 64))
	if !slices.Equal(got, want) {
		t.Error("TagMinHash(MinHashValues(x)) differs from Select(x)")
	}
}
