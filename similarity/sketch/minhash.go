package sketch

import (
	"slices"
	"strconv"

	"github.com/neardup/neardup/hashing/fingerprint"
)

// MaxMinHashK is the largest K of a MinHash sketch. The bound is generous
// (LSH setups use 64 to 512) and keeps a malformed spec from turning every
// document into a multi-megabyte sketch.
const MaxMinHashK = 4096

// The constants from which the per-position keys are derived. Any fixed
// values do; they differ so that the hash functions and the tags of one
// position are unrelated, and changing either changes every MinHash sketch.
const (
	minHashSeedBase uint64 = 0x6d696e68617368 // "minhash" in ASCII
	minHashTagBase  uint64 = 0x6d6874616773   // "mhtags" in ASCII
)

// minHashSeed is the key of position i's hash function x -> Mix(x ^ key).
func minHashSeed(i int) uint64 { return fingerprint.Mix(uint64(i) + minHashSeedBase) }

// minHashTag binds a position's minimum to its position (see Select).
func minHashTag(i int, v uint64) uint64 {
	return fingerprint.Mix(v ^ fingerprint.Mix(uint64(i)+minHashTagBase))
}

// MinHashValues appends to dst[:0] the K per-position minima of a sorted,
// distinct set of shingle fingerprints, in position order: position i
// holds the minimum over shingles x of h_i(x) = fingerprint.Mix(x ^ key_i),
// with key_i = fingerprint.Mix(i + a fixed constant). The h_i serve as K
// independent, approximately min-wise permutations: each is a bijection
// (Mix is), so on a set of distinct shingles the minimum is attained by
// exactly one shingle, and since Mix avalanches, the keys make the K
// orderings of a set behave like independent random ones (the tests check
// the estimator's mean and variance, and the banding formula of package
// supershingle, which assumes independence). For two sets A and B,
// position i agrees (min h_i(A) = min h_i(B)) with probability equal to
// their resemblance |A∩B|/|A∪B|, so the fraction of agreeing positions
// estimates it (MinHashResemblance).
//
// An empty set gives nil: it has no minimum, and a sketch of K
// "+infinity"s would make all empty documents agree everywhere. It panics
// unless 1 <= k <= MaxMinHashK. dst must not overlap shingles (Select,
// which may run in place, copes with that).
func MinHashValues(dst, shingles []uint64, k int) []uint64 {
	if k < 1 || k > MaxMinHashK {
		panic("sketch: MinHashValues with k " + strconv.Itoa(k) + " outside 1.." + strconv.Itoa(MaxMinHashK))
	}
	if len(shingles) == 0 {
		return nil
	}
	dst = dst[:0]
	// Positions outermost, two per pass over the shingles: the minima stay
	// in registers, and each shingle is loaded once for two hashes. One
	// position per pass measured about 10% slower, four per pass (register
	// spills) about 25% slower, and shingles outermost with K running
	// minima in memory about 35% slower (BenchmarkMinHashValues/loops; on
	// amd64 the pair runs at about 1.3 ns per hash).
	i := 0
	for ; i+2 <= k; i += 2 {
		m0, m1 := minHash2(shingles, minHashSeed(i), minHashSeed(i+1))
		dst = append(dst, m0, m1)
	}
	if i < k {
		m, _ := minHash2(shingles, minHashSeed(i), 0)
		dst = append(dst, m)
	}
	return dst
}

// minHash2 returns the minima of Mix(x^key0) and Mix(x^key1) over xs.
// Inlined into MinHashValues its loop runs out of registers and keeps a
// minimum on the stack; as a call it needs no spills, and the call costs
// nothing next to the loop.
//
//go:noinline
func minHash2(xs []uint64, key0, key1 uint64) (m0, m1 uint64) {
	m0, m1 = ^uint64(0), ^uint64(0)
	for _, x := range xs {
		m0 = min(m0, fingerprint.Mix(x^key0))
		m1 = min(m1, fingerprint.Mix(x^key1))
	}
	return m0, m1
}

// minHashSelect is Select for MinHash: the K minima, each tagged with its
// position, sorted. The minima go through a scratch buffer (on the stack
// for the usual K) because dst may be shingles[:0], and every position
// reads all the shingles.
func minHashSelect(dst, shingles []uint64, k int) []uint64 {
	dst = dst[:0]
	if len(shingles) == 0 {
		return dst
	}
	var stack [512]uint64
	return TagMinHash(dst, MinHashValues(stack[:0], shingles, k))
}

// TagMinHash appends to dst[:0] the MinHash sketch (Select's result) of
// per-position minima computed by MinHashValues, so a caller that needs
// both the positions (for bands) and the sketch hashes the shingles once.
// dst must not overlap values.
func TagMinHash(dst, values []uint64) []uint64 {
	dst = dst[:0]
	for i, v := range values {
		dst = append(dst, minHashTag(i, v))
	}
	slices.Sort(dst)
	// The tags are distinct except for 64-bit collisions; compact anyway
	// so that the result is a set, like every other sketch.
	return slices.Compact(dst)
}

// MinHashResemblance estimates resemblance from the number of positions at
// which two K-position MinHash sketches agree: shared/k (0 when k <= 0).
// With Select's tagged values, shared is the size of the intersection of
// the two sketches (IntersectCount), as for the other kinds. Its standard
// error is sqrt(r(1-r)/k), so K = 128 gives about ±0.044 at r = 0.5.
func MinHashResemblance(shared, k int) float64 {
	if k <= 0 {
		return 0
	}
	return float64(shared) / float64(k)
}
