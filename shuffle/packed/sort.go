package packed

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/hashing/fingerprint"
)

// Phases 2 and 3 sort every partition's records, the largest cost after
// phase 1. A comparison sort of 24- and 40-byte structs pays n log n
// comparisons and moves; these records carry a 64-bit key that is
// uniformly distributed (a shingle fingerprint, or a hash of the pair), so
// one counting pass on the key's top bits leaves a handful of records per
// bucket, which insertion sort finishes. Equal keys land in one bucket, and
// a bucket larger than bucketMax (a shingle in many documents) falls back
// to slices.SortFunc, so the worst case stays n log n.

const bucketMax = 32

// bucketSort sorts a by cmpFn, given that key orders a like cmpFn does on
// its first criterion and is uniform over 64 bits. tmp is scratch of len(a).
func bucketSort[T any](a, tmp []T, key func(*T) uint64, cmpFn func(x, y T) int) {
	n := len(a)
	if n < 64 {
		slices.SortFunc(a, cmpFn)
		return
	}
	b := min(max(bits.Len(uint(n))-2, 1), 20) // 2 to 4 records per bucket
	shift := 64 - uint(b)
	counts := make([]int32, 1<<b+1)
	for i := range a {
		counts[key(&a[i])>>shift+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	for i := range a {
		k := key(&a[i]) >> shift
		tmp[counts[k]] = a[i]
		counts[k]++
	}
	// counts[i] is now the end of bucket i.
	start := int32(0)
	for _, end := range counts[:1<<b] {
		bucket := tmp[start:end]
		if len(bucket) > bucketMax {
			slices.SortFunc(bucket, cmpFn)
		} else {
			for i := 1; i < len(bucket); i++ {
				for j := i; j > 0 && cmpFn(bucket[j], bucket[j-1]) < 0; j-- {
					bucket[j], bucket[j-1] = bucket[j-1], bucket[j]
				}
			}
		}
		start = end
	}
	copy(a, tmp)
}

// ComparePostings orders postings by (Shingle, Doc).
func ComparePostings(x, y Posting) int {
	return cmp.Or(cmp.Compare(x.Shingle, y.Shingle), cmp.Compare(x.Doc, y.Doc))
}

// SortPostings sorts postings by (Shingle, Doc); shingles must be
// fingerprints (uniform over 64 bits) for it to be fast.
func SortPostings(ps []Posting) {
	bucketSort(ps, make([]Posting, len(ps)), func(p *Posting) uint64 { return p.Shingle }, ComparePostings)
}

// PairHash is the hash a pair is partitioned and sorted by.
func PairHash(a, b uint64) uint64 { return fingerprint.Mix(a ^ (b * 0x9e3779b97f4a7c15)) }

// ComparePairs orders pairs by (PairHash, A, B, RankA): equal pairs are
// adjacent, in an order that is fixed but not that of the doc IDs.
func ComparePairs(x, y Pair) int {
	return cmp.Or(cmp.Compare(PairHash(x.A, x.B), PairHash(y.A, y.B)),
		cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B), cmp.Compare(x.RankA, y.RankA))
}

// SortPairs sorts pairs by ComparePairs.
func SortPairs(ps []Pair) {
	bucketSort(ps, make([]Pair, len(ps)), func(p *Pair) uint64 { return PairHash(p.A, p.B) }, ComparePairs)
}

// SortSketches sorts sketch records by (Key, Doc); keys must be
// fingerprints for it to be fast.
func SortSketches(ss []Sketch) {
	bucketSort(ss, make([]Sketch, len(ss)), func(s *Sketch) uint64 { return s.Key },
		func(x, y Sketch) int { return cmp.Or(cmp.Compare(x.Key, y.Key), cmp.Compare(x.Doc, y.Doc)) })
}
