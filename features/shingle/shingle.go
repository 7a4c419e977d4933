// Package shingle computes Broder's w-shingling S(D, w) of a token
// sequence as a sorted set of 64-bit fingerprints.
//
// A w-shingle is a contiguous run of w tokens; S(D, w) is the set of all
// distinct w-shingles of document D (Broder et al. use w = 10). Each
// token is fingerprinted once, and a shingle's fingerprint is
// fingerprint.Hasher.Shingle over the fingerprints of its w tokens, so the
// cost is one string hash per token plus a rolling polynomial step per position,
// independent of token lengths. Two shingles get the same fingerprint only
// if they are equal or their hashes collide (see package fingerprint for
// the odds).
//
// The result is sorted and deduplicated because that is what the rest of
// the pipeline wants: package sketch selects from a sorted set, and exact
// resemblance is a merge of two sorted sets.
package shingle

import (
	"math/bits"
	"slices"

	"github.com/neardup/neardup/hashing/fingerprint"
)

// Fingerprints returns the sorted, distinct fingerprints of the w-word
// shingles of tokens (Broder's S(D,w) as 64-bit values). Each token is
// hashed once with h.String; a shingle's fingerprint is h.Shingle over its
// w token hashes. A document with fewer than w tokens has no shingles: the
// result is empty (nil when dst is nil; dst[:0] otherwise, so a caller
// reusing its buffer keeps it). dst is reused if it has capacity (may be
// nil). Fingerprints panics if w < 1.
func Fingerprints(dst []uint64, h fingerprint.Hasher, tokens []string, w int) []uint64 {
	// The token hashes go into dst itself, and FromHashes overwrites them
	// in place: shingle i's fingerprint replaces token i's hash, which
	// only shingles starting at or before i read.
	if w < 1 || Count(len(tokens), w) == 0 {
		return FromHashes(dst, h, nil, w)
	}
	hashes := dst[:0]
	for _, t := range tokens {
		hashes = append(hashes, h.String(t))
	}
	return FromHashes(hashes, h, hashes, w)
}

// FromHashes is Fingerprints given the token hashes (h.String of each
// token, as canon.AppendHashes gives them) instead of the tokens. dst may
// be hashes[:0] (or hashes) to work in place; it must not overlap hashes
// otherwise.
func FromHashes(dst []uint64, h fingerprint.Hasher, hashes []uint64, w int) []uint64 {
	if w < 1 {
		panic("shingle: w must be at least 1")
	}
	n := Count(len(hashes), w)
	if n == 0 {
		return dst[:0]
	}
	// The words after the n shingles are the sort's scratch space, so
	// the function allocates nothing when dst is large enough (callers
	// reuse it), at the price of keeping up to twice the shingle count.
	need := n
	if n >= sortMin {
		need = 2 * n
	}
	out := slices.Grow(dst[:0], need)[:n]
	// Rolling the polynomial of fingerprint.Hasher.Shingle: one multiply
	// and add per token in, one per token out. When out aliases hashes,
	// out[i] overwrites hashes[i] only after the window no longer needs
	// it, and the value leaving the window is saved before it is lost.
	pow := fingerprint.ShinglePow(w)
	var r uint64
	for _, x := range hashes[:w] {
		r = r*fingerprint.ShingleBase + x
	}
	for i := range out {
		leaving := hashes[i]
		out[i] = h.ShingleFinish(r)
		if i+w < len(hashes) {
			r = (r-leaving*pow)*fingerprint.ShingleBase + hashes[i+w]
		}
	}
	if n >= sortMin {
		bucketSort(out, out[n:2*n:2*n])
	} else {
		slices.Sort(out)
	}
	return slices.Compact(out)
}

// sortMin is the size from which bucketSort beats slices.Sort on random
// 64-bit values.
const sortMin = 64

// bucketSort sorts a using tmp (len(tmp) >= len(a)) as scratch. Shingle
// fingerprints are uniformly distributed, the case where a comparison
// sort pays its full n log n while one counting-sort pass on the top bits
// leaves a handful of values per bucket: a histogram pass, a scatter pass
// and insertion sorts of tiny buckets, about 3x faster than slices.Sort
// at 10^4 values. Repeated shingles land in one bucket, where insertion
// sort of equal values is linear; a bucket that is large for any other
// reason (inputs that are not hashes) falls back to slices.Sort, so the
// worst case stays n log n.
func bucketSort(a, tmp []uint64) {
	n := len(a)
	// About 4 to 8 values per bucket, at most 4096 buckets.
	b := min(max(bits.Len(uint(n))-3, 1), 12)
	shift := 64 - uint(b)
	var counts [1<<12 + 1]int32
	c := counts[:1<<b+1]
	for _, v := range a {
		c[v>>shift+1]++
	}
	for i := 1; i < len(c); i++ {
		c[i] += c[i-1]
	}
	tmp = tmp[:n]
	for _, v := range a {
		i := v >> shift
		tmp[c[i]] = v
		c[i]++
	}
	// c[i] is now the end of bucket i, and the start of bucket i+1.
	start := int32(0)
	for _, end := range c[:1<<b] {
		bucket := tmp[start:end]
		if len(bucket) > 32 {
			slices.Sort(bucket)
		} else {
			insertionSort(bucket)
		}
		start = end
	}
	copy(a, tmp)
}

func insertionSort(a []uint64) {
	for i := 1; i < len(a); i++ {
		v := a[i]
		j := i
		for j > 0 && a[j-1] > v {
			a[j] = a[j-1]
			j--
		}
		a[j] = v
	}
}

// Count returns the number of (not necessarily distinct) w-shingles,
// max(0, len(tokens)-w+1), for w >= 1.
func Count(ntokens, w int) int {
	return max(0, ntokens-w+1)
}
