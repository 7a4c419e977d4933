// Package bloom holds Bloom filters of documents' feature sets and
// estimates how much two documents share from their filters alone, after
// Jain, Dahlin and Tewari, "Using Bloom Filters to Refine Web Search
// Results" (2005): a document is the set of its features (shingle or
// chunk fingerprints), its filter a compact tag that can be stored beside
// it and compared with another's by a bitwise AND.
//
// # Filters
//
// A filter of n features has m bits, m the power of two at or above
// bitsPerFeature*n (at least 64, at most MaxBits), and K hash functions,
// K = round(bitsPerFeature ln 2), the k = (m/n) ln 2 that Jain (after
// Broder and Mitzenmacher) shows minimises false matches. K depends on
// bitsPerFeature only, not on n, so that every filter of a run can be
// compared with every other. The K bits of a feature f are
// (h1 + i*h2) mod m for i < K (Kirsch and Mitzenmacher's double hashing),
// with h1 = f and h2 = a 64-bit mix of f made odd: an odd step is
// invertible mod a power of two, so a feature's K bits are K distinct
// bits. Because m is a power of two, bit p of an m-bit filter lies at
// p mod m/2 in the m/2-bit filter of the same features: OR-ing a
// filter's two halves (Fold) gives exactly the smaller filter, which is
// how filters of documents of different lengths are compared.
//
// # Why the raw AND ratio is not the overlap
//
// Jain compares two filters by the share of one's set bits that are also
// set in the other, and its section 2.3.1 puts the share two unrelated
// documents (no common feature, c = 0) reach at
//
//	2(1 - 0.5^(0.6185^(m/n)))
//
// for equal sizes n and the optimal k: 0.6973 at m = n, 0.1929 at
// m = 4n, 0.0295 at m = 8n, hence 8 bits a feature for a 97% accurate
// match. That figure counts only the bits set by those features of B
// that A's filter wrongly reports as members (false positives, p^k
// each). The AND counts more: every bit of A's filter that any of B's
// features happens to set, reported as a member or not. At the optimal k a filter is
// half full, so about half of A's bits are set in the filter of any
// unrelated B of the same size: the expected share is 1 - q^nB (q below),
// about 1 - e^(-kn/m), 0.53 at m = 8n and k = 6, and still 0.31 at
// m = 16n (TestRawShare measures it). The false share also grows with
// the other document's size and with the folding that makes unequal
// filters comparable, so no threshold on the raw share means the same
// thing for all pairs.
//
// Compare removes that bias by inverting the expectation instead of
// reading the share as the overlap. Let q = 1 - K/m be the chance that
// one feature leaves a given bit clear (its K bits are distinct and, for
// a uniform fingerprint, each bit is among them with chance K/m; the
// paper's (1 - 1/m)^K treats them as independent). A bit is set in both
// filters when one of the c common features sets it, or else when one of
// A's nA - c others and one of B's nB - c others do, so the expected
// popcount of A AND B is m P(c), exactly, by linearity, with
//
//	P(c) = 1 - q^c + q^c (1 - q^(nA-c)) (1 - q^(nB-c))
//	     = 1 - q^nA - q^nB + q^(nA+nB-c)
//
// (at c = 0, m (1 - q^nA)(1 - q^nB): the false matches above). P is strictly
// increasing in c and its second form inverts in closed form. Compare
// solves m P(c) = popcount(A AND B) with q^nA and q^nB taken as the
// shares of clear bits zA/m and zB/m the two filters actually show,
// rather than their expectations from nA and nB: since
// popcount(A AND B) = m - zA - zB + zOR, this is
//
//	q^c = (zA zB) / (m zOR),  ĉ = ln((zA/m)(zB/m)/(zOR/m)) / ln q
//
// the classic set-size estimates ln(z/m)/ln q of the two filters and of
// their OR, combined by inclusion and exclusion. Reading the fill off the
// filters cancels its chance variation, which the expected-fill inversion
// takes for overlap: at sizes within a factor of 3 its error is about a
// quarter smaller (TestObservedFillBeatsExpected). Compare then takes ĉ as a share
// of the smaller set's own estimated size and scales that to its true
// size N, clamped to [0, 1]: identical filters give resemblance 1 exactly,
// and a filter whose bits all lie in the other's gives containment 1, as
// Jain reads a complete subset of bits. It is a pure function of the two
// filters (no iteration), the same bits on every run.
//
// # When the filters cannot tell
//
// The estimate is as good as the filters are informative. Folding a large
// document's filter to a small one's size fills it: at sizes 10 to 1
// almost every bit of the folded filter is set, and the small document's
// bits are all set in it whatever the two share, which the estimate
// above reads as containment 1. So Compare first weighs the evidence:
// were the sets disjoint, every set bit of the smaller set's filter (m - zS
// of them) would be set in the other's (zO clear) with chance
// (1 - zO/m)^(m - zS). Where that chance is above e^-12 (about 6 in a
// million), the filters hold no evidence either way and Compare returns
// zeros, as for an empty set; two identical one-feature filters (6 bits of
// 64) still clear the bar. On 1,500 pages of the sample crawl, with exact
// containment from the feature sets as the truth, a containment:0.8
// policy on the bare estimate links 4,592 pairs falsely for 82 right
// (10-word shingles; 13,427 for 62 with 256-byte chunks), and 0 for 78
// (19 for 62) with the rule; resemblance, which cannot exceed min/max and
// so matters only for sizes within a factor of two, is not affected.
// Containment of a small document in a much larger one is beyond filters
// sized to each document, as Jain notes ("if we want to support subset
// matching the filter size should be identical"): TestAccuracy and
// TestUninformative measure the regimes.
package bloom

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/neardup/neardup/hashing/fingerprint"
)

