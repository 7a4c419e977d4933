package sketch_test

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/features/shingle"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/text/canon"
)

var hasher = fingerprint.New(fingerprint.DefaultSeed)

// FuzzSketch runs two texts through the pipeline's sketching steps
// (canon.Tokens, shingle.Fingerprints with w in 1..12, and Select with
// mod:m for m in 1..256, min:s for s in 1..256 and minhash:K for K in
// 1..640, so past the 512 minima kept on the stack) and checks each step
// against a plain reference, and the estimators on the resulting sketches:
//
//   - the shingles are sorted and distinct, at most max(0, len(tokens)-w+1)
//     of them, and the set of Shingle of every window of token hashes;
//   - mod:m selects exactly the shingles that are 0 mod m (by the %
//     operator), min:s exactly the s smallest, and minhash:K at most K
//     sorted distinct values, none for no shingles, equal to TagMinHash of
//     MinHashValues (which has K values); each also when selecting in place
//     (and mod and min into a used dst);
//   - a sketch against itself: IntersectCount is its size, resemblance
//     (ModResemblance, Jaccard, MinResemblance, MinResemblanceFromRanks,
//     MinHashResemblance) and containment are 1 when it is non-empty, 0
//     when it is empty;
//   - two sketches: IntersectCount, ModResemblance, MinResemblance,
//     Jaccard and MinHashResemblance are symmetric and within [0, 1],
//     Containment is within [0, 1], MinResemblance equals the MIN_s
//     estimate computed from its definition and MinResemblanceFromRanks,
//     and the MinHash intersection counts the agreeing positions.
//
// A minhash:K sketch has exactly K values unless two positions' tags
// collide in 64 bits, which no fuzzer input can be aimed at; the checks
// assume they do not.
func FuzzSketch(f *testing.F) {
	f.Add("a rose is a rose is a rose", "a rose is a flower which is a rose", uint8(2), uint8(1), uint8(3), uint16(15))
	f.Fuzz(func(t *testing.T, a, b string, w, m, s uint8, k uint16) {
		ww := 1 + int(w%12)
		mod := sketch.Spec{Kind: sketch.Mod, N: 1 + int(m)}
		mins := sketch.Spec{Kind: sketch.Min, N: 1 + int(s)}
		mh := sketch.Spec{Kind: sketch.MinHash, N: 1 + int(k)%640}

		sa := checkShingles(t, canon.Tokens(a), ww)
		sb := checkShingles(t, canon.Tokens(b), ww)
		checkPair(t, "shingles", sa, sb)
		if j := sketch.Jaccard(sa, sb); (j == 1) != (len(sa) > 0 && slices.Equal(sa, sb)) {
			t.Fatalf("Jaccard = %v for shingle sets %x and %x", j, sa, sb)
		}

		// mod:m
		va, vb := checkSelect(t, mod, sa), checkSelect(t, mod, sb)
		for _, v := range [][]uint64{va, vb} {
			checkSelf(t, "mod", v, func(v []uint64) float64 {
				return sketch.ModResemblance(sketch.IntersectCount(v, v), len(v), len(v))
			})
			checkSelf(t, "mod containment", v, func(v []uint64) float64 {
				return sketch.Containment(sketch.IntersectCount(v, v), len(v))
			})
			checkSelf(t, "jaccard", v, func(v []uint64) float64 { return sketch.Jaccard(v, v) })
		}
		shared := checkPair(t, "mod", va, vb)
		r, r2 := sketch.ModResemblance(shared, len(va), len(vb)), sketch.ModResemblance(shared, len(vb), len(va))
		if r != r2 || !unit(r) {
			t.Fatalf("mod: ModResemblance(%d, %d, %d) = %v, swapped %v", shared, len(va), len(vb), r, r2)
		}
		if c, c2 := sketch.Containment(shared, len(va)), sketch.Containment(shared, len(vb)); !unit(c) || !unit(c2) {
			t.Fatalf("mod: Containment of %d shared in %d or %d is %v, %v", shared, len(va), len(vb), c, c2)
		}

		// min:s
		fa, fb := checkSelect(t, mins, sa), checkSelect(t, mins, sb)
		for _, v := range [][]uint64{fa, fb} {
			checkSelf(t, "min", v, func(v []uint64) float64 { return sketch.MinResemblance(v, v, mins.N) })
			checkSelf(t, "min from ranks", v, func(v []uint64) float64 {
				return sketch.MinResemblanceFromRanks(ranks(v, v), len(v), len(v), mins.N)
			})
		}
		checkPair(t, "min", fa, fb)
		r, r2 = sketch.MinResemblance(fa, fb, mins.N), sketch.MinResemblance(fb, fa, mins.N)
		if want := minEstimate(fa, fb, mins.N); r != want || r2 != want {
			t.Fatalf("min:%d: MinResemblance of %x and %x = %v, swapped %v, want %v", mins.N, fa, fb, r, r2, want)
		}
		if got := sketch.MinResemblanceFromRanks(ranks(fa, fb), len(fa), len(fb), mins.N); got != r {
			t.Fatalf("min:%d: MinResemblanceFromRanks = %v, MinResemblance %v", mins.N, got, r)
		}
		if got := sketch.MinResemblanceFromRanks(ranks(fb, fa), len(fb), len(fa), mins.N); got != r {
			t.Fatalf("min:%d: MinResemblanceFromRanks swapped = %v, MinResemblance %v", mins.N, got, r)
		}

		// minhash:K
		ma, mb := checkSelect(t, mh, sa), checkSelect(t, mh, sb)
		for _, v := range [][]uint64{ma, mb} {
			checkSelf(t, "minhash", v, func(v []uint64) float64 {
				return sketch.MinHashResemblance(sketch.IntersectCount(v, v), mh.N)
			})
		}
		shared = checkPair(t, "minhash", ma, mb)
		if agree := agreeing(sketch.MinHashValues(nil, sa, mh.N), sketch.MinHashValues(nil, sb, mh.N)); shared != agree {
			t.Fatalf("minhash:%d: sketches share %d values, but %d positions agree", mh.N, shared, agree)
		}
		if r := sketch.MinHashResemblance(shared, mh.N); !unit(r) {
			t.Fatalf("minhash:%d: MinHashResemblance(%d) = %v", mh.N, shared, r)
		}
	})
}

