// Package fingerprint provides neardup's seeded, platform-independent
// 64-bit fingerprints: of tokens, of shingles (sequences of token
// fingerprints), of token sequences and of raw bytes.
//
// # Choice of function
//
// Broder et al. fingerprint each shingle with a 40-bit Rabin fingerprint
// "enhanced to behave as a random permutation", because the estimators of
// package sketch are unbiased when shingles are ordered by a permutation
// chosen uniformly at random. This package instead uses XXH64 (the 64-bit
// xxHash, https://github.com/Cyan4973/xxHash) with a seed, implemented
// here from its specification and checked against its published test
// vectors. XXH64 is a multiply-rotate hash over 8-byte words whose output
// passes through a bijective xorshift-multiply avalanche, and it behaves
// like a random function of its input. That is what the estimators need:
// restricted to a fixed set of distinct shingles, a random function is
// collision free with overwhelming probability (below), and conditioned on
// that it is a random injection, which orders the set by a uniformly
// random permutation. Rabin fingerprints are linear over GF(2), which is
// why Broder had to "enhance" them; a modern mixer needs no such patch,
// and is faster. Mix, a bijective finalizer, is provided for deriving
// further orderings (for example super-shingles, or independent
// permutations by Mix(fp^k)) without introducing new collisions: applied
// to distinct values it yields distinct values. UnMix inverts it.
//
// Results depend only on the seed and the input bytes: loads are
// little-endian by construction, there is no unsafe and no hash/maphash
// (whose seeds are random per process), so every machine, every process
// and every run of the pipeline computes the same values. The tests pin
// golden values to catch any accidental change. Changing DefaultSeed (or
// the function) changes every fingerprint, so stored sketches from
// different seeds must never be compared.
//
// # Collision odds
//
// Two distinct inputs collide with probability about 2^-64. Among n
// distinct shingles the expected number of colliding pairs is
// n(n-1)/2 * 2^-64, about n^2/2^65: for 10^9 shingles about 0.03, for
// 10^10 about 2.7. A collision merges two shingles into one, which can
// only nudge a resemblance estimate; it cannot create a cluster by itself.
// Broder's 40-bit fingerprints would have had about 4.5*10^5 colliding
// pairs at 10^9 shingles.
//
// XXH64 is not a cryptographic hash: someone who knows the seed can craft
// colliding inputs. Near-duplicate detection tolerates that (an adversary
// who wants two pages clustered can simply copy text), but the seed should
// not be relied on as a secret.
package fingerprint
