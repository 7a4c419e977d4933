package supershingle

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/similarity/sketch"
)

var h = fingerprint.New(fingerprint.DefaultSeed)

// TestDocTable checks the P(link) table of the package documentation
// against LinkProbability and Threshold, to the printed precision, so that
// the documentation cannot drift from the code.
func TestDocTable(t *testing.T) {
	f, err := os.Open("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	header := regexp.MustCompile(`^//\s+rows × bands((?:\s+J=[0-9.]+)+)\s+steepest at$`)
	row := regexp.MustCompile(`^//\s+(\d+) × (\d+)((?:\s+[0-9.]+)+)$`)
	var js []float64
	rows := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := header.FindStringSubmatch(line); m != nil {
			for _, f := range strings.Fields(m[1]) {
				j, err := strconv.ParseFloat(strings.TrimPrefix(f, "J="), 64)
				if err != nil {
					t.Fatal(err)
				}
				js = append(js, j)
			}
			continue
		}
		m := row.FindStringSubmatch(line)
		if m == nil || js == nil {
			continue
		}
		r, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		cells := strings.Fields(m[3])
		if len(cells) != len(js)+1 {
			t.Fatalf("doc row %q: %d cells for %d columns", line, len(cells), len(js)+1)
		}
		for i, j := range js {
			want := cells[i]
			decimals := len(want) - strings.IndexByte(want, '.') - 1
			if got := strconv.FormatFloat(LinkProbability(j, r, b), 'f', decimals, 64); got != want {
				t.Errorf("doc says P(link | J=%v, %d × %d) = %s, LinkProbability gives %s", j, r, b, want, got)
			}
		}
		want := cells[len(js)]
		decimals := len(want) - strings.IndexByte(want, '.') - 1
		if got := strconv.FormatFloat(Threshold(r, b), 'f', decimals, 64); got != want {
			t.Errorf("doc says %d × %d is steepest at %s, Threshold gives %s", r, b, want, got)
		}
		rows++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(js) != 5 || rows != 3 {
		t.Errorf("found %d J columns and %d table rows in doc.go, want 5 and 3", len(js), rows)
	}
}

func TestLinkProbability(t *testing.T) {
	for _, tc := range []struct {
		j          float64
		rows, bnds int
		want       float64
	}{
		{0, 4, 32, 0},
		{1, 4, 32, 1},
		{1, 1, 1, 1},
		{0.5, 1, 1, 0.5},
		{0.5, 2, 1, 0.25},
		{0.5, 1, 2, 0.75},
		{0.5, 2, 2, 1 - 0.75*0.75},
	} {
		if got := LinkProbability(tc.j, tc.rows, tc.bnds); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("LinkProbability(%v, %d, %d) = %v, want %v", tc.j, tc.rows, tc.bnds, got, tc.want)
		}
	}
	for _, rb := range [][2]int{{4, 32}, {8, 16}, {5, 20}, {1, 7}, {20, 3}} {
		prev := -1.0
		for i := range 101 {
			j := float64(i) / 100
			got := LinkProbability(j, rb[0], rb[1])
			naive := 1 - math.Pow(1-math.Pow(j, float64(rb[0])), float64(rb[1]))
			if math.Abs(got-naive) > 1e-12 || got < prev {
				t.Fatalf("LinkProbability(%v, %d, %d) = %v, naive %v, previous %v", j, rb[0], rb[1], got, naive, prev)
			}
			prev = got
		}
	}
	// Where 1 - (1 - p)^b rounds to 0 the stable form keeps b*p.
	if got := LinkProbability(1e-3, 4, 10); math.Abs(got/1e-11-1) > 1e-6 {
		t.Errorf("LinkProbability(1e-3, 4, 10) = %v, want about 1e-11", got)
	}
	for _, rb := range [][2]int{{0, 1}, {1, 0}, {-1, 5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("LinkProbability with %v did not panic", rb)
				}
			}()
			LinkProbability(0.5, rb[0], rb[1])
		}()
	}
}