// DefaultBitsPerFeature is m/n. Jain: 8n bits leaves ~3% false matching
// bits, by the paper's count of false members; the raw share of matching
// bits is nearer 50%, which Compare corrects (see the package comment).
const DefaultBitsPerFeature = 8

// MaxBits caps the filter of a very long document (8 KiB per filter).
const MaxBits = 1 << 16

// maxWords is MaxBits in 64-bit words.
const maxWords = MaxBits / 64

// K is the hash count for bitsPerFeature: round((m/n) ln 2), at least 1
// (the paper's optimum) and at most 255. One K serves every document of a
// run, so that their filters compare.
func K(bitsPerFeature int) int {
	k := int(math.Round(float64(bitsPerFeature) * math.Ln2))
	return min(max(k, 1), math.MaxUint8)
}

// Filter is the Bloom filter of a set of features.
type Filter struct {
	N    uint32   // features added (distinct)
	K    uint8    // hash functions
	Bits []uint64 // m = 64*len(Bits) bits, len a power of two
}

// M is the filter's size in bits.
func (f Filter) M() int { return 64 * len(f.Bits) }

// New builds the filter of a sorted, distinct feature set: m the power of
// two at or above bitsPerFeature*len(features), at least 64 and at most
// MaxBits, and K(bitsPerFeature) bits a feature by double hashing (see the
// package comment). A bitsPerFeature below 1 counts as 1.
func New(features []uint64, bitsPerFeature int) Filter {
	bpf := max(bitsPerFeature, 1)
	want := uint64(bpf) * uint64(len(features))
	words := 1
	for words < maxWords && uint64(words)*64 < want {
		words <<= 1
	}
	return build(features, K(bpf), words)
}

// build is the filter of features with k hashes in words 64-bit words.
func build(features []uint64, k, words int) Filter {
	f := Filter{N: uint32(min(len(features), math.MaxUint32)), K: uint8(k), Bits: make([]uint64, words)}
	mask := uint64(words*64 - 1)
	for _, x := range features {
		h, step := x, stride(x)
		for range k {
			p := h & mask
			f.Bits[p>>6] |= 1 << (p & 63)
			h += step
		}
	}
	return f
}

