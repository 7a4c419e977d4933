package fingerprint

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	mrand "math/rand"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/quick"
)

func quickConfig(n int) *quick.Config {
	return &quick.Config{MaxCount: n, Rand: mrand.New(mrand.NewSource(1))}
}

// Published XXH64 test vectors (seed 0), as also used by the reference
// implementation's and github.com/cespare/xxhash's tests.
func TestXXH64Vectors(t *testing.T) {
	h := New(0)
	for _, tc := range []struct {
		in   string
		want uint64
	}{
		{"", 0xef46db3751d8e999},
		{"a", 0xd24ec4f1a98c6e5b},
		{"as", 0x1c330fb2d66be179},
		{"asd", 0x631c37ce72a97393},
		{"asdf", 0x415872f599cea71e},
		{"abc", 0x44bc2cf5ad770999},
		{"Call me Ishmael. Some years ago--never mind how long precisely-", 0x02a2e85470d6fd96},
	} {
		if got := h.String(tc.in); got != tc.want {
			t.Errorf("XXH64(%q) = %#016x, want %#016x", tc.in, got, tc.want)
		}
	}
}

// TestGolden pins values computed by this package, so that any change to
// the functions or to DefaultSeed (which would silently invalidate stored
// sketches) fails here, on every platform.
func TestGolden(t *testing.T) {
	h := New(DefaultSeed)
	long := strings.Repeat("near-duplicate ", 10)
	checks := []struct {
		name string
		got  uint64
		want uint64
	}{
		{`String("")`, h.String(""), golden[0]},
		{`String("rose")`, h.String("rose"), golden[1]},
		{`String(long)`, h.String(long), golden[2]},
		{`Tokens(a rose is a rose)`, h.Tokens(strings.Fields("a rose is a rose")), golden[3]},
		{`Combine(1..10)`, h.Combine([]uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), golden[4]},
		{`Combine(nil)`, h.Combine(nil), golden[5]},
		{`Shingle(1..10)`, h.Shingle([]uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}), golden[8]},
		{`Mix(0)`, Mix(0), 0},
		{`Mix(1)`, Mix(1), golden[6]},
		{`Mix(DefaultSeed)`, Mix(DefaultSeed), golden[7]},
		// The first output of the splitmix64 generator seeded with 0 is
		// Mix of its increment: a published vector for the finalizer.
		{`Mix(golden gamma)`, Mix(0x9e3779b97f4a7c15), 0xe220a8397b1dcdaf},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %#016x, want %#016x", c.name, c.got, c.want)
		}
	}
}

var golden = [...]uint64{
	0xb4442d1f293a74be,
	0x8f098a518421f853,
	0x79f8d66c837dd0ef,
	0x45e5ed3200c385ca,
	0xada027524e1da503,
	0xb4442d1f293a74be, // Combine(nil) == String(""): both hash zero bytes
	0x5692161d100b05e5,
	0x9b0d5dcdf67d12db,
	0x18afc665ecdca9e5,
}

func TestStringEqualsBytes(t *testing.T) {
	f := func(seed uint64, b []byte) bool {
		h := New(seed)
		return h.String(string(b)) == h.Bytes(b)
	}
	if err := quick.Check(f, quickConfig(2000)); err != nil {
		t.Error(err)
	}
	// Every length around the 4-, 8- and 32-byte steps of the algorithm.
	r := rand.New(rand.NewPCG(1, 1))
	for n := range 200 {
		b := randBytes(r, n)
		h := New(r.Uint64())
		if h.String(string(b)) != h.Bytes(b) {
			t.Fatalf("length %d: String != Bytes", n)
		}
	}
}

func TestStringDoesNotAllocate(t *testing.T) {
	h := New(DefaultSeed)
	s := strings.Repeat("x", 100)
	if n := testing.AllocsPerRun(100, func() { _ = h.String(s) }); n != 0 {
		t.Errorf("String allocates %v times", n)
	}
	toks := []string{"a", "rose", "is", strings.Repeat("long", 20)}
	if n := testing.AllocsPerRun(100, func() { _ = h.Tokens(toks) }); n != 0 {
		t.Errorf("Tokens allocates %v times", n)
	}
}

func TestCombineEqualsBytesOfWords(t *testing.T) {
	f := func(seed uint64, hs []uint64) bool {
		enc := make([]byte, 8*len(hs))
		for i, x := range hs {
			binary.LittleEndian.PutUint64(enc[8*i:], x)
		}
		h := New(seed)
		return h.Combine(hs) == h.Bytes(enc)
	}
	if err := quick.Check(f, quickConfig(2000)); err != nil {
		t.Error(err)
	}
}

// TestTokensCombinesTokenHashes pins the definition phase 1 relies on:
// the fingerprint of a token sequence is Combine of its tokens' hashes.
func TestTokensCombinesTokenHashes(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for range 3000 {
		toks := make([]string, r.IntN(100))
		hashes := make([]uint64, len(toks))
		h := New(r.Uint64())
		for i := range toks {
			toks[i] = string(randBytes(r, r.IntN(70)))
			hashes[i] = h.String(toks[i])
		}
		if got, want := h.Tokens(toks), h.Combine(hashes); got != want {
			t.Fatalf("Tokens(%q) = %#x, Combine(hashes) = %#x", toks, got, want)
		}
	}
}

