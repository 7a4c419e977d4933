package fingerprint

import "math/bits"

// DefaultSeed is the seed neardup uses unless told otherwise; changing it
// changes every fingerprint.
const DefaultSeed uint64 = 0x6e656172647570 // "neardup" in ASCII

// Version numbers the definitions of the fingerprints neardup stores (the
// content, lexical and shingle fingerprints, hence every sketch): outputs
// written under different versions must not be mixed. Version 2 defines
// the lexical fingerprint as Combine of the token hashes and the shingle
// fingerprint as Shingle (a rolling polynomial); version 1 hashed the
// tokens' bytes again for the first and used Combine for the second.
// Version 3 tokenizes Han, kana, Thai, Lao, Khmer and Myanmar one
// character per token (package canon); outputs of version 2 differ for
// text in those scripts.
const Version = 3

// XXH64 primes.
const (
	prime1 uint64 = 0x9E3779B185EBCA87
	prime2 uint64 = 0xC2B2AE3D27D4EB4F
	prime3 uint64 = 0x165667B19E3779F9
	prime4 uint64 = 0x85EBCA77C2B2AE63
	prime5 uint64 = 0x27D4EB2F165667C5
)

// Hasher computes seeded 64-bit fingerprints. It is a small value, safe
// for concurrent use, and can be serialized by its seed alone; the zero
// Hasher equals New(0).
type Hasher struct {
	// seed is all the state: XXH64 derives its four lane initializers
	// from it with additions, which cost less to redo than to load.
	seed uint64
}

// New returns the Hasher for seed.
func New(seed uint64) Hasher { return Hasher{seed: seed} }

// Seed returns the seed h was made with, so that a pipeline can record
// which function produced its fingerprints.
func (h Hasher) Seed() uint64 { return h.seed }

// Bytes returns the fingerprint of raw bytes (for example a whole
// document, to find exact duplicates). It is XXH64 with h's seed.
func (h Hasher) Bytes(b []byte) uint64 { return sum(h.seed, b) }

// String returns the same value as Bytes([]byte(s)) without converting s.
func (h Hasher) String(s string) uint64 { return sum(h.seed, s) }

// Tokens returns the fingerprint of a token sequence: Combine of the
// tokens' String fingerprints. It is a function of the token hashes alone
// because phase 1 has those in hand (canon.AppendHashes) and never builds
// the tokens; hashing every token's bytes again would cost as much as
// tokenizing. The sequence is unambiguous up to hash collisions:
// ["ab","c"], ["a","bc"] and ["abc"] differ, since each token is hashed
// whole and Combine includes the count. (Before neardup's fingerprint
// version 2, it was XXH64 of the length-prefixed token bytes.)
func (h Hasher) Tokens(tokens []string) uint64 {
	var buf [64]uint64
	hashes := buf[:0]
	if len(tokens) > len(buf) {
		hashes = make([]uint64, 0, len(tokens))
	}
	for _, t := range tokens {
		hashes = append(hashes, h.String(t))
	}
	return h.Combine(hashes)
}

// Combine returns the fingerprint of a sequence of 64-bit values, such as
// the token fingerprints of one shingle. It equals Bytes of the values
// written as consecutive little-endian uint64s, computed word by word.
// The values have a fixed width, so no length prefixes are needed.
func (h Hasher) Combine(hashes []uint64) uint64 {
	n := len(hashes)
	p := hashes
	var acc uint64
	if n >= 4 {
		v1 := h.seed + prime1 + prime2
		v2 := h.seed + prime2
		v3 := h.seed
		v4 := h.seed - prime1
		for len(p) >= 4 {
			v1 = round(v1, p[0])
			v2 = round(v2, p[1])
			v3 = round(v3, p[2])
			v4 = round(v4, p[3])
			p = p[4:]
		}
		acc = mergeLanes(v1, v2, v3, v4)
	} else {
		acc = h.seed + prime5
	}
	acc += uint64(n) * 8
	for _, k := range p {
		acc ^= round(0, k)
		acc = bits.RotateLeft64(acc, 27)*prime1 + prime4
	}
	return avalanche(acc)
}

// ShingleBase is the base of Shingle's polynomial: odd, so that a shingle
// differing from another in one token always differs in the polynomial,
// and 3 mod 4, so that swapping two tokens changes it unless their hashes
// agree in 63 bits.
const ShingleBase uint64 = 0x9E3779B97F4A7C17

