// Package chunk cuts text into content-defined chunks, the features of
// Jain, Dahlin and Tewari's Bloom-filter similarity (2005), after LBFS: a
// Rabin fingerprint rolls over a 48-byte window, and a chunk ends where
// the fingerprint's low k bits equal a marker, so that the expected chunk
// is 2^k bytes. Boundaries depend on the content around them only: an edit
// changes the chunks it touches and perhaps the next, never the rest, as
// w-word shingles do for words.
package chunk

import (
	"fmt"
	"slices"
)

const (
	// Window is the bytes the Rabin fingerprint rolls over (the paper's
	// 48).
	Window = 48
	// Marker is the value the fingerprint's low bits must equal at a
	// boundary (the paper's 0x78), taken modulo the expected size.
	Marker = 0x78
	// MaxSize is the largest chunk (the paper's 64 KB): a run of text with
	// no boundary is cut there.
	MaxSize = 64 << 10
	// Poly is the irreducible polynomial of degree 63 over GF(2) that the
	// fingerprint reduces by: LBFS's (TestPolyIrreducible checks it).
	Poly uint64 = 0xbfe6b8a5bf378d83
)

// The fingerprint f of the window, a polynomial of degree below 63, takes
// a byte m as f·x^8 + m mod Poly: with f = h·x^55 + l (h its top 8 bits),
// f·x^8 = h·x^63 + l·x^8, so it is (l<<8 | m) xor tab[h], tab[h] being
// h·x^63 mod Poly. The byte o leaving the window was multiplied by
// x^(8·(Window-1)) since it came in: out[o] removes it.
var tab, out [256]uint64

func init() {
	x63 := Poly ^ 1<<63 // x^63 mod Poly
	for h := range 256 {
		tab[h] = mulMod(uint64(h), x63)
	}
	shift := uint64(1) // x^(8·(Window-1)) mod Poly
	for range Window - 1 {
		shift = appendByte(shift, 0)
	}
	for o := range 256 {
		out[o] = mulMod(uint64(o), shift)
	}
}

func appendByte(f uint64, m byte) uint64 {
	return (f&(1<<55-1))<<8 | uint64(m) ^ tab[f>>55]
}

// mulMod is a·b mod Poly over GF(2), for a and b of degree below 63.
func mulMod(a, b uint64) uint64 {
	var r uint64
	for i := 62; i >= 0; i-- {
		r <<= 1 // r·x
		if r&(1<<63) != 0 {
			r ^= Poly
		}
		if b&(1<<uint(i)) != 0 {
			r ^= a
		}
	}
	return r
}

// Chunker cuts text into chunks of an expected size.
type Chunker struct {
	mask, marker uint64
	min, max     int
}

// New returns a Chunker whose chunks are expected bytes on average: a
// power of two from 64 to 64 KB. The smallest chunk is a quarter of that
// (LBFS's 2 KB for 8 KB: a boundary right after another would make a
// chunk too small to say anything), the largest MaxSize.
func New(expected int) (*Chunker, error) {
	if expected < 64 || expected > MaxSize || expected&(expected-1) != 0 {
		return nil, fmt.Errorf("chunks:%d: the expected chunk size must be a power of two from 64 to %d bytes", expected, MaxSize)
	}
	mask := uint64(expected - 1)
	return &Chunker{mask: mask, marker: Marker & mask, min: expected / 4, max: MaxSize}, nil
}

// Expected is the expected chunk size.
func (c *Chunker) Expected() int { return int(c.mask + 1) }

// Cut appends to dst the end offset of every chunk of data, in order (the
// last is len(data); none for empty data), and returns it. A boundary
// falls after byte i when the fingerprint of the window ending at i
// matches the marker and the chunk has at least the minimum size, or when
// the chunk reaches the maximum. The window restarts at each boundary, so
// a boundary depends only on the bytes since the one before.
func (c *Chunker) Cut(dst []int, data []byte) []int {
	start := 0
	for start < len(data) {
		end := c.next(data[start:])
		start += end
		dst = append(dst, start)
	}
	return dst
}

// next is the length of the first chunk of data.
func (c *Chunker) next(data []byte) int {
	n := min(len(data), c.max)
	if n <= c.min {
		return n
	}
	// The window holds the Window bytes before the first possible
	// boundary, so its fingerprint there is of those bytes alone.
	from := max(c.min-Window, 0)
	var f uint64
	for i := from; i < n; i++ {
		if i-from >= Window {
			f ^= out[data[i-Window]]
		}
		f = appendByte(f, data[i])
		if i+1 >= c.min && f&c.mask == c.marker {
			return i + 1
		}
	}
	return n
}

// Fingerprint is a chunk's feature: a 64-bit hash of its bytes. Any
// fingerprint.Hasher-like function will do; the pipeline passes its
// seeded one.
type Fingerprint func([]byte) uint64

// Features appends to dst the sorted, distinct fingerprints of data's
// chunks, and returns it: a document's feature set, as
// shingle.Fingerprints gives its shingles.
func (c *Chunker) Features(dst []uint64, data []byte, fp Fingerprint) []uint64 {
	start := len(dst)
	for prev := 0; prev < len(data); {
		end := prev + c.next(data[prev:])
		dst = append(dst, fp(data[prev:end]))
		prev = end
	}
	slices.Sort(dst[start:])
	return append(dst[:start], slices.Compact(dst[start:])...)
}
