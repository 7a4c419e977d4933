package sketch

import "math"

// StdErr is the standard error of a resemblance estimate that is the
// share of shared elements in a sample of n elements of the union of two
// sets, when the true resemblance is r: sqrt(r(1-r)/n), times the finite
// population correction sqrt((u-n)/(u-1)) when the sample was drawn
// without replacement from a union of known size u (u <= 0: unknown,
// no correction, which overstates the error). It is 0 when n >= u > 0
// (the sample is the whole union) and +Inf when n <= 0 (no sample).
//
// Every sketch neardup has samples this way: MOD_m and MIN_s draw without
// replacement (a Bernoulli sample is a uniform one given its size), and
// MinHash's K positions are K independent draws with replacement (u = 0).
// Samples gives n and u for a pair.
//
// Deciding whether an estimate is within z standard errors of a
// threshold t, use r = t (Uncertain): the error at the estimate itself is
// 0 for an estimate of 0 or 1, however few samples it rests on.
func StdErr(r float64, n, u int) float64 {
	if n <= 0 {
		return math.Inf(1)
	}
	if u > 0 && n >= u {
		return 0
	}
	v := r * (1 - r) / float64(n)
	if u > 1 {
		v *= float64(u-n) / float64(u-1)
	}
	return math.Sqrt(max(v, 0))
}

// Samples is the number n of union elements a pair's resemblance estimate
// under s rests on, and the union's size u when the sketches show it (0
// otherwise), from the counts the pipeline has: shared sketch values and
// the two sketch sizes.
//
//   - mod:M: n = sizeA+sizeB-shared, the union's sample; u = n for mod:1
//     (the sketches are the whole sets), else unknown.
//   - min:N: n = min(N, sizeA+sizeB-shared), Broder's denominator; u = n
//     when both sketches are shorter than N (they are the whole sets).
//   - minhash:K: n = K draws with replacement, u unknown.
//
// Floor sketches report theirs in FloorEstimate.
func (s Spec) Samples(shared, sizeA, sizeB int) (n, u int) {
	union := sizeA + sizeB - shared
	switch s.Kind {
	case Mod:
		if s.N == 1 {
			return union, union
		}
		return union, 0
	case Min:
		if sizeA < s.N && sizeB < s.N {
			return union, union
		}
		return min(s.N, union), 0
	case MinHash:
		if sizeA == 0 || sizeB == 0 {
			return 0, 0
		}
		return s.N, 0
	}
	return 0, 0
}

// Uncertain reports whether an estimate resting on n samples of a union
// of u (StdErr's) is within z standard errors of the threshold t: whether
// a z-sigma test cannot tell r >= t from r < t. The error is taken at
// r = t, the hypothesis tested.
func Uncertain(estimate, t, z float64, n, u int) bool {
	return math.Abs(estimate-t) < z*StdErr(t, n, u)
}