// stride is h2, the double-hashing step of feature x: odd, so that a
// feature's K bits are distinct in any power-of-two filter.
func stride(x uint64) uint64 { return fingerprint.Mix(x^0x9e3779b97f4a7c15) | 1 }

// Fold returns the filter folded to words 64-bit words, by OR-ing its
// halves until it has that many: exactly the filter New would build of the
// same features at that size. words must be a power of two from 1 to
// len(f.Bits); Fold panics otherwise. The result never shares f's Bits.
func (f Filter) Fold(words int) Filter {
	if words < 1 || words > len(f.Bits) || words&(words-1) != 0 {
		panic(fmt.Sprintf("bloom: cannot fold %d words to %d", len(f.Bits), words))
	}
	out := Filter{N: f.N, K: f.K, Bits: make([]uint64, words)}
	for i := 0; i < len(f.Bits); i += words {
		for j, w := range f.Bits[i : i+words] {
			out.Bits[j] |= w
		}
	}
	return out
}

// The encoding: N as a little-endian uint32, K as one byte, the number of
// words as a little-endian uint32, then the words, little-endian.
const headerLen = 4 + 1 + 4

// Append appends the filter's binary encoding to b.
func (f Filter) Append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, f.N)
	b = append(b, f.K)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(f.Bits)))
	for _, w := range f.Bits {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	return b
}

// ErrMalformed is the error (wrapped) of Decode on bytes that are not a
// filter's encoding.
var ErrMalformed = errors.New("bloom: malformed filter")

// Decode decodes a filter encoded by Append from the start of b and
// returns it with the rest of b. It returns an error wrapping ErrMalformed,
// never panics, on truncated input, a K of 0, a size that is not a power
// of two from 1 to MaxBits/64 words, or more bits set than N features can
// set.
func Decode(b []byte) (Filter, []byte, error) {
	if len(b) < headerLen {
		return Filter{}, b, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrMalformed, len(b), headerLen)
	}
	f := Filter{N: binary.LittleEndian.Uint32(b), K: b[4]}
	words := binary.LittleEndian.Uint32(b[5:])
	b = b[headerLen:]
	switch {
	case f.K == 0:
		return Filter{}, b, fmt.Errorf("%w: K is 0", ErrMalformed)
	case words == 0 || words > maxWords || words&(words-1) != 0:
		return Filter{}, b, fmt.Errorf("%w: %d words, not a power of two from 1 to %d", ErrMalformed, words, maxWords)
	case uint64(len(b)) < 8*uint64(words):
		return Filter{}, b, fmt.Errorf("%w: %d words need %d bytes, %d left", ErrMalformed, words, 8*words, len(b))
	}
	f.Bits = make([]uint64, words)
	ones := 0
	for i := range f.Bits {
		f.Bits[i] = binary.LittleEndian.Uint64(b[8*i:])
		ones += bits.OnesCount64(f.Bits[i])
	}
	if uint64(ones) > uint64(f.N)*uint64(f.K) {
		return Filter{}, b, fmt.Errorf("%w: %d bits set by %d features of %d bits each", ErrMalformed, ones, f.N, f.K)
	}
	return f, b[8*words:], nil
}

// Estimate is what Compare estimates of two feature sets A and B.
type Estimate struct {
	Intersection float64 // estimated |A∩B|, in [0, min(nA, nB)]
	Resemblance  float64 // |A∩B| / |A∪B|
	AInB, BInA   float64 // |A∩B|/|A|, |A∩B|/|B|
}