// checkShingles returns the shingles of toks after checking them against
// their definition.
func checkShingles(t *testing.T, toks []string, w int) []uint64 {
	t.Helper()
	got := shingle.Fingerprints(nil, hasher, toks, w)
	if n := max(0, len(toks)-w+1); len(got) > n || shingle.Count(len(toks), w) != n {
		t.Fatalf("w=%d, %d tokens: %d shingles, Count %d, want at most %d", w, len(toks), len(got), shingle.Count(len(toks), w), n)
	}
	if !sortedDistinct(got) {
		t.Fatalf("w=%d tokens=%q: shingles not sorted and distinct: %x", w, toks, got)
	}
	want := map[uint64]bool{}
	hs := make([]uint64, w)
	for i := 0; i+w <= len(toks); i++ {
		for j := range hs {
			hs[j] = hasher.String(toks[i+j])
		}
		want[hasher.Shingle(hs)] = true
	}
	if len(got) != len(want) {
		t.Fatalf("w=%d tokens=%q: %d shingles, want %d", w, toks, len(got), len(want))
	}
	for _, x := range got {
		if !want[x] {
			t.Fatalf("w=%d tokens=%q: %x is no window's shingle", w, toks, x)
		}
	}
	return got
}

// checkSelect returns spec's sketch of the shingle set set after checking
// it against its definition, and that selecting in place or into a used
// dst gives the same.
func checkSelect(t *testing.T, spec sketch.Spec, set []uint64) []uint64 {
	t.Helper()
	got := spec.Select(nil, set)
	switch spec.Kind {
	case sketch.Mod:
		var want []uint64
		for _, x := range set {
			if x%uint64(spec.N) == 0 {
				want = append(want, x)
			}
		}
		if !equal(got, want) {
			t.Fatalf("%v of %x = %x, want %x", spec, set, got, want)
		}
	case sketch.Min:
		if want := set[:min(spec.N, len(set))]; !equal(got, want) {
			t.Fatalf("%v of %x = %x, want the %d smallest %x", spec, set, got, spec.N, want)
		}
	case sketch.MinHash:
		if len(got) > spec.N || (len(got) == 0) != (len(set) == 0) || !sortedDistinct(got) {
			t.Fatalf("%v of %d shingles: %d values %x, want 1..%d sorted distinct (none for no shingles)", spec, len(set), len(got), got, spec.N)
		}
		values := sketch.MinHashValues(nil, set, spec.N)
		if len(set) > 0 && len(values) != spec.N {
			t.Fatalf("MinHashValues(%d) of %d shingles has %d values", spec.N, len(set), len(values))
		}
		if want := sketch.TagMinHash(nil, values); !equal(got, want) {
			t.Fatalf("%v = %x, TagMinHash(MinHashValues) = %x", spec, got, want)
		}
	}
	inPlace := slices.Clone(set)
	if again := spec.Select(inPlace[:0], inPlace); !equal(again, got) {
		t.Fatalf("%v of %x in place = %x, want %x", spec, set, again, got)
	}
	if spec.Kind != sketch.MinHash { // as costly as the rest, for little
		used := []uint64{1, 2, 3, ^uint64(0)}
		if again := spec.Select(used, set); !equal(again, got) {
			t.Fatalf("%v of %x into a used dst = %x, want %x", spec, set, again, got)
		}
	}
	return got
}