func TestTokensUnambiguous(t *testing.T) {
	h := New(DefaultSeed)
	seqs := [][]string{
		{"ab", "c"}, {"a", "bc"}, {"abc"}, {"a", "b", "c"}, {"abc", ""}, {"", "abc"},
		{}, {""}, {"", ""},
	}
	seen := map[uint64][]string{}
	for _, s := range seqs {
		v := h.Tokens(s)
		if prev, ok := seen[v]; ok {
			t.Errorf("Tokens(%q) == Tokens(%q)", s, prev)
		}
		seen[v] = s
	}
}

func TestSeedsDiffer(t *testing.T) {
	inputs := []string{"", "a", "rose", strings.Repeat("z", 33)}
	for _, in := range inputs {
		a, b, c := New(0).String(in), New(1).String(in), New(DefaultSeed).String(in)
		if a == b || b == c || a == c {
			t.Errorf("seeds collide on %q: %#x %#x %#x", in, a, b, c)
		}
	}
	if New(1).Combine([]uint64{1, 2}) == New(2).Combine([]uint64{1, 2}) {
		t.Error("Combine ignores the seed")
	}
	if New(1).Tokens([]string{"x"}) == New(2).Tokens([]string{"x"}) {
		t.Error("Tokens ignores the seed")
	}
	if (Hasher{}) != New(0) {
		t.Error("zero Hasher != New(0)")
	}
	if New(42).Seed() != 42 {
		t.Error("Seed() does not round-trip")
	}
}

// avalanche flips each input bit of random inputs and checks that on
// average half of the output bits flip, and that each output bit flips
// with probability near 1/2 (no output bit ignores the input bit).
func checkAvalanche(t *testing.T, name string, nbits int, f func(in []byte) uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(nbits), 7))
	trials := 400 * 64 / nbits * 4
	var total, count int
	perOut := make([]int, 64)
	if nbits == 8 {
		// Only 256 inputs exist: take each once, since repeats would
		// add no information but would shrink the allowed deviation.
		trials = 256
	}
	for trial := range trials {
		in := randBytes(r, nbits/8)
		if nbits == 8 {
			in[0] = byte(trial)
		}
		base := f(in)
		for bit := range nbits {
			in[bit/8] ^= 1 << (bit % 8)
			d := base ^ f(in)
			in[bit/8] ^= 1 << (bit % 8)
			total += bits.OnesCount64(d)
			for o := range 64 {
				perOut[o] += int(d >> o & 1)
			}
			count++
		}
	}
	mean := float64(total) / float64(count)
	// The flip count of a random function is Binomial(64, 1/2), sd 4, so
	// the mean over count samples has sd 4/math.Sqrt(count); each output bit's
	// flip frequency has sd 0.5/math.Sqrt(count). Allow 5 sd.
	sd := 1 / math.Sqrt(float64(count))
	if d := mean - 32; d < -20*sd || d > 20*sd {
		t.Errorf("%s: mean flipped output bits %.3f, want 32 ± %.3f", name, mean, 20*sd)
	}
	for o, n := range perOut {
		p := float64(n) / float64(count)
		if d := p - 0.5; d < -2.5*sd || d > 2.5*sd {
			t.Errorf("%s: output bit %d flips with probability %.3f, want 0.5 ± %.3f", name, o, p, 2.5*sd)
		}
	}
}

func TestAvalanche(t *testing.T) {
	h := New(DefaultSeed)
	for _, n := range []int{1, 3, 8, 13, 40} {
		checkAvalanche(t, fmt.Sprintf("String/%dB", n), 8*n, func(in []byte) uint64 { return h.Bytes(in) })
	}
	checkAvalanche(t, "Combine/10", 640, func(in []byte) uint64 {
		var hs [10]uint64
		for i := range hs {
			hs[i] = binary.LittleEndian.Uint64(in[8*i:])
		}
		return h.Combine(hs[:])
	})
	checkAvalanche(t, "Shingle/10", 640, func(in []byte) uint64 {
		var hs [10]uint64
		for i := range hs {
			hs[i] = binary.LittleEndian.Uint64(in[8*i:])
		}
		return h.Shingle(hs[:])
	})
	checkAvalanche(t, "Mix", 64, func(in []byte) uint64 { return Mix(binary.LittleEndian.Uint64(in)) })
	// The seed must be as well mixed as the data.
	checkAvalanche(t, "seed", 64, func(in []byte) uint64 { return New(binary.LittleEndian.Uint64(in)).String("rose") })
}

// chiSquare returns the chi-square statistic of counts against a uniform
// expectation.
func chiSquare(counts []int, n int) float64 {
	e := float64(n) / float64(len(counts))
	var x float64
	for _, c := range counts {
		d := float64(c) - e
		x += d * d / e
	}
	return x
}

