package components

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/clustering/unionfind"
)

// part places nodes as a pipeline does: by a mixed hash.
func part(n uint64, workers int) int {
	n ^= n >> 33
	n *= 0xff51afd7ed558ccd
	n ^= n >> 33
	return int(n % uint64(workers))
}

// want is the union-find's labelling of edges.
func want(edges []Edge) []Label {
	uf := unionfind.New(len(edges))
	for _, e := range edges {
		if e.U != e.V { // a self-loop alone is no component
			uf.Union(e.U, e.V)
		}
	}
	var out []Label
	uf.Each(func(id, root uint64) { out = append(out, Label{id, root}) })
	return out
}

// graphs are the shapes the issue names, and some that are hard for stars.
func graphs() map[string][]Edge {
	rng := rand.New(rand.NewPCG(1, 2))
	g := map[string][]Edge{}
	ids := rng.Perm(100001) // node IDs not in path order
	var path, star, rev []Edge
	for i := range 100000 {
		path = append(path, Edge{U: uint64(ids[i]), V: uint64(ids[i+1])})
		rev = append(rev, Edge{U: uint64(100000 - i), V: uint64(100000 - i - 1)})
		star = append(star, Edge{U: uint64(ids[100000]), V: uint64(ids[i])})
	}
	g["path of 100,000, shuffled IDs"] = path
	g["path of 100,000, ordered IDs"] = rev
	g["star of 100,000"] = star
	var small []Edge
	for c := range 20000 {
		base := uint64(c * 10)
		for k := range 4 {
			small = append(small, Edge{U: base + uint64(rng.IntN(5)), V: base + uint64(k)})
		}
	}
	g["20,000 small clusters"] = small
	var giant []Edge
	for range 200000 {
		giant = append(giant, Edge{U: uint64(rng.IntN(50000)), V: uint64(rng.IntN(50000))})
	}
	g["one giant cluster (random, 50,000 nodes, 200,000 edges)"] = giant
	for _, n := range []int{10, 1000, 30000} {
		var es []Edge
		for range n {
			es = append(es, Edge{U: uint64(rng.IntN(n)), V: uint64(rng.IntN(n))})
		}
		g[fmt.Sprintf("random %d nodes, %d edges", n, n)] = es
	}
	g["empty"] = nil
	g["self-loops and repeats"] = []Edge{{U: 1, V: 1}, {U: 2, V: 3}, {U: 3, V: 2}, {U: 2, V: 3}, {U: 9, V: 9}}
	return g
}

// TestSimulateEqualsUnionFind: whatever the number of rounds and workers,
// rounds plus the finish give the union-find's components.
func TestSimulateEqualsUnionFind(t *testing.T) {
	for name, edges := range graphs() {
		w := want(edges)
		for _, rounds := range []int{0, 1, 2, 5, 12} {
			for _, workers := range []int{1, 7} {
				got, tr := Simulate(edges, rounds, workers, part)
				if !slices.Equal(got, w) {
					t.Errorf("%s, %d rounds, %d workers: labels differ from the union-find's (%d against %d nodes)", name, rounds, workers, len(got), len(w))
				}
				if rounds == 12 && workers == 7 {
					t.Logf("%s: edges per round %v, residual %d, most per worker %v", name, tr.Edges, tr.Residual, tr.MaxPerWorker)
				}
			}
		}
	}
}