func TestThreshold(t *testing.T) {
	for _, rb := range [][2]int{{4, 32}, {8, 16}, {5, 20}, {4, 8}, {2, 2}, {2, 50}, {16, 8}, {3, 1}} {
		r, b := rb[0], rb[1]
		// The steepest point on a grid of step 1e-4, by central
		// differences.
		best, bestSlope := 0.0, -1.0
		const step = 1e-4
		for i := 1; i < 1/step; i++ {
			j := float64(i) * step
			slope := (LinkProbability(j+step/2, r, b) - LinkProbability(j-step/2, r, b)) / step
			if slope > bestSlope {
				best, bestSlope = j, slope
			}
		}
		if b == 1 { // j^r, steepest at the end of the grid
			best = 1
		}
		got := Threshold(r, b)
		if math.Abs(got-best) > 2*step {
			t.Errorf("Threshold(%d, %d) = %.4f, steepest on the grid at %.4f", r, b, got, best)
		}
		// The rule of thumb is close for the shapes LSH uses, not for
		// tiny ones (2 × 2: 0.577 against 0.707).
		thumb := math.Pow(1/float64(b), 1/float64(r))
		if r >= 4 && b >= 8 && math.Abs(got-thumb) > 0.05 {
			t.Errorf("Threshold(%d, %d) = %.4f, far from (1/b)^(1/r) = %.4f", r, b, got, thumb)
		}
	}
	if got := Threshold(1, 10); got != 0 {
		t.Errorf("Threshold(1, 10) = %v, want 0", got)
	}
	if got := Threshold(1, 1); got != 0 {
		t.Errorf("Threshold(1, 1) = %v, want 0", got)
	}
}

// encode is the little-endian encoding h.Combine is documented to hash.
func encode(xs ...uint64) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return b
}

func TestBroder(t *testing.T) {
	s := []uint64{2, 3, 5, 7, 11, 13}
	got := Broder(nil, h, s, 3)
	// Pinned, so a change in the construction shows.
	golden := []uint64{0x5d4afb399f3b51fe, 0x5e877389292750b3, 0x905ba9cfb828564b, 0xef052a2a5538eea7}
	if !slices.Equal(got, golden) {
		t.Errorf("Broder = %#016x, want %#016x", got, golden)
	}
	// By definition: the fingerprints of the four windows.
	var want []uint64
	for i := range 4 {
		want = append(want, h.Bytes(encode(s[i:i+3]...)))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Broder = %#016x, windows hash to %#016x", got, want)
	}
	if got := Broder([]uint64{1}, h, s[:2], 3); got != nil {
		t.Errorf("2 values, size 3: %v, want nil", got)
	}
	if got := Broder(nil, h, nil, 1); got != nil {
		t.Errorf("empty sketch: %v, want nil", got)
	}
	if got := Broder(nil, h, s[:3], 3); len(got) != 1 {
		t.Errorf("3 values, size 3: %d super-shingles, want 1", len(got))
	}
	if got := Broder(nil, h, s, 1); len(got) != len(s) {
		t.Errorf("size 1: %d super-shingles, want %d", len(got), len(s))
	}
	if fingerprint.New(1).Combine(s[:3]) == h.Combine(s[:3]) {
		t.Error("Broder's hash ignores the seed")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Broder with size 0 did not panic")
			}
		}()
		Broder(nil, h, s, 0)
	}()
}

// randomSketch is n distinct sorted random values.
func randomSketch(r *rand.Rand, n int) []uint64 {
	s := make([]uint64, n)
	for i := range s {
		s[i] = r.Uint64()
	}
	slices.Sort(s)
	return slices.Compact(s)
}

func TestBroderProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for range 2000 {
		n, size := r.IntN(40), 1+r.IntN(8)
		s := randomSketch(r, n)
		a := Broder(nil, h, s, size)
		if n < size {
			if a != nil {
				t.Fatalf("%d values, size %d: %d super-shingles", n, size, len(a))
			}
			continue
		}
		if len(a) != n-size+1 || !slices.IsSorted(a) {
			t.Fatalf("%d values, size %d: %d super-shingles (sorted %v)", n, size, len(a), slices.IsSorted(a))
		}
		// Identical sketches share every super-shingle.
		if b := Broder(nil, h, slices.Clone(s), size); !slices.Equal(a, b) {
			t.Fatal("identical sketches give different super-shingles")
		}
		// In place gives the same.
		c := slices.Clone(s)
		if in := Broder(c[:0], h, c, size); !slices.Equal(in, a) {
			t.Fatal("in place differs")
		}
	}
}

// newSupers counts the super-shingles of b that a does not have.
func newSupers(a, b []uint64) int {
	n := 0
	for _, x := range b {
		if _, ok := slices.BinarySearch(a, x); !ok {
			n++
		}
	}
	return n
}

func TestBroderOneChangedValue(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for range 2000 {
		n, size := 3+r.IntN(40), 1+r.IntN(6)
		s := randomSketch(r, n)
		if len(s) < size+2 {
			continue
		}
		a := Broder(nil, h, s, size)
		// A change that keeps the value's rank: only the windows that
		// contain it change, at most size of them.
		i := 1 + r.IntN(len(s)-2)
		same := slices.Clone(s)
		if same[i+1]-same[i-1] < 3 {
			continue
		}
		for same[i] == s[i] {
			same[i] = same[i-1] + 1 + r.Uint64N(same[i+1]-same[i-1]-1)
		}
		b := Broder(nil, h, same, size)
		if d := newSupers(a, b); d < 1 || d > size {
			t.Fatalf("rank-preserving change of 1 of %d values, size %d: %d new super-shingles", len(s), size, d)
		}
		// Any change: also the windows across the old place, 2*size-1.
		moved := slices.Clone(s)
		moved[i] = r.Uint64()
		slices.Sort(moved)
		if len(slices.Compact(slices.Clone(moved))) != len(moved) {
			continue
		}
		b = Broder(nil, h, moved, size)
		if d := newSupers(a, b); d > 2*size-1 {
			t.Fatalf("change of 1 of %d values, size %d: %d new super-shingles", len(s), size, d)
		}
	}
}

func TestBands(t *testing.T) {
	vals := []uint64{10, 11, 12, 13, 14, 15}
	got := Bands(nil, h, vals, 3)
	golden := []uint64{0x085735d0b6950140, 0xa64b1bc9abb90b3e, 0xcad5969daed21253}
	if !slices.Equal(got, golden) {
		t.Errorf("Bands = %#016x, want %#016x", got, golden)
	}
	want := []uint64{h.Bytes(encode(0, 10, 11)), h.Bytes(encode(1, 12, 13)), h.Bytes(encode(2, 14, 15))}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Bands = %#016x, by definition %#016x", got, want)
	}
	if again := Bands([]uint64{1, 2, 3, 4}, h, vals, 3); !slices.Equal(again, got) {
		t.Error("Bands is not deterministic")
	}
	// Equal rows in different bands do not collide.
	if got := Bands(nil, h, make([]uint64, 32), 8); len(got) != 8 {
		t.Errorf("8 bands of zeros give %d fingerprints, want 8", len(got))
	}
	if got := Bands(nil, h, nil, 4); got != nil {
		t.Errorf("no values: %v, want nil", got)
	}
	if c := slices.Clone(vals); !slices.Equal(Bands(c[:0], h, c, 2), Bands(nil, h, vals, 2)) {
		t.Error("in place differs")
	}
	if c := slices.Clone(vals); !slices.Equal(Bands(c[:0], h, c, 6), Bands(nil, h, vals, 6)) {
		t.Error("in place with one row per band differs")
	}
	for _, tc := range []struct{ n, bands int }{{6, 4}, {7, 2}, {6, 0}, {6, -1}, {3, 6}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Bands of %d values into %d bands did not panic", tc.n, tc.bands)
				}
			}()
			Bands(nil, h, make([]uint64, tc.n), tc.bands)
		}()
	}
	// Bands longer than the stack buffer.
	long := make([]uint64, 300)
	for i := range long {
		long[i] = uint64(i)
	}
	if got := Bands(nil, h, long, 2); !slices.Equal(got, sorted(h.Bytes(encode(append([]uint64{0}, long[:150]...)...)), h.Bytes(encode(append([]uint64{1}, long[150:]...)...)))) {
		t.Error("Bands with 150 rows wrong")
	}
}