// Shingle returns the fingerprint of one shingle given its tokens' hashes
// (String of each token): the polynomial sum of hashes[j] *
// ShingleBase^(len-1-j) mod 2^64, xored with the seed and finished by Mix.
// A polynomial can be rolled along a document in a few operations per
// position (ShingleRoll), where Combine rehashes all w values: phase 1
// computes one shingle fingerprint per token. Mix makes every output bit
// depend on every input bit, which MOD_m and MIN_s selection need.
func (h Hasher) Shingle(hashes []uint64) uint64 {
	var r uint64
	for _, x := range hashes {
		r = r*ShingleBase + x
	}
	return h.ShingleFinish(r)
}

// ShingleFinish turns a polynomial value into the shingle fingerprint.
func (h Hasher) ShingleFinish(r uint64) uint64 { return Mix(r ^ h.seed) }

// ShinglePow returns ShingleBase^(w-1), what rolling a w-token polynomial
// one token forward removes with the token that leaves it:
// r' = (r - out*ShinglePow(w))*ShingleBase + in.
func ShinglePow(w int) uint64 {
	p := uint64(1)
	for range w - 1 {
		p *= ShingleBase
	}
	return p
}

// Mix is a bijective 64-bit finalizer (the splitmix64 / Stafford "Mix13"
// finalizer): a fixed permutation of the 64-bit space in which every input
// bit affects every output bit. UnMix is its inverse.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Multiplicative inverses mod 2^64 of Mix's two odd multipliers.
const (
	inv1 = 0x96de1b173f119089 // 0xbf58476d1ce4e5b9 * inv1 == 1 (mod 2^64)
	inv2 = 0x319642b2d24d8ec3 // 0x94d049bb133111eb * inv2 == 1 (mod 2^64)
)

// UnMix inverts Mix: UnMix(Mix(x)) == x for every x. It exists to prove,
// and test, that Mix is a permutation.
func UnMix(x uint64) uint64 {
	x = unxorshift(x, 31)
	x *= inv2
	x = unxorshift(x, 27)
	x *= inv1
	x = unxorshift(x, 30)
	return x
}

// unxorshift inverts y = x ^ x>>s: each pass recovers s more top bits.
func unxorshift(y uint64, s uint) uint64 {
	x := y
	for i := s; i < 64; i += s {
		x = y ^ x>>s
	}
	return x
}

func round(acc, in uint64) uint64 {
	acc += in * prime2
	acc = bits.RotateLeft64(acc, 31)
	return acc * prime1
}

func mergeRound(acc, v uint64) uint64 {
	acc ^= round(0, v)
	return acc*prime1 + prime4
}

func mergeLanes(v1, v2, v3, v4 uint64) uint64 {
	h := bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) +
		bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
	h = mergeRound(h, v1)
	h = mergeRound(h, v2)
	h = mergeRound(h, v3)
	return mergeRound(h, v4)
}

func avalanche(h uint64) uint64 {
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

// bytesOrString lets one generic body serve Bytes and String; string and
// []byte have different GC shapes, so each gets its own compiled copy and
// String needs no conversion.
type bytesOrString interface{ ~string | ~[]byte }

// u64 and u32 are little-endian loads of the first bytes of b, written as
// byte shifts, which the compiler fuses into single loads on little-endian
// machines and which give the same value on big-endian ones.
func u64[T bytesOrString](b T) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func u32[T bytesOrString](b T) uint64 {
	_ = b[3]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24
}

// sum is XXH64 (https://github.com/Cyan4973/xxHash, spec in
// doc/xxhash_spec.md) of b with seed.
func sum[T bytesOrString](seed uint64, b T) uint64 {
	p := b
	var h uint64
	if len(p) >= 32 {
		v1 := seed + prime1 + prime2
		v2 := seed + prime2
		v3 := seed
		v4 := seed - prime1
		for len(p) >= 32 {
			v1 = round(v1, u64(p[0:8]))
			v2 = round(v2, u64(p[8:16]))
			v3 = round(v3, u64(p[16:24]))
			v4 = round(v4, u64(p[24:32]))
			p = p[32:]
		}
		h = mergeLanes(v1, v2, v3, v4)
	} else {
		h = seed + prime5
	}
	h += uint64(len(b))
	return finish(h, p)
}

// finish folds in the tail p (fewer than 32 bytes) and applies the final
// avalanche.
func finish[T bytesOrString](h uint64, p T) uint64 {
	for len(p) >= 8 {
		h ^= round(0, u64(p[0:8]))
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
		p = p[8:]
	}
	if len(p) >= 4 {
		h ^= u32(p[0:4]) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
		p = p[4:]
	}
	for i := 0; i < len(p); i++ {
		h ^= uint64(p[i]) * prime5
		h = bits.RotateLeft64(h, 11) * prime1
	}
	return avalanche(h)
}
