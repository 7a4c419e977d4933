package chunk

import (
	"bytes"
	"hash/fnv"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// polyMod is a mod b over GF(2), any degrees.
func polyMod(a, b uint64) uint64 {
	db := bits.Len64(b)
	for da := bits.Len64(a); da >= db; da = bits.Len64(a) {
		a ^= b << uint(da-db)
	}
	return a
}

func polyGCD(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, polyMod(a, b)
	}
	return a
}

// xPow2 is x^(2^k) mod Poly.
func xPow2(k int) uint64 {
	r := uint64(2) // x
	for range k {
		r = mulMod(r, r)
	}
	return r
}

// TestPolyIrreducible checks Rabin's test on Poly (degree 63 = 3·3·7): it
// divides x^(2^63) - x, and shares no factor with x^(2^21) - x or
// x^(2^9) - x. An irreducible polynomial is what makes the fingerprint
// Rabin's, whose collision bound the paper relies on.
func TestPolyIrreducible(t *testing.T) {
	if bits.Len64(Poly) != 64 {
		t.Fatalf("Poly has degree %d, want 63", bits.Len64(Poly)-1)
	}
	if r := xPow2(63); r != 2 {
		t.Errorf("x^(2^63) mod Poly = %#x, want x", r)
	}
	for _, k := range []int{63 / 3, 63 / 7} {
		if g := polyGCD(Poly, xPow2(k)^2); g != 1 {
			t.Errorf("gcd(Poly, x^(2^%d) - x) = %#x, want 1", k, g)
		}
	}
	// A reducible polynomial fails the same test: x^63 + x^62 = x^62·(x+1).
	if polyGCD(1<<63|1<<62, xPow2(21)^2) == 1 && mulModWith(1<<63|1<<62) {
		t.Error("the test passes a reducible polynomial")
	}
}

// mulModWith reports whether x^(2^63) ≡ x modulo p (the first half of
// Rabin's test), for the sanity check on a reducible p.
func mulModWith(p uint64) bool {
	r := uint64(2)
	for range 63 {
		var s uint64
		for i := 62; i >= 0; i-- {
			s <<= 1
			if s&(1<<63) != 0 {
				s ^= p
			}
			if r&(1<<uint(i)) != 0 {
				s ^= r
			}
		}
		r = s
	}
	return r == 2
}

// direct is the fingerprint of a window computed from scratch.
func direct(window []byte) uint64 {
	var f uint64
	for _, b := range window {
		f = appendByte(f, b)
	}
	return f
}

// TestRolling checks that removing the leaving byte with out[] and adding
// the new one gives the fingerprint of the window computed from scratch,
// at every position of random data: the boundaries are a function of the
// 48 bytes before them only.
func TestRolling(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 4096)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	var f uint64
	for i := range data {
		if i >= Window {
			f ^= out[data[i-Window]]
		}
		f = appendByte(f, data[i])
		if want := direct(data[max(0, i+1-Window) : i+1]); f != want {
			t.Fatalf("byte %d: rolling %#x, from scratch %#x", i, f, want)
		}
	}
}

func randomText(r *rand.Rand, n int) []byte {
	words := []string{"the", "council", "met", "on", "Tuesday", "to", "discuss", "été", "東京", "budget", "and", "roads", "of", "a", "city", "—", "über", "42"}
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.Bytes()[:n]
}

