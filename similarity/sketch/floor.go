package sketch

import (
	"fmt"
	"math"
	"sort"
)

// Floor is Broder's MOD_m with a floor of k: a document X keeps every
// shingle fingerprint at or below its own threshold
//
//	t_X = max(L, x_(k))
//
// where L = (2^64-1)/m is the global rate limit (about one fingerprint
// in m is at or below it) and x_(k) is X's k-th smallest fingerprint
// (+infinity when X has fewer than k). A long document keeps exactly its
// rate sample, {x <= L}, as MOD_m keeps about |S(X)|/m values; a short
// one keeps its k smallest (all of it below k shingles), as MIN_k does.
// Since both rules are "everything below a threshold", the sketch of a
// sorted set is a prefix of it, of length max(#{x <= L}, min(k, |S(X)|)).
//
// The rate rule is "x <= L", not MOD_m's "x mod m == 0", so that the floor
// is free on long documents: their k smallest values are already below
// L. With "0 mod m" the k smallest would be a second sample beside the
// multiples of m and every document would carry about k more values.
// The two rules are equally good samples (each keeps a fingerprint with
// probability 1/m, independently of the text); they differ only in which
// fingerprints they keep, so a Floor sketch is not a MOD_m sketch.
//
// K = 0 is no floor: the rate sample alone, MOD_m under the "<= L" rule.
// See Compare and FloorEstimate for the estimators, and docs/sketches.md
// for their derivation.
type Floor struct {
	M int // rate: about one fingerprint in M below the global limit
	K int // floor: at least the K smallest fingerprints (0: none)
}

// Validate reports whether f is usable: M >= 1 and 0 <= K <= MaxMinN
// (ranks within a sketch's first K values travel as uint16, as MIN_s's).
func (f Floor) Validate() error {
	if f.M < 1 {
		return fmt.Errorf("rate %d is not at least 1", f.M)
	}
	if f.K < 0 || f.K > MaxMinN {
		return fmt.Errorf("floor %d is not in 0..%d", f.K, MaxMinN)
	}
	return nil
}

// String is "floor:M/K", a name for reports (no flag reads it yet).
func (f Floor) String() string { return fmt.Sprintf("floor:%d/%d", f.M, f.K) }

// Limit is L = (2^64-1)/M: a fingerprint is in every document's rate
// sample iff it is at most L. (L+1)/2^64 is 1/M up to 2^-64, and M = 1
// keeps everything.
func (f Floor) Limit() uint64 { return math.MaxUint64 / uint64(f.M) }

// Select returns the Floor sketch of a sorted, distinct set of shingle
// fingerprints, a prefix of it (shingles[:size], no copy), and how many of
// its values are at most Limit (the document's rate sample, which phase 3
// needs beside the size; see FloorDoc). It panics if f is not valid.
func (f Floor) Select(shingles []uint64) (sketch []uint64, below int) {
	if err := f.Validate(); err != nil {
		panic("sketch: Floor.Select with invalid " + f.String() + ": " + err.Error())
	}
	lim := f.Limit()
	below = sort.Search(len(shingles), func(i int) bool { return shingles[i] > lim })
	return shingles[:max(below, min(f.K, len(shingles)))], below
}

// FloorDoc is what phase 3 needs of one document of a pair: its sketch
// size and its rate sample's size (Below <= Size; Below == Size unless
// the floor added values, and then Size <= K).
type FloorDoc struct{ Size, Below int }

// short reports whether the floor, not the rate, set d's threshold: its
// rate sample has fewer than k values, so its sketch is its k smallest
// (MIN_k of its set, all of it when Size < k).
func (d FloorDoc) short(k int) bool { return d.Below < k }

// FloorEstimate is a pair's estimates under a Floor sketch, with the
// sample sizes they rest on (for StdErr).
type FloorEstimate struct {
	// Resemblance estimates |A∩B|/|A∪B| from Samples elements of the
	// union, drawn uniformly without replacement from Universe elements
	// (Universe 0: the union's size is unknown; when Universe == Samples
	// the estimate is exact).
	Resemblance float64
	Samples     int
	Universe    int
	// FromMin reports that Samples are the union's K smallest (both
	// documents short and their union's rate sample under K), not the
	// union's rate sample.
	FromMin bool
	// AInB and BInA estimate the containments |A∩B|/|A| and |A∩B|/|B|
	// from the rate samples of A (SamplesA values) and B (SamplesB), as
	// Broder's MOD_m does, or exactly when both sketches are whole sets.
	// The floor cannot help a short A inside a long B: B keeps no value
	// above L, so A's floor values above L cannot be matched.
	AInB, BInA         float64
	SamplesA, SamplesB int
}

