package sketch

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Kind is a sketch policy.
type Kind uint8

// The sketch kinds.
const (
	// Mod keeps the fingerprints that are 0 mod m (Broder's MOD_m).
	Mod Kind = iota + 1
	// Min keeps the s smallest fingerprints (Broder's MIN_s).
	Min
	// MinHash keeps the minima of K independent hash functions, each
	// tagged with its position (the sketch of today's LSH tools; see
	// MinHashValues).
	MinHash
)

// MaxMinN is the largest s of a Min sketch: ranks within a sketch are
// carried as uint16 (see MinSharedInUnion).
const MaxMinN = math.MaxUint16

// String returns "mod", "min" or "minhash".
func (k Kind) String() string {
	switch k {
	case Mod:
		return "mod"
	case Min:
		return "min"
	case MinHash:
		return "minhash"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Spec is a sketch policy: Mod with N=m (keep fingerprints that are 0 mod
// m), Min with N=s (keep the s smallest), or MinHash with N=K (keep the
// minima of K hash functions).
type Spec struct {
	Kind Kind
	N    int
}

// Parse reads "mod:25", "min:100" or "minhash:128" (case-insensitive
// kind); errors name the bad text. N must be >= 1 (and for min at most
// 65535, for minhash at most MaxMinHashK).
func Parse(s string) (Spec, error) {
	kind, num, ok := strings.Cut(s, ":")
	if !ok {
		return Spec{}, fmt.Errorf("sketch: bad spec %q: want mod:M, min:S or minhash:K", s)
	}
	var spec Spec
	switch {
	case strings.EqualFold(kind, "mod"):
		spec.Kind = Mod
	case strings.EqualFold(kind, "min"):
		spec.Kind = Min
	case strings.EqualFold(kind, "minhash"):
		spec.Kind = MinHash
	default:
		return Spec{}, fmt.Errorf("sketch: bad spec %q: unknown kind %q, want mod, min or minhash", s, kind)
	}
	n, err := strconv.Atoi(num)
	if err != nil {
		return Spec{}, fmt.Errorf("sketch: bad spec %q: %q is not an integer", s, num)
	}
	spec.N = n
	if err := spec.Validate(); err != nil {
		return Spec{}, fmt.Errorf("sketch: bad spec %q: %w", s, err)
	}
	return spec, nil
}

var errKind = errors.New("kind must be mod, min or minhash")

// Validate reports whether s is usable by Select: a known Kind and N >= 1
// (at most MaxMinN for Min, MaxMinHashK for MinHash).
func (s Spec) Validate() error {
	switch s.Kind {
	case Mod:
		if s.N < 1 {
			return fmt.Errorf("modulus %d is not at least 1", s.N)
		}
	case Min:
		if s.N < 1 || s.N > MaxMinN {
			return fmt.Errorf("size %d is not in 1..%d", s.N, MaxMinN)
		}
	case MinHash:
		if s.N < 1 || s.N > MaxMinHashK {
			return fmt.Errorf("number of hash functions %d is not in 1..%d", s.N, MaxMinHashK)
		}
	default:
		return errKind
	}
	return nil
}

// String returns the form Parse reads, such as "mod:25".
func (s Spec) String() string { return s.Kind.String() + ":" + strconv.Itoa(s.N) }

// Select returns the sketch of a sorted, distinct set of shingle
// fingerprints, sorted ascending, appended to dst[:0]. dst may be
// shingles itself (shingles[:0]) to select in place: Mod and Min sketches
// are built front to back and never get ahead of their input, and MinHash
// computes its minima in a scratch buffer first. It panics if s is not
// valid (see Validate); specs from Parse always are.
//
// A MinHash sketch is the K values of MinHashValues, each tagged with its
// position i as Mix(v ^ Mix(i + a fixed constant)), so that a value two
// sketches share means "the same minimum at the same position": the same
// minimum at different positions gives different tags. The intersection
// of two documents' MinHash sketches (IntersectCount, or the shared
// shingles the pipeline counts) is then the number of positions at which
// they agree, up to 64-bit collisions, and MinHashResemblance turns it
// into an estimate. An empty set has an empty sketch.
func (s Spec) Select(dst, shingles []uint64) []uint64 {
	if err := s.Validate(); err != nil {
		panic("sketch: Select with invalid spec " + s.String() + ": " + err.Error())
	}
	dst = dst[:0]
	switch s.Kind {
	case Min:
		return append(dst, shingles[:min(s.N, len(shingles))]...)
	case MinHash:
		return minHashSelect(dst, shingles, s.N)
	}
	div := newDivisor(uint64(s.N))
	for _, x := range shingles {
		if div.divides(x) {
			dst = append(dst, x)
		}
	}
	return dst
}

// divisor tests divisibility by m without a hardware division, which costs
// tens of cycles per fingerprint: m = d * 2^k with d odd, and x is a
// multiple of m iff its low k bits are zero and (x>>k) * d^-1 (mod 2^64)
// is at most (2^64-1)/d, since multiplying by d^-1 maps the multiples of
// d one to one onto 0..(2^64-1)/d (Hacker's Delight, 10-17).
type divisor struct {
	lowMask uint64 // 2^k - 1
	shift   uint   // k
	inv     uint64 // d^-1 mod 2^64
	limit   uint64 // (2^64-1) / d
}

func newDivisor(m uint64) divisor {
	k := uint(bits.TrailingZeros64(m))
	d := m >> k
	inv := d // Newton's iteration, each step doubling the correct low bits
	for range 5 {
		inv *= 2 - d*inv
	}
	return divisor{lowMask: 1<<k - 1, shift: k, inv: inv, limit: math.MaxUint64 / d}
}

func (v divisor) divides(x uint64) bool {
	return x&v.lowMask == 0 && (x>>v.shift)*v.inv <= v.limit
}

// ModResemblance is Broder's MOD_m estimate |V(A)∩V(B)| / |V(A)∪V(B)|
// from counts: shared/(sizeA+sizeB-shared); 0 when the union is empty.
func ModResemblance(shared, sizeA, sizeB int) float64 {
	union := sizeA + sizeB - shared
	if union <= 0 {
		return 0
	}
	return float64(shared) / float64(union)
}

// Containment estimates the containment of A in B: shared/sizeA (0 when
// sizeA is 0). With MOD_m sketches this is Broder's unbiased estimate
// |V(A)∩V(B)| / |V(A)|. (MIN_s sketches cannot estimate containment: the
// s smallest of a short A need not be among the s smallest of a long B.)
func Containment(shared, sizeA int) float64 {
	if sizeA <= 0 {
		return 0
	}
	return float64(shared) / float64(sizeA)
}

// MinResemblance is Broder's MIN_s estimate
// |MIN_s(F(A)∪F(B)) ∩ F(A) ∩ F(B)| / |MIN_s(F(A)∪F(B))| computed directly
// from two sorted sketches. It is 0 when both are empty.
func MinResemblance(a, b []uint64, s int) float64 {
	shared, union := sharedInUnion(a, b, s)
	if union == 0 {
		return 0
	}
	return float64(shared) / float64(union)
}

// sharedInUnion walks the merged order of two sorted sets of distinct
// values: the first s distinct values seen (all of them when fewer) are
// MIN_s of the union, and a value is in both exactly when the walk meets
// it in a and b at once. It returns how many of those are in both, and
// how many there are.
func sharedInUnion[T cmp.Ordered](a, b []T, s int) (shared, union int) {
	i, j := 0, 0
	for union < s && (i < len(a) || j < len(b)) {
		switch {
		case j == len(b) || (i < len(a) && a[i] < b[j]):
			i++
		case i == len(a) || b[j] < a[i]:
			j++
		default:
			shared++
			i++
			j++
		}
		union++
	}
	return shared, union
}

// MinSharedInUnion computes the numerator of Broder's MIN_s estimate from
// the ranks of the shared elements only (so a pipeline that only sees
// shared elements can compute it): ranks[i] = {rank of the i-th shared
// element in A's sorted sketch, rank in B's sorted sketch} (0-based), given
// in ascending order of element value. The i-th shared element (0-based)
// has rank rA+rB-i in the union, so it is in MIN_s(union) iff rA+rB-i < s.
//
// Why: the union elements below the i-th shared element x are those of A
// below x (rA of them, because F(A) is a prefix of A's sorted shingles)
// plus those of B below x (rB), minus the ones counted twice, which are
// the i shared elements below x. Ascending value order is the same as
// ascending rA order (and rB order), so a pipeline may sort by either.
func MinSharedInUnion(ranks [][2]uint16, s int) int {
	n := 0
	for i, r := range ranks {
		if int(r[0])+int(r[1])-i < s {
			n++
		}
	}
	return n
}

// MinResemblanceFromRanks = MinSharedInUnion / min(s, sizeA+sizeB-len(ranks)),
// where sizeA and sizeB are the sizes of the two MIN_s sketches (the
// denominator is |MIN_s(F(A)∪F(B))|). It equals MinResemblance(a, b, s) for
// the sketches the ranks came from, and is 0 when both are empty.
func MinResemblanceFromRanks(ranks [][2]uint16, sizeA, sizeB, s int) float64 {
	den := min(s, sizeA+sizeB-len(ranks))
	if den <= 0 {
		return 0
	}
	return float64(MinSharedInUnion(ranks, s)) / float64(den)
}

// Jaccard is the exact resemblance |a∩b| / |a∪b| of two sorted distinct
// sets; 0 when both are empty (as the estimators are, so that the exact
// value and the estimates can be compared without special cases).
func Jaccard(a, b []uint64) float64 {
	n := IntersectCount(a, b)
	return ModResemblance(n, len(a), len(b))
}

// EachShared calls fn with the positions i in a and j in b of every value
// the two sorted distinct sets share, in ascending order: a merge walk,
// for callers that need more than the count (ranks, values below a
// limit). IntersectCount keeps its own loop, as phase 3's supershingle
// candidates count on every pair.
func EachShared(a, b []uint64, fn func(i, j int)) {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch x, y := a[i], b[j]; {
		case x < y:
			i++
		case x > y:
			j++
		default:
			fn(i, j)
			i++
			j++
		}
	}
}

// IntersectCount counts the intersection of two sorted distinct sets.
func IntersectCount(a, b []uint64) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch x, y := a[i], b[j]; {
		case x < y:
			i++
		case x > y:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}