func sorted(xs ...uint64) []uint64 {
	slices.Sort(xs)
	return xs
}

// TestBandsShareIffRowsAgree: the number of shared band fingerprints is
// the number of bands whose rows all agree.
func TestBandsShareIffRowsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for range 2000 {
		rows, bands := 1+r.IntN(6), 1+r.IntN(10)
		a := make([]uint64, rows*bands)
		for i := range a {
			a[i] = r.Uint64N(4) // small values: equal rows across bands
		}
		b := slices.Clone(a)
		for i := range b {
			if r.IntN(8) == 0 {
				b[i] = r.Uint64N(4)
			}
		}
		agree := 0
		for j := range bands {
			if slices.Equal(a[j*rows:(j+1)*rows], b[j*rows:(j+1)*rows]) {
				agree++
			}
		}
		ba, bb := Bands(nil, h, a, bands), Bands(nil, h, b, bands)
		if got := sketch.IntersectCount(ba, bb); got != agree {
			t.Fatalf("rows=%d bands=%d: %d shared fingerprints, %d agreeing bands", rows, bands, got, agree)
		}
	}
}

// pair builds two random fingerprint sets sharing a core of c values, A
// with pa and B with pb private values, so that their resemblance is
// exactly c/(c+pa+pb). Fresh random values each call amount to a fresh
// random permutation, which is what the link probabilities are over.
func pair(r *rand.Rand, c, pa, pb int) (a, b []uint64) {
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
	if len(slices.Compact(slices.Clone(a))) != len(a) || sketch.IntersectCount(a, b) != c {
		panic("random values collided")
	}
	return a, b
}

// checkFrequency asserts that hits/trials is within 4 binomial standard
// errors of p, plus 1.5/trials so that a single rare miss at p near 0 or 1
// (where the standard error vanishes) does not fail it. The seed is fixed,
// so the outcome is deterministic anyway.
func checkFrequency(t *testing.T, name string, hits, trials int, p float64) {
	t.Helper()
	freq := float64(hits) / float64(trials)
	se := math.Sqrt(p * (1 - p) / float64(trials))
	if d := math.Abs(freq - p); d > 4*se+1.5/float64(trials) {
		t.Errorf("%s: linked %.4f of %d, want %.4f (|diff| %.4f > 4 SE = %.4f)", name, freq, trials, p, d, 4*se)
	} else {
		t.Logf("%s: linked %.4f, predicted %.4f ± %.4f (SE)", name, freq, p, se)
	}
}