// TestCut checks the chunks of 4 MB of text for several sizes: they tile
// the data, none is longer than MaxSize or (but the last) shorter than a
// quarter of the expected size, and their mean is the minimum plus the
// expected size (a boundary is a 1-in-expected event per byte once the
// minimum is reached), within four standard errors.
func TestCut(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	data := randomText(r, 4<<20)
	for _, expected := range []int{64, 256, 1024, 8192} {
		c, err := New(expected)
		if err != nil {
			t.Fatal(err)
		}
		ends := c.Cut(nil, data)
		if ends[len(ends)-1] != len(data) {
			t.Fatalf("chunks:%d: last end %d, want %d", expected, ends[len(ends)-1], len(data))
		}
		prev := 0
		for i, e := range ends {
			n := e - prev
			if n > MaxSize || (n < expected/4 && i < len(ends)-1) || n <= 0 {
				t.Fatalf("chunks:%d: chunk %d of %d bytes", expected, i, n)
			}
			prev = e
		}
		// The sizes past the minimum are about geometric, their spread
		// about the expected size: allow four standard errors.
		mean := float64(len(data)) / float64(len(ends))
		want := float64(expected + expected/4)
		tol := 4*float64(expected)/math.Sqrt(float64(len(ends)))/want + 0.02
		if math.Abs(mean/want-1) > tol {
			t.Errorf("chunks:%d: mean chunk %.0f bytes, want %.0f within %.0f%%", expected, mean, want, 100*tol)
		}
	}
	c, _ := New(256)
	if got := c.Cut(nil, nil); len(got) != 0 {
		t.Errorf("empty data: %v", got)
	}
	if got := c.Cut(nil, []byte("short")); !slices.Equal(got, []int{5}) {
		t.Errorf("5 bytes: %v, want one chunk", got)
	}
	// A run with no boundary (one repeated byte) is cut at MaxSize.
	same := bytes.Repeat([]byte{'a'}, 3*MaxSize+10)
	if got := c.Cut(nil, same); !slices.Equal(got, []int{MaxSize, 2 * MaxSize, 3 * MaxSize, 3*MaxSize + 10}) {
		t.Errorf("a run of one byte: %v", got)
	}
}

func fnvHash(b []byte) uint64 {
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

// TestEditIsLocal: an insertion, a deletion or a replaced word in the
// middle of a 64 KB text changes only the few chunks around it; the
// features (sorted, distinct) are otherwise the same.
func TestEditIsLocal(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	data := randomText(r, 64<<10)
	c, _ := New(256)
	before := c.Features(nil, data, fnvHash)
	if !slices.IsSorted(before) || len(slices.Compact(slices.Clone(before))) != len(before) {
		t.Fatal("features not sorted and distinct")
	}
	mid := len(data) / 2
	for name, edited := range map[string][]byte{
		"insert":  slices.Concat(data[:mid], []byte("inserted words "), data[mid:]),
		"delete":  slices.Concat(data[:mid], data[mid+40:]),
		"replace": slices.Concat(data[:mid], []byte("XXXXXXX"), data[mid+7:]),
	} {
		after := c.Features(nil, edited, fnvHash)
		lost, gained := difference(before, after), difference(after, before)
		if lost == 0 || lost > 4 || gained > 4 {
			t.Errorf("%s: %d of %d chunks lost, %d gained; want a few", name, lost, len(before), gained)
		}
	}
}

// difference counts the values of sorted a missing from sorted b.
func difference(a, b []uint64) int {
	n := 0
	for _, v := range a {
		if _, ok := slices.BinarySearch(b, v); !ok {
			n++
		}
	}
	return n
}

func TestNewRefuses(t *testing.T) {
	for _, expected := range []int{0, 32, 100, 1 << 17} {
		if _, err := New(expected); err == nil {
			t.Errorf("New(%d) accepted", expected)
		}
	}
	c, err := New(512)
	if err != nil || c.Expected() != 512 {
		t.Errorf("New(512): %v, %v", c, err)
	}
}

// BenchmarkFeatures measures chunking a 100 KB page of mixed-script text.
func BenchmarkFeatures(b *testing.B) {
	data := randomText(rand.New(rand.NewPCG(7, 8)), 100<<10)
	c, _ := New(256)
	b.SetBytes(int64(len(data)))
	var dst []uint64
	for b.Loop() {
		dst = c.Features(dst[:0], data, fnvHash)
	}
}