// Estimate computes a pair's estimates from what phase 3 sees: the two
// documents' FloorDocs, sharedBelow (how many shared sketch values are at
// most Limit) and ranks, the ranks in A's and B's sketches of every
// shared value, in ascending value order, as MinSharedInUnion takes them.
// ranks is read only when both documents are short (their Below under K),
// so a pipeline need carry ranks only for such pairs, and may sum counts
// for the others as it does for MOD_m.
//
// The resemblance sample is the union's elements at or below
//
//	θ = max(L, u_(K))
//
// where u_(K) is the union's K-th smallest: the union's rate sample when
// it has at least K elements, else its K smallest. Both are observable:
// every union element <= L is in its document's sketch, and u_(K) <=
// min(a_(K), b_(K)) <= min(t_A, t_B), the common threshold below which
// both sketches are complete. θ depends only on the order of the union's
// fingerprints, never on which document holds them, so given its size n
// the sample is a uniform n-subset of the union and the shared share is
// hypergeometric: the estimate is exactly unbiased, with variance
// r(1-r)/n·(|U|-n)/(|U|-1) <= r(1-r)/K. (The plain common threshold
// min(t_A, t_B) would use more values but stops at one document's K-th
// value, which is known to be in that document, and phase 3 cannot count
// the other document's values below it.) The union's rate sample has
// at least K elements whenever one document is long, so only pairs of
// two short documents take the K smallest, through their ranks.
func (f Floor) Estimate(a, b FloorDoc, sharedBelow int, ranks [][2]uint16) FloorEstimate {
	var e FloorEstimate
	// Both sketches are whole sets: the union is known, and its size is
	// the universe the sample is drawn from (exact when it is all of it).
	whole := (a.Size < f.K || f.M == 1) && (b.Size < f.K || f.M == 1)
	nT := a.Below + b.Below - sharedBelow
	if nT >= f.K {
		e.Resemblance = ModResemblance(sharedBelow, a.Below, b.Below)
		e.Samples = nT
	} else {
		// Both short (a long document alone has K values below L):
		// Broder's MIN_K over the two K-smallest sketches.
		e.FromMin = true
		e.Resemblance = MinResemblanceFromRanks(ranks, a.Size, b.Size, f.K)
		e.Samples = min(f.K, a.Size+b.Size-len(ranks))
	}
	if whole {
		e.Universe = a.Size + b.Size - len(ranks)
		if f.M == 1 {
			e.Universe = nT
		}
	}
	e.AInB, e.SamplesA = Containment(sharedBelow, a.Below), a.Below
	e.BInA, e.SamplesB = Containment(sharedBelow, b.Below), b.Below
	if whole && f.M != 1 {
		e.AInB, e.SamplesA = Containment(len(ranks), a.Size), a.Size
		e.BInA, e.SamplesB = Containment(len(ranks), b.Size), b.Size
	}
	return e
}

// Compare is Estimate on two whole Floor sketches (Select's), computing
// what phase 3 would see: the shared values' ranks and how many of them
// are at most Limit. It is for tests and offline tools; the pipeline
// never holds both sketches.
func (f Floor) Compare(a, b []uint64) FloorEstimate {
	lim := f.Limit()
	var ranks [][2]uint16
	sharedBelow := 0
	EachShared(a, b, func(i, j int) {
		if a[i] <= lim {
			sharedBelow++
		}
		if i <= math.MaxUint16 && j <= math.MaxUint16 {
			ranks = append(ranks, [2]uint16{uint16(i), uint16(j)})
		}
	})
	da, db := f.doc(a), f.doc(b)
	if !da.short(f.K) || !db.short(f.K) {
		// Estimate does not read the ranks then; only their count, for
		// whole sets, which needs both short.
		ranks = ranks[:0]
	}
	return f.Estimate(da, db, sharedBelow, ranks)
}

// doc is the FloorDoc of a Select sketch.
func (f Floor) doc(sk []uint64) FloorDoc {
	lim := f.Limit()
	below := sort.Search(len(sk), func(i int) bool { return sk[i] > lim })
	return FloorDoc{Size: len(sk), Below: below}
}

// StdDev is the standard deviation of the Floor resemblance estimate
// (K >= 1) for two sets of resemblance r whose union has u elements:
// given the sample size n the estimate is hypergeometric, with variance
// r(1-r)/n·(u-n)/(u-1); n = min(u, max(K, N)) with N ~ Binomial(u, p)
// the union's rate sample, p = (L+1)/2^64; and since the estimate's mean
// is r whatever n, its variance is that variance's mean over N. It is at
// most sqrt(r(1-r)/K), and about sqrt(r(1-r)·M/u) once u is well above
// M·K (MOD_m's). It panics if f is invalid or K is 0 (without a floor an
// empty sample gives 0, and the estimate is biased).
func (f Floor) StdDev(r float64, u int) float64 {
	if err := f.Validate(); err != nil || f.K < 1 {
		panic("sketch: Floor.StdDev needs a valid floor with K >= 1, not " + f.String())
	}
	if u <= 1 {
		return 0
	}
	p := (float64(f.Limit()) + 1) / (1 << 64)
	if f.M == 1 {
		p = 1
	}
	cond := func(n int) float64 { // the variance given n
		n = min(u, n)
		return r * (1 - r) / float64(n) * float64(u-n) / float64(u-1)
	}
	if p >= 1 {
		return math.Sqrt(max(cond(u), 0))
	}
	// Sum over the binomial's bulk (its pmf in logs, so that large u
	// neither overflows nor underflows); far tails weigh nothing.
	lu, _ := math.Lgamma(float64(u) + 1)
	var v, mass float64
	for j := 0; j <= u; j++ {
		lj, _ := math.Lgamma(float64(j) + 1)
		lr, _ := math.Lgamma(float64(u-j) + 1)
		pmf := math.Exp(lu - lj - lr + float64(j)*math.Log(p) + float64(u-j)*math.Log1p(-p))
		v += pmf * cond(max(f.K, j))
		mass += pmf
		if j > int(float64(u)*p) && pmf < 1e-15 {
			break
		}
	}
	return math.Sqrt(max(v/mass, 0))
}
