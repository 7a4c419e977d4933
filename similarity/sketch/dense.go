package sketch

import (
	"slices"

	"github.com/neardup/neardup/hashing/fingerprint"
)

// Dense is the second, denser sample of a document that settles the pairs
// whose first estimate cannot tell (issue 39): the K smallest of the
// document's fingerprints under another permutation than the one its
// sketch samples in, each kept as 32 bits. K = 512 is 2 KB for a page of
// 512 shingles or more, the whole set (so an exact figure) below, and
// puts the standard error of a resemblance of 0.5 at 0.022 (MOD_25's on
// a 600-word page is about 0.1). The offline study
// (docs/sketch-study.md, "A dense sample for the uncertain pairs") chose
// K: 512 keeps precision and recall at or above 0.95 on every shared
// corpus and four seeds, 256 does not.
//
// The permutation is independent of the sketch's because the pairs a
// dense sample judges are chosen by their sketch estimate: samples of the
// same order would share the values that made the first estimate lean
// one way and lean the same way.
type Dense struct{ K int }

// DefaultDense is the dense sample the pipeline keeps.
var DefaultDense = Dense{K: 512}

// denseSalt makes DenseValue's permutation another than the sketches'
// (which take the fingerprints in their own order, or Mix for MinHash).
const denseSalt = 0x6a09e667f3bcc909

// DenseValue is the 32-bit value fingerprint x has in dense samples:
// the high half of another fixed permutation of the 64-bit space.
func DenseValue(x uint64) uint32 { return uint32(fingerprint.Mix(x^denseSalt) >> 32) }

// Sample appends to dst the dense sample of a set of fingerprints (any
// order, distinct): its d.K smallest distinct DenseValues, ascending.
// Two fingerprints of one set may share a 32-bit value (about one pair
// in 2^32 / |set|); the sample keeps it once, as if the set had one
// element fewer.
//
// It is the definition, for tests and offline tools; the pipeline keeps
// Select's cheaper selection and sorts only the samples it reads back.
func (d Dense) Sample(dst []uint32, set []uint64) []uint32 {
	start := len(dst)
	dst = appendDenseValues(dst, set)
	s := Sorted(dst[start:])
	return dst[:start+min(d.K, len(s))]
}

// appendDenseValues appends the DenseValue of every fingerprint of set.
func appendDenseValues(dst []uint32, set []uint64) []uint32 {
	for _, x := range set {
		dst = append(dst, DenseValue(x))
	}
	return dst
}

// Select appends to dst what phase 1 keeps of a set for its dense sample:
// the d.K smallest DenseValues (with a value two fingerprints share
// counted twice, about once in 2^32 / |set|), in no order. Sorting is
// left to Sorted, for the few documents whose samples are ever read: a
// page has about as many shingles as K, and sorting them was most of
// the sample's cost in phase 1.
func (d Dense) Select(dst []uint32, set []uint64) []uint32 {
	start := len(dst)
	if len(set) <= d.K {
		return appendDenseValues(dst, set)
	}
	// A radix selection: count the values by their top byte while
	// making them, find the byte b whose bucket holds the K-th smallest,
	// move the buckets below b to the front, then b's bucket after them,
	// and select within that one bucket only (about |set|/256 values).
	// A third less time than a quickselect over the whole set on a page
	// of 600 shingles, where most values are kept (2.2 to 1.45 us,
	// BenchmarkDenseSample).
	var hist [256]int
	for _, x := range set {
		v := DenseValue(x)
		hist[v>>24]++
		dst = append(dst, v)
	}
	s := dst[start:]
	below, b := 0, uint32(0)
	for below+hist[b] < d.K {
		below += hist[b]
		b++
	}
	w := 0
	for i, v := range s {
		if v>>24 < b {
			s[w], s[i] = s[i], s[w]
			w++
		}
	}
	end := w
	for i := w; i < len(s); i++ {
		if s[i]>>24 == b {
			s[end], s[i] = s[i], s[end]
			end++
		}
	}
	smallest(s[w:end], d.K-w)
	return dst[:start+d.K]
}

// Sorted sorts a selection (Select) in place and drops repeated values:
// the dense sample Estimate takes. It is Sample's result but when the K
// smallest values held a repeated one, where it has one value fewer.
func Sorted(s []uint32) []uint32 {
	slices.Sort(s)
	return slices.Compact(s)
}

// smallest moves the k smallest values of s to its front (in no order):
// a quickselect, deterministic in its pivots.
func smallest(s []uint32, k int) {
	lo, hi := 0, len(s)
	for hi-lo > 1 {
		p := s[lo+(hi-lo)/2]
		// Three-way partition of s[lo:hi] around p.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch {
			case s[i] < p:
				s[lt], s[i] = s[i], s[lt]
				lt++
				i++
			case s[i] > p:
				gt--
				s[i], s[gt] = s[gt], s[i]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k > gt:
			lo = gt
		default:
			return
		}
	}
}

// Estimate is Broder's MIN_K estimate of the resemblance of A and B from
// their dense samples a and b and the sizes of their sets: the share of
// values both hold among the K smallest of a ∪ b. It is unbiased for the
// same reason as MIN_s's: those K are a uniformly random K-subset of the
// union of the sets. When both sets have at most K values the samples
// are the sets, and the estimate is their exact resemblance, from the
// whole union. It returns the estimate with the samples n it rests on
// and the union's size u when known (then n == u: the figure is exact),
// so that StdErr(t, n, u) is 0 for an exact figure.
func (d Dense) Estimate(a, b []uint32, sizeA, sizeB int) FloorEstimate {
	whole := sizeA <= d.K && sizeB <= d.K
	limit := d.K
	if whole {
		limit = len(a) + len(b)
	}
	shared, n := sharedInUnion(a, b, limit)
	e := FloorEstimate{Samples: n}
	if whole {
		e.Universe = n
	}
	if n > 0 {
		e.Resemblance = float64(shared) / float64(n)
	}
	return e
}