func TestBucketUniformity(t *testing.T) {
	// Highly structured inputs (sequential numbers and short words), the
	// case where weak hashes show patterns.
	h := New(DefaultSeed)
	const n = 200000
	mod25 := make([]int, 25)
	low := make([]int, 64)
	high := make([]int, 64)
	var buf [8]uint64
	for i := range n {
		var v uint64
		switch i % 3 {
		case 0:
			v = h.String(fmt.Sprint(i))
		case 1:
			v = h.String(fmt.Sprintf("w%05d", i))
		default:
			buf[i%8] = uint64(i)
			v = h.Combine(buf[:])
		}
		mod25[v%25]++
		low[v&63]++
		high[v>>58]++
	}
	// For k buckets the statistic has mean k-1 and sd math.Sqrt(2(k-1));
	// allow 6 sd, a bound a real bias of a few percent would still fail
	// (the inputs are fixed, so this is deterministic).
	for _, c := range []struct {
		name   string
		counts []int
	}{{"mod 25", mod25}, {"low 6 bits", low}, {"high 6 bits", high}} {
		k := float64(len(c.counts))
		limit := k - 1 + 6*math.Sqrt(2*(k-1))
		if x := chiSquare(c.counts, n); x > limit {
			t.Errorf("%s: chi-square %.1f > %.1f", c.name, x, limit)
		}
	}
}

func TestMixIsBijective(t *testing.T) {
	const n = 1_000_000
	out := make([]uint64, n)
	for i := range out {
		out[i] = Mix(uint64(i))
	}
	slices.Sort(out)
	if len(slices.Compact(out)) != n {
		t.Error("Mix collides on sequential inputs")
	}
	f := func(x uint64) bool { return UnMix(Mix(x)) == x && Mix(UnMix(x)) == x }
	if err := quick.Check(f, quickConfig(100000)); err != nil {
		t.Error(err)
	}
	for _, x := range []uint64{0, 1, 1 << 63, ^uint64(0), DefaultSeed} {
		if UnMix(Mix(x)) != x {
			t.Errorf("UnMix(Mix(%#x)) != %#x", x, x)
		}
	}
	m1, m2, i1, i2 := uint64(0xbf58476d1ce4e5b9), uint64(0x94d049bb133111eb), uint64(inv1), uint64(inv2)
	if m1*i1 != 1 || m2*i2 != 1 {
		t.Error("inverse multipliers are wrong")
	}
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func Example() {
	h := New(DefaultSeed)
	fmt.Println(h.String("rose") == h.Bytes([]byte("rose")))
	fmt.Println(h.Tokens([]string{"ab", "c"}) == h.Tokens([]string{"a", "bc"}))
	// A shingle's fingerprint is Shingle of its token fingerprints.
	shingle := []string{"a", "rose", "is", "a"}
	hs := make([]uint64, len(shingle))
	for i, tok := range shingle {
		hs[i] = h.String(tok)
	}
	fmt.Printf("%#016x\n", h.Shingle(hs))
	fmt.Println(UnMix(Mix(12345)))
	// Output:
	// true
	// false
	// 0xf1f287dfab2673fe
	// 12345
}

var sink uint64

func BenchmarkString(b *testing.B) {
	h := New(DefaultSeed)
	for _, n := range []int{5, 16, 64, 4096} {
		s := strings.Repeat("x", n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				sink += h.String(s)
			}
		})
	}
}

func BenchmarkCombine10(b *testing.B) {
	h := New(DefaultSeed)
	hs := make([]uint64, 10)
	for i := range hs {
		hs[i] = Mix(uint64(i))
	}
	for b.Loop() {
		sink += h.Combine(hs)
	}
}

func BenchmarkTokens(b *testing.B) {
	h := New(DefaultSeed)
	toks := strings.Fields("the quick brown fox jumps over the lazy dog again")
	for b.Loop() {
		sink += h.Tokens(toks)
	}
}

func BenchmarkMix(b *testing.B) {
	var x uint64
	for b.Loop() {
		x = Mix(x + 1)
	}
	sink += x
}

// TestShingleRolls checks the identity phase 1 rolls along a document:
// dropping the first hash and appending one more moves the polynomial by
// ShinglePow, for every window size.
func TestShingleRolls(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	h := New(r.Uint64())
	for w := 1; w <= 40; w++ {
		hs := make([]uint64, w+1)
		for i := range hs {
			hs[i] = r.Uint64()
		}
		var p uint64
		for _, x := range hs[:w] {
			p = p*ShingleBase + x
		}
		rolled := (p-hs[0]*ShinglePow(w))*ShingleBase + hs[w]
		if got, want := h.ShingleFinish(rolled), h.Shingle(hs[1:]); got != want {
			t.Fatalf("w=%d: rolled %#x, direct %#x", w, got, want)
		}
	}
	// Swapping two tokens or changing one changes the fingerprint.
	a := []uint64{r.Uint64(), r.Uint64(), r.Uint64()}
	b := []uint64{a[1], a[0], a[2]}
	c := []uint64{a[0], a[1] + 1, a[2]}
	if h.Shingle(a) == h.Shingle(b) || h.Shingle(a) == h.Shingle(c) {
		t.Error("Shingle ignores the order or the value of a token")
	}
}
