package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/neardup/neardup/similarity/sketch"
)

// strategy is a sketch and its estimator: Broder's MOD_m (the default
// today), MOD_m with a floor of k (sketch.Floor), or MIN_s.
type strategy struct {
	name  string
	spec  sketch.Spec  // mod:M or min:N, when floor.M == 0
	floor sketch.Floor // used when M > 0
}

func modStrategy(m int) strategy {
	return strategy{name: fmt.Sprintf("mod:%d", m), spec: sketch.Spec{Kind: sketch.Mod, N: m}}
}
func minStrategy(n int) strategy {
	return strategy{name: fmt.Sprintf("min:%d", n), spec: sketch.Spec{Kind: sketch.Min, N: n}}
}
func floorStrategy(m, k int) strategy {
	return strategy{name: fmt.Sprintf("mod:%d floor %d", m, k), floor: sketch.Floor{M: m, K: k}}
}

// docSketch is one document's sketch: its values, sorted, and (floor
// sketches) how many are at most the rate limit.
type docSketch struct {
	vals  []uint64
	below int
}

// sketchOf is the sketch of a sorted set (a copy: the set may be reused).
func (s strategy) sketchOf(set []uint64) docSketch {
	if s.floor.M > 0 {
		v, below := s.floor.Select(set)
		return docSketch{vals: slices.Clone(v), below: below}
	}
	return docSketch{vals: s.spec.Select(nil, set)}
}

// estimate is what phase 3 computes for a pair from the shared values it
// sees (dropped values, found in too many documents, are not seen but
// still count in the sizes, as in the pipeline): the resemblance estimate,
// the samples it rests on and the union's size when known (see
// sketch.StdErr), and how many values are shared.
func (s strategy) estimate(a, b docSketch, dropped map[uint64]bool) (est float64, n, u, shared int) {
	var ranks [][2]uint16
	sharedBelow := 0
	lim := uint64(math.MaxUint64)
	if s.floor.M > 0 {
		lim = s.floor.Limit()
	}
	sketch.EachShared(a.vals, b.vals, func(i, j int) {
		if x := a.vals[i]; !dropped[x] {
			shared++
			if x <= lim {
				sharedBelow++
			}
			if i <= math.MaxUint16 && j <= math.MaxUint16 {
				ranks = append(ranks, [2]uint16{uint16(i), uint16(j)})
			}
		}
	})
	la, lb := len(a.vals), len(b.vals)
	if s.floor.M > 0 {
		e := s.floor.Estimate(sketch.FloorDoc{Size: la, Below: a.below}, sketch.FloorDoc{Size: lb, Below: b.below}, sharedBelow, ranks)
		return e.Resemblance, e.Samples, e.Universe, shared
	}
	switch s.spec.Kind {
	case sketch.Min:
		est = sketch.MinResemblanceFromRanks(ranks, la, lb, s.spec.N)
	default:
		est = sketch.ModResemblance(shared, la, lb)
	}
	n, u = s.spec.Samples(shared, la, lb)
	return est, n, u, shared
}

func sortDocs(docs []doc) {
	slices.SortFunc(docs, func(a, b doc) int { return cmp.Compare(a.ID, b.ID) })
}
