package main

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/neardup/neardup/similarity/sketch"
)

// A dense sample (issue 39): a second, fixed-size sketch per
// representative, consulted only for the pairs whose first estimate is
// uncertain. It is the k smallest of the document's fingerprints under
// another permutation (denseHash), kept as 32 bits, so that it is
// independent of the first sketch, which chose the pairs it settles.

// denseHash permutes a fingerprint (splitmix64's finalizer after a
// constant), independently of the order the first sketch samples in,
// and keeps its high 32 bits.
func denseHash(x uint64) uint32 {
	x ^= 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	x ^= x >> 31
	return uint32(x >> 32)
}

// denseOf is the k smallest distinct denseHash values of set, sorted.
func denseOf(set []uint64, k int) []uint32 {
	out := make([]uint32, len(set))
	for i, x := range set {
		out[i] = denseHash(x)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return slices.Clip(out[:min(k, len(out))])
}

// denseEstimate is Broder's MIN_k estimate from two dense samples cut to
// k: the share of shared values among the k smallest of their union,
// with the samples it rests on and the union's size when both samples
// are whole sets (sizes below k).
func denseEstimate(a, b []uint32, sizeA, sizeB, k int) (est float64, n, u int) {
	a, b = a[:min(k, len(a))], b[:min(k, len(b))]
	shared := 0
	i, j := 0, 0
	for n < k && (i < len(a) || j < len(b)) {
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
		n++
	}
	if sizeA <= k && sizeB <= k {
		u = n
	}
	if n == 0 {
		return 0, 0, u
	}
	return float64(shared) / float64(n), n, u
}

// denseVariant settles the first sketch's uncertain pairs (within z of
// the threshold) on a dense sample of k values, and, when exact, the
// pairs still uncertain on the dense sample (within z2) exactly.
type denseVariant struct {
	z, z2 float64
	k     int
	exact bool
}

func (v denseVariant) String() string {
	if v.exact {
		return fmt.Sprintf("z=%g, dense:%d, exact z=%g", v.z, v.k, v.z2)
	}
	return fmt.Sprintf("z=%g, dense:%d", v.z, v.k)
}

// decide links a pair whose first estimate is est on n samples of a
// union of u: on est when certain, else on the dense sample's estimate,
// else (exact variants) on the exact answer. It reports the stage that
// decided: 1, 2 or 3.
func (v denseVariant) decide(est float64, n, u int, t float64, da, db []uint32, sizeA, sizeB int, exact func() bool) (bool, int) {
	if !sketch.Uncertain(est, t, v.z, n, u) {
		return est >= t, 1
	}
	d, dn, du := denseEstimate(da, db, sizeA, sizeB, v.k)
	if v.exact && sketch.Uncertain(d, t, v.z2, dn, du) {
		return exact(), 3
	}
	return d >= t, 2
}

var denseFlag = flag.String("dense", "128,256,512", "dense sample sizes to study after the first sketch's uncertain pairs (accuracy mode, default sketch only)")

func denseVariants() ([]denseVariant, error) {
	var vs []denseVariant
	for _, f := range strings.Split(*denseFlag, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		k, err := strconv.Atoi(f)
		if err != nil || k <= 0 {
			return nil, fmt.Errorf("bad -dense %q", f)
		}
		vs = append(vs, denseVariant{z: 2.5, z2: 2.5, k: k}, denseVariant{z: 2.5, z2: 2.5, k: k, exact: true})
	}
	return vs, nil
}