// TestBandsSCurve simulates banding: for each resemblance, pairs of sets
// with exactly that resemblance, fresh random values per trial, MinHash
// sketches with K = rows*bands, and the fraction of pairs that share a
// band, which must follow LinkProbability. This also tests that the K
// hash functions of sketch.MinHashValues are independent enough for the
// formula, which assumes independence.
func TestBandsSCurve(t *testing.T) {
	const trials, union = 1000, 100
	r := rand.New(rand.NewPCG(4, 4))
	var va, vb, ba, bb []uint64
	for _, rb := range [][2]int{{4, 8}, {5, 20}} {
		rows, bands := rb[0], rb[1]
		for _, j := range []float64{0.2, 0.4, 0.5, 0.6, 0.8, 0.9} {
			c := int(math.Round(j * union))
			pa := (union - c) / 2
			hits := 0
			for range trials {
				a, b := pair(r, c, pa, union-c-pa)
				va = sketch.MinHashValues(va, a, rows*bands)
				vb = sketch.MinHashValues(vb, b, rows*bands)
				ba, bb = Bands(ba, h, va, bands), Bands(bb, h, vb, bands)
				if sketch.IntersectCount(ba, bb) > 0 {
					hits++
				}
			}
			checkFrequency(t, fmt.Sprintf("%d × %d J=%.1f", rows, bands, j), hits, trials, LinkProbability(j, rows, bands))
		}
	}
}

// TestBroderSCurve measures Broder's super-shingles over MIN_100 sketches
// with runs of 5 sketch values: the frequency with which pairs of exact
// resemblance J share at least one super-shingle. There is no closed form
// (windows overlap, and which values reach a MIN_s sketch depends on both
// sets), so the test asserts the shape: rising with J (within noise), near
// 0 for unrelated-looking pairs, and 1 for identical sets.
func TestBroderSCurve(t *testing.T) {
	const trials, union, size = 300, 1000, 5
	r := rand.New(rand.NewPCG(5, 5))
	spec := sketch.Spec{Kind: sketch.Min, N: 100}
	js := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1}
	freq := make([]float64, len(js))
	var fa, fb, sa, sb []uint64
	for i, j := range js {
		c := int(math.Round(j * union))
		pa := (union - c) / 2
		hits := 0
		for range trials {
			a, b := pair(r, c, pa, union-c-pa)
			fa, fb = spec.Select(fa, a), spec.Select(fb, b)
			sa, sb = Broder(sa, h, fa, size), Broder(sb, h, fb, size)
			if sketch.IntersectCount(sa, sb) > 0 {
				hits++
			}
		}
		freq[i] = float64(hits) / trials
		t.Logf("%v, runs of %d, J=%.1f: linked %.3f", spec, size, j, freq[i])
	}
	se := func(p float64) float64 { return math.Sqrt(max(p*(1-p), 0.25/trials) / trials) }
	for i := 1; i < len(js); i++ {
		if d := freq[i-1] - freq[i]; d > 4*math.Hypot(se(freq[i-1]), se(freq[i])) {
			t.Errorf("P(link) falls from %.3f at J=%.1f to %.3f at J=%.1f", freq[i-1], js[i-1], freq[i], js[i])
		}
	}
	if freq[0] > 0.1 || freq[len(js)-2] < 0.9 {
		t.Errorf("P(link) %.3f at J=%.1f and %.3f at J=%.1f: no S-curve", freq[0], js[0], freq[len(js)-2], js[len(js)-2])
	}
	if freq[len(js)-1] != 1 {
		t.Errorf("identical sets linked with frequency %.3f, want 1", freq[len(js)-1])
	}
}

// TestBroderMissesContainment shows the paper's second loss with MOD_m
// sketches, which do preserve containment: if A is inside B then V(A) is
// inside V(B), and their containment estimate is exactly 1, yet B's extra
// values interleave with the common ones in sorted order, so a run of
// size values of V(A) survives in V(B) only if none of B's extra values
// fall inside it (about (|A|/|B|)^(size-1) = 1% here).
func TestBroderMissesContainment(t *testing.T) {
	const trials, size = 200, 3
	r := rand.New(rand.NewPCG(6, 6))
	spec := sketch.Spec{Kind: sketch.Mod, N: 25}
	var supersA, sharedSupers int
	for range trials {
		a, b := pair(r, 500, 0, 4500) // A inside B, |B| = 10 |A|
		va, vb := spec.Select(nil, a), spec.Select(nil, b)
		if got := sketch.Containment(sketch.IntersectCount(va, vb), len(va)); len(va) > 0 && got != 1 {
			t.Fatalf("containment of A in B estimated %v, want 1", got)
		}
		sa, sb := Broder(nil, h, va, size), Broder(nil, h, vb, size)
		supersA += len(sa)
		sharedSupers += sketch.IntersectCount(sa, sb)
	}
	frac := float64(sharedSupers) / float64(supersA)
	t.Logf("A inside B: %.3f of A's %d super-shingles are B's", frac, supersA)
	if frac > 0.03 {
		t.Errorf("%.3f of A's super-shingles found in B, want about 0.01", frac)
	}
}

