package components

import (
	"cmp"
	"slices"

	"github.com/neardup/neardup/clustering/unionfind"
)

// Trace is what a run of the rounds did: per round, the edges it was
// given and the most <node, neighbour> records one worker held; then the
// edges left to the residual union-find.
type Trace struct {
	Edges, MaxPerWorker []int
	Residual            int
}

// Simulate runs rounds rounds over edges (any order, either direction,
// self-loops and repeats allowed) on workers workers, nodes placed by
// part, then the finish, exactly as a pipeline spreads them, in one
// process. It returns the label of every node of an edge, by node, and the
// trace. Tests compare it with a union-find; the README's choice of rounds
// comes from it.
func Simulate(edges []Edge, rounds, workers int, part func(node uint64, workers int) int) ([]Label, Trace) {
	var tr Trace
	var cur []Edge
	for _, e := range edges {
		if c, ok := Of(e.U, e.V); ok {
			cur = append(cur, c)
		}
	}
	spread := func(r Round, es []Edge) [][]Edge {
		byWorker := make([][]Edge, workers)
		for _, e := range es {
			Route(r, e, func(n, v uint64) {
				w := part(n, workers)
				byWorker[w] = append(byWorker[w], Edge{U: n, V: v})
			})
		}
		most := 0
		for _, in := range byWorker {
			most = max(most, len(in))
		}
		tr.Edges = append(tr.Edges, len(es))
		tr.MaxPerWorker = append(tr.MaxPerWorker, most)
		return byWorker
	}
	for i := range rounds {
		r := Kind(i)
		var next []Edge
		for _, in := range spread(r, cur) {
			next = Step(r, next, in)
		}
		cur = next
	}
	// The finish: classify (every edge to both nodes), the residual
	// union-find on one worker, then relabel by root.
	roots := make([][]uint64, workers)
	leaves := make([][]Edge, workers)
	var residual []Edge
	for _, in := range spread(Large, cur) {
		Classify(in, func(u uint64, c Class, nbrs []uint64) {
			switch c {
			case Root:
				roots[part(u, workers)] = append(roots[part(u, workers)], u)
			case Leaf:
				leaves[part(nbrs[0], workers)] = append(leaves[part(nbrs[0], workers)], Edge{U: u, V: nbrs[0]})
			case Tangled:
				residual = AppendResidual(residual, u, nbrs)
			}
		})
	}
	tr.Residual = len(residual)
	resid := make([][]Label, workers)
	for _, l := range Residual(residual) {
		resid[part(l.Node, workers)] = append(resid[part(l.Node, workers)], l)
	}
	var labels []Label
	for w := range workers {
		Relabel(roots[w], leaves[w], resid[w], func(l Label) { labels = append(labels, l) })
	}
	slices.SortFunc(labels, func(x, y Label) int { return cmp.Compare(x.Node, y.Node) })
	return labels, tr
}

// Residual is the finish's union-find: the label of every node of edges.
func Residual(edges []Edge) []Label {
	uf := unionfind.New(2 * len(edges))
	for _, e := range edges {
		uf.Union(e.U, e.V)
	}
	labels := make([]Label, 0, uf.Len())
	uf.Each(func(id, root uint64) { labels = append(labels, Label{id, root}) })
	return labels
}
