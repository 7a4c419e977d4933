package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/neardup/neardup/similarity/sketch"
)

// A dense sample (issue 39; sketch.Dense): a second, fixed-size sketch
// per representative, consulted only for the pairs whose first estimate
// is uncertain.

// denseOf is the dense sample of set with k values.
func denseOf(set []uint64, k int) []uint32 { return sketch.Dense{K: k}.Sample(nil, set) }

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
	k := v.k
	e := sketch.Dense{K: k}.Estimate(da[:min(k, len(da))], db[:min(k, len(db))], sizeA, sizeB)
	if v.exact && sketch.Uncertain(e.Resemblance, t, v.z2, e.Samples, e.Universe) {
		return exact(), 3
	}
	return e.Resemblance >= t, 2
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
