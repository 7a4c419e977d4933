package shingle

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/hashing/fingerprint"
)

var h = fingerprint.New(fingerprint.DefaultSeed)

// naive computes S(D, w) the obvious way: every window, hashed from its
// tokens, collected in a map.
func naive(tokens []string, w int) []uint64 {
	set := map[uint64]bool{}
	for i := 0; i+w <= len(tokens); i++ {
		hs := make([]uint64, w)
		for j := range w {
			hs[j] = h.String(tokens[i+j])
		}
		set[h.Shingle(hs)] = true
	}
	out := make([]uint64, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

func TestBroderExample(t *testing.T) {
	// "So for instance the 4-shingling of (a,rose,is,a,rose,is,a,rose) is
	// the set {(a,rose,is,a), (rose,is,a,rose), (is,a,rose,is)}."
	toks := strings.Fields("a rose is a rose is a rose")
	got := Fingerprints(nil, h, toks, 4)
	if len(got) != 3 {
		t.Fatalf("got %d shingles, want 3", len(got))
	}
	if Count(len(toks), 4) != 5 {
		t.Errorf("Count = %d, want 5 (with repeats)", Count(len(toks), 4))
	}
	want := []uint64{
		h.Shingle([]uint64{h.String("a"), h.String("rose"), h.String("is"), h.String("a")}),
		h.Shingle([]uint64{h.String("rose"), h.String("is"), h.String("a"), h.String("rose")}),
		h.Shingle([]uint64{h.String("is"), h.String("a"), h.String("rose"), h.String("is")}),
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("got %x, want %x", got, want)
	}
}

func TestW1IsTokenSet(t *testing.T) {
	toks := strings.Fields("to be or not to be that is the question")
	got := Fingerprints(nil, h, toks, 1)
	distinct := map[string]bool{}
	for _, tok := range toks {
		distinct[tok] = true
	}
	if len(got) != len(distinct) {
		t.Errorf("w=1: %d shingles, want %d distinct tokens", len(got), len(distinct))
	}
}

func TestFewerThanW(t *testing.T) {
	toks := strings.Fields("only four tokens here")
	if got := Fingerprints(nil, h, toks, 5); got != nil {
		t.Errorf("nil dst: got %v, want nil", got)
	}
	if got := Fingerprints(nil, h, nil, 1); got != nil {
		t.Errorf("no tokens: got %v, want nil", got)
	}
	buf := make([]uint64, 3, 10)
	if got := Fingerprints(buf, h, toks, 5); len(got) != 0 || cap(got) != 10 {
		t.Errorf("reused dst: got len %d cap %d, want empty with the buffer kept", len(got), cap(got))
	}
	if got := Fingerprints(nil, h, toks, 4); len(got) != 1 {
		t.Errorf("exactly w tokens: got %d shingles, want 1", len(got))
	}
	for _, c := range [][3]int{{0, 1, 0}, {3, 4, 0}, {4, 4, 1}, {10, 4, 7}, {10, 1, 10}} {
		if got := Count(c[0], c[1]); got != c[2] {
			t.Errorf("Count(%d, %d) = %d, want %d", c[0], c[1], got, c[2])
		}
	}
}

func TestBadWPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("w = 0 did not panic")
		}
	}()
	Fingerprints(nil, h, []string{"a"}, 0)
}

func randomTokens(r *rand.Rand, n, vocab int) []string {
	toks := make([]string, n)
	for i := range toks {
		toks[i] = fmt.Sprintf("t%d", r.IntN(vocab))
	}
	return toks
}

func TestMatchesNaiveSortedDistinct(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var buf []uint64
	for range 500 {
		w := 1 + r.IntN(12)
		// A small vocabulary makes repeated shingles common.
		toks := randomTokens(r, r.IntN(120), 1+r.IntN(6))
		buf = Fingerprints(buf, h, toks, w)
		want := naive(toks, w)
		if !slices.Equal(buf, want) && !(len(buf) == 0 && len(want) == 0) {
			t.Fatalf("w=%d tokens=%q: got %x, want %x", w, toks, buf, want)
		}
		for i := 1; i < len(buf); i++ {
			if buf[i-1] >= buf[i] {
				t.Fatalf("not sorted and distinct at %d", i)
			}
		}
	}
}

func TestReusesDst(t *testing.T) {
	toks := randomTokens(rand.New(rand.NewPCG(3, 4)), 500, 1000)
	dst := make([]uint64, 0, 1000)
	if n := testing.AllocsPerRun(20, func() { dst = Fingerprints(dst, h, toks, 10) }); n != 0 {
		t.Errorf("Fingerprints with a large enough dst allocates %v times", n)
	}
}