func Example() {
	// Shingle fingerprints of two documents with 900 of their 1100
	// distinct shingles in common: resemblance 0.82.
	var a, b []uint64
	for x := range uint64(1000) {
		a = append(a, fingerprint.Mix(x))
		b = append(b, fingerprint.Mix(x+100))
	}
	slices.Sort(a)
	slices.Sort(b)
	// MinHash with 100 positions, banded as 5 rows × 20 bands.
	const rows, bands = 5, 20
	ba := Bands(nil, h, sketch.MinHashValues(nil, a, rows*bands), bands)
	bb := Bands(nil, h, sketch.MinHashValues(nil, b, rows*bands), bands)
	fmt.Printf("J = %.2f: %d of %d bands shared; P(link) = %.4f, steepest at J = %.2f\n",
		sketch.Jaccard(a, b), sketch.IntersectCount(ba, bb), bands,
		LinkProbability(sketch.Jaccard(a, b), rows, bands), Threshold(rows, bands))
	// Output:
	// J = 0.82: 8 of 20 bands shared; P(link) = 0.9999, steepest at J = 0.53
}

func ExampleBroder() {
	// Sorted sketches of two documents: b lacks 30 and has 35 instead.
	a := []uint64{10, 20, 30, 40, 50, 60, 70}
	b := []uint64{10, 20, 35, 40, 50, 60, 70}
	sa, sb := Broder(nil, h, a, 3), Broder(nil, h, b, 3)
	fmt.Println(len(sa), len(sb), sketch.IntersectCount(sa, sb))
	// Runs of 3 avoiding the third value: (40 50 60) and (50 60 70).
	// Output: 5 5 2
}

var sink []uint64

func BenchmarkBroder(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 7))
	shingles := randomSketch(r, 10000)
	for _, tc := range []struct {
		spec sketch.Spec
		size int
	}{
		{sketch.Spec{Kind: sketch.Min, N: 100}, 5},
		{sketch.Spec{Kind: sketch.Mod, N: 25}, 3},
		{sketch.Spec{Kind: sketch.MinHash, N: 128}, 4},
	} {
		sk := tc.spec.Select(nil, shingles)
		b.Run(fmt.Sprintf("%v/size=%d/values=%d", tc.spec, tc.size, len(sk)), func(b *testing.B) {
			var dst []uint64
			for b.Loop() {
				dst = Broder(dst, h, sk, tc.size)
			}
			sink = dst
		})
	}
}

func BenchmarkBands(b *testing.B) {
	r := rand.New(rand.NewPCG(8, 8))
	values := sketch.MinHashValues(nil, randomSketch(r, 1000), 128)
	for _, rb := range [][2]int{{4, 32}, {8, 16}, {5, 20}} {
		v := values[:rb[0]*rb[1]]
		b.Run(fmt.Sprintf("%d×%d", rb[0], rb[1]), func(b *testing.B) {
			var dst []uint64
			for b.Loop() {
				dst = Bands(dst, h, v, rb[1])
			}
			sink = dst
		})
	}
}

func TestBandsDoesNotAllocate(t *testing.T) {
	values := make([]uint64, 128)
	dst := make([]uint64, 0, 32)
	if n := testing.AllocsPerRun(20, func() { dst = Bands(dst, h, values, 32) }); n != 0 {
		t.Errorf("Bands into a big enough dst allocates %v times", n)
	}
}