// checkSelf checks that est(v), an estimate of v against itself, is 1 when
// v is non-empty and 0 when it is empty.
func checkSelf(t *testing.T, name string, v []uint64, est func([]uint64) float64) {
	t.Helper()
	want := 0.0
	if len(v) > 0 {
		want = 1
	}
	if got := est(v); got != want {
		t.Fatalf("%s: a sketch of %d values against itself gives %v, want %v", name, len(v), got, want)
	}
}

// checkPair returns |a∩b| after checking IntersectCount (symmetric, and
// the size of the sketch against itself) against a map, and Jaccard
// (symmetric, in [0, 1]).
func checkPair(t *testing.T, name string, a, b []uint64) int {
	t.Helper()
	in := map[uint64]bool{}
	for _, x := range a {
		in[x] = true
	}
	want := 0
	for _, x := range b {
		if in[x] {
			want++
		}
	}
	if n, n2 := sketch.IntersectCount(a, b), sketch.IntersectCount(b, a); n != want || n2 != want {
		t.Fatalf("%s: IntersectCount = %d, swapped %d, want %d", name, n, n2, want)
	}
	if sketch.IntersectCount(a, a) != len(a) || sketch.IntersectCount(b, b) != len(b) {
		t.Fatalf("%s: IntersectCount of a sketch with itself is not its size", name)
	}
	if j, j2 := sketch.Jaccard(a, b), sketch.Jaccard(b, a); j != j2 || !unit(j) {
		t.Fatalf("%s: Jaccard = %v, swapped %v", name, j, j2)
	}
	return want
}

// minEstimate is Broder's MIN_s estimate from its definition:
// |MIN_s(a∪b) ∩ a ∩ b| / |MIN_s(a∪b)|, 0 when the union is empty.
func minEstimate(a, b []uint64, s int) float64 {
	union := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(a), b...))))
	union = union[:min(s, len(union))]
	shared := 0
	for _, x := range union {
		_, inA := slices.BinarySearch(a, x)
		_, inB := slices.BinarySearch(b, x)
		if inA && inB {
			shared++
		}
	}
	if len(union) == 0 {
		return 0
	}
	return float64(shared) / float64(len(union))
}

// ranks lists the ranks in a and in b of their shared elements, in
// ascending order of value, as MinSharedInUnion takes them.
func ranks(a, b []uint64) [][2]uint16 {
	var out [][2]uint16
	for i, x := range a {
		if j, ok := slices.BinarySearch(b, x); ok {
			out = append(out, [2]uint16{uint16(i), uint16(j)})
		}
	}
	return out
}

// agreeing counts the positions at which two MinHashValues results agree
// (none when either set was empty).
func agreeing(a, b []uint64) int {
	if len(a) != len(b) {
		return 0
	}
	n := 0
	for i := range a {
		if a[i] == b[i] {
			n++
		}
	}
	return n
}

func sortedDistinct(a []uint64) bool {
	for i := 1; i < len(a); i++ {
		if a[i-1] >= a[i] {
			return false
		}
	}
	return true
}

func unit(x float64) bool { return 0 <= x && x <= 1 }

// equal is slices.Equal without telling nil from empty.
func equal(a, b []uint64) bool { return len(a) == len(b) && slices.Equal(a, b) }