// TestEditChangesAtMostW: replacing, inserting or deleting one token
// changes only the shingles that cover it, at most w of them on each
// side of the symmetric difference. This locality is what makes
// resemblance robust to small edits.
func TestEditChangesAtMostW(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		w := 1 + r.IntN(10)
		toks := randomTokens(r, w+r.IntN(100), 1<<30) // distinct tokens
		pos := r.IntN(len(toks))
		var edited []string
		switch r.IntN(3) {
		case 0: // replace
			edited = slices.Clone(toks)
			edited[pos] = "NEW"
		case 1: // insert
			edited = slices.Insert(slices.Clone(toks), pos, "NEW")
		default: // delete
			edited = slices.Delete(slices.Clone(toks), pos, pos+1)
		}
		a := Fingerprints(nil, h, toks, w)
		b := Fingerprints(nil, h, edited, w)
		onlyA, onlyB := diff(a, b), diff(b, a)
		if onlyA > w || onlyB > w {
			t.Fatalf("w=%d edit at %d: %d shingles lost, %d gained, want <= w", w, pos, onlyA, onlyB)
		}
	}
}

// diff counts elements of sorted a not in sorted b.
func diff(a, b []uint64) int {
	n := 0
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			n++
		}
	}
	return n
}

func TestShiftInvariance(t *testing.T) {
	// Shingles depend on content, not position: the same text framed by
	// different boilerplate shares all its inner shingles.
	body := strings.Fields("the quick brown fox jumps over the lazy dog and runs away")
	a := Fingerprints(nil, h, append([]string{"header"}, body...), 4)
	b := Fingerprints(nil, h, append(strings.Fields("a much longer header"), body...), 4)
	inner := Fingerprints(nil, h, body, 4)
	if diff(inner, a) != 0 || diff(inner, b) != 0 {
		t.Error("shingles of the shared body are not in both documents")
	}
}

func Example() {
	h := fingerprint.New(fingerprint.DefaultSeed)
	a := strings.Fields("a rose is a rose is a rose")
	b := strings.Fields("a rose is a flower which is a rose")
	sa := Fingerprints(nil, h, a, 3)
	sb := Fingerprints(nil, h, b, 3)
	shared := 0
	for _, x := range sa {
		if _, ok := slices.BinarySearch(sb, x); ok {
			shared++
		}
	}
	fmt.Println(len(sa), len(sb), shared)
	// Output: 3 7 3
}

var sink []uint64

func BenchmarkFingerprints(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{100, 1000, 10000} {
		toks := randomTokens(r, n, 5000)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var dst []uint64
			for b.Loop() {
				dst = Fingerprints(dst, h, toks, 10)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/token")
			sink = dst
		})
	}
}

func TestBucketSort(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 300 {
		n := 1 + r.IntN(3000)
		a := make([]uint64, n)
		for i := range a {
			switch r.IntN(3) {
			case 0:
				a[i] = r.Uint64()
			case 1:
				a[i] = r.Uint64N(1000) // all in the first bucket: the fallback
			default:
				a[i] = r.Uint64N(8) << 40 // few distinct values: duplicates
			}
		}
		want := slices.Clone(a)
		slices.Sort(want)
		bucketSort(a, make([]uint64, n))
		if !slices.Equal(a, want) {
			t.Fatalf("bucketSort of %d values is not sorted", n)
		}
	}
}

func BenchmarkSort(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{100, 256, 1000, 10000} {
		orig := make([]uint64, n)
		for i := range orig {
			orig[i] = r.Uint64()
		}
		a, tmp := make([]uint64, n), make([]uint64, n)
		b.Run(fmt.Sprintf("bucket/%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(a, orig)
				bucketSort(a, tmp)
			}
		})
		b.Run(fmt.Sprintf("pdq/%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(a, orig)
				slices.Sort(a)
			}
		})
	}
}

// TestFromHashesMatchesFingerprints: the hash-fed entry point, into a
// fresh buffer or in place, gives what Fingerprints gives for the tokens.
func TestFromHashesMatchesFingerprints(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	h := fingerprint.New(3)
	for range 500 {
		tokens := make([]string, r.IntN(300))
		for i := range tokens {
			tokens[i] = string(rune('a' + r.IntN(6))) // repeats make duplicate shingles
		}
		w := 1 + r.IntN(12)
		want := Fingerprints(nil, h, tokens, w)
		hashes := make([]uint64, len(tokens))
		for i, tok := range tokens {
			hashes[i] = h.String(tok)
		}
		if got := FromHashes(nil, h, hashes, w); !slices.Equal(got, want) {
			t.Fatalf("FromHashes(%d tokens, w=%d) differs from Fingerprints", len(tokens), w)
		}
		if got := FromHashes(hashes[:0], h, hashes, w); !slices.Equal(got, want) {
			t.Fatalf("FromHashes in place (%d tokens, w=%d) differs from Fingerprints", len(tokens), w)
		}
	}
}