// Compare estimates the overlap of two feature sets from their filters,
// the larger folded to the smaller's size, by inverting the expected
// number of bits set in both as a function of the intersection (see the
// package comment). Empty sets give all zeros, and so do filters that
// hold no evidence either way (the larger folded too full to tell, see
// the package comment). Filters with different K do not compare: an
// error.
func Compare(a, b Filter) (Estimate, error) {
	if a.K != b.K {
		return Estimate{}, fmt.Errorf("bloom: filters with %d and %d hash functions do not compare", a.K, b.K)
	}
	if len(a.Bits) == 0 || len(b.Bits) == 0 || len(a.Bits)&(len(a.Bits)-1) != 0 || len(b.Bits)&(len(b.Bits)-1) != 0 {
		return Estimate{}, fmt.Errorf("bloom: filters of %d and %d words: want powers of two", len(a.Bits), len(b.Bits))
	}
	if a.N == 0 || b.N == 0 {
		return Estimate{}, nil
	}
	words := min(len(a.Bits), len(b.Bits))
	if int(a.K) >= 64*words {
		return Estimate{}, fmt.Errorf("bloom: %d hash functions in a %d-bit filter of %d features: not a filter New builds", a.K, 64*words, min(a.N, b.N))
	}
	z := zeros(a.Bits, b.Bits)
	return estimate(float64(a.N), float64(b.N), int(a.K), words, z), nil
}

// zeroCounts are the clear bits of two filters folded to the same size:
// of A, of B and of A OR B.
type zeroCounts struct{ a, b, or int }

// zeros counts the clear bits of a, b and a OR b, the larger folded to
// the smaller's size on the fly (no allocation).
func zeros(a, b []uint64) zeroCounts {
	swap := len(a) > len(b)
	if swap {
		a, b = b, a
	}
	var z zeroCounts
	w := len(a)
	for i, x := range a {
		y := b[i]
		for j := i + w; j < len(b); j += w {
			y |= b[j]
		}
		z.a += bits.OnesCount64(^x)
		z.b += bits.OnesCount64(^y)
		z.or += bits.OnesCount64(^(x | y))
	}
	if swap {
		z.a, z.b = z.b, z.a
	}
	return z
}

// minEvidence is the evidence, in nats, below which Compare reports no
// overlap: were the sets disjoint, every bit of the smaller set's filter
// would be set in the other's with a chance above e^-minEvidence (about 6
// in a million).
const minEvidence = 12

// smallerB reports whether B is the smaller set: by N, and on a tie the
// one whose filter has fewer clear bits (shows the larger set), so that
// Compare is symmetric.
func smallerB(nA, nB float64, z zeroCounts) bool { return nB < nA || nB == nA && z.b < z.a }

// evidence is -ln of the chance that the set bits of the smaller set's
// filter, with zS clear bits of m, would all be set in the other's, with
// zO clear, were the sets disjoint.
func evidence(m float64, zS, zO int) float64 {
	return (m - float64(zS)) * -math.Log1p(-float64(zO)/m)
}

// estimate is Compare's arithmetic: nA and nB features, k hashes, words
// 64-bit words, z the clear bits (see the package comment).
func estimate(nA, nB float64, k, words int, z zeroCounts) Estimate {
	if z.or == 0 {
		return Estimate{} // every bit set in one filter or the other: no evidence either way
	}
	m := float64(64 * words)
	lnq := math.Log1p(-float64(k) / m) // ln q, q = 1 - k/m
	// The set sizes the filters show, and the size of their intersection,
	// cA + cB - card(zOR) computed as one ratio: exact integers up to the
	// division, so that when one filter's bits lie in the other's
	// (zOR = zB) both is cA to the last bit.
	card := func(zeros float64) float64 { return math.Log(zeros/m) / lnq }
	cA, cB := card(float64(z.a)), card(float64(z.b))
	both := card(float64(z.a) * float64(z.b) / float64(z.or))
	// Read it as a share of the smaller set (by N; by the filter's
	// estimate on a tie, so that Compare is symmetric), whose noise
	// cancels, then scale to its true size.
	small, cS, zS, zO := nA, cA, z.a, z.b
	if smallerB(nA, nB, z) {
		small, cS, zS, zO = nB, cB, z.b, z.a
	}
	if evidence(m, zS, zO) < minEvidence {
		return Estimate{}
	}
	var c float64
	if cS > 0 && both > 0 {
		c = small * min(both/cS, 1)
	}
	return Estimate{
		Intersection: c,
		Resemblance:  c / (nA + nB - c),
		AInB:         c / nA,
		BInA:         c / nB,
	}
}
