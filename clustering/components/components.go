// Package components computes the connected components of a graph in
// rounds that each look at one node's neighbours only, so that a runner
// can spread every round over many workers: Kiveris, Lattanzi, Mirrokni,
// Rastogi and Vassilvitskii, "Connected Components in MapReduce and
// Beyond" (SoCC 2014), alternating large-star and small-star.
//
// Every edge is stored from its larger node to its smaller one (U > V).
// A round groups edges by node: large-star hands each node all its
// neighbours (an edge reaches both of its nodes), small-star only its
// smaller ones (an edge reaches its larger node). Both keep the components
// and shrink them towards stars around their smallest node; once every
// component is such a star, a node's smallest neighbour is its label.
//
// After a fixed number of rounds (a pipeline cannot loop) Classify sorts
// the nodes into roots (no smaller neighbour), leaves (exactly one
// neighbour, smaller) and tangled nodes (the rest). The edges from tangled
// nodes to smaller ones are the residual: what has not become a star yet.
// Their union-find, with every leaf taking its root's label, finishes the
// components exactly whatever the number of rounds; the rounds only decide
// how small the residual is (see Simulate).
package components

import (
	"cmp"
	"slices"

	"github.com/neardup/neardup/shuffle/packed"
)

// Edge is an undirected edge stored from its larger node to its smaller
// one, or, inside a round, a node U with one of its neighbours V. It is
// the record the rounds shuffle.
type Edge = packed.Arc

// Of returns the edge between a and b stored as U > V; ok is false for a
// self-loop, which no component needs.
func Of(a, b uint64) (e Edge, ok bool) {
	if a == b {
		return Edge{}, false
	}
	return Edge{U: max(a, b), V: min(a, b)}, true
}

// Round is one kind of round: which node's group an edge goes to, and the
// step each node takes.
type Round int

const (
	Large Round = iota // every edge to both of its nodes; larger neighbours move to the smallest
	Small              // every edge to its larger node; it and its smaller neighbours move to the smallest
)

// Kind returns the kind of round i (0-based): large-star first, then
// alternating, as in Kiveris et al.'s alternating algorithm.
func Kind(i int) Round {
	if i%2 == 0 {
		return Large
	}
	return Small
}

// Route calls to(node, neighbour) once for every group the edge e (U > V)
// belongs to in a round of kind r: both nodes in a large-star round, the
// larger in a small-star round.
func Route(r Round, e Edge, to func(node, nbr uint64)) {
	to(e.U, e.V)
	if r == Large {
		to(e.V, e.U)
	}
}

// sortHalves sorts <node, neighbour> records by node, then neighbour, and
// drops repeats, in place.
func sortHalves(in []Edge) []Edge {
	slices.SortFunc(in, func(x, y Edge) int { return cmp.Or(cmp.Compare(x.U, y.U), cmp.Compare(x.V, y.V)) })
	return slices.Compact(in)
}

// eachNode calls fn with every node of in (sorted <node, neighbour>
// records) and its neighbours, ascending and distinct.
func eachNode(in []Edge, nbrs []uint64, fn func(u uint64, nbrs []uint64)) {
	for i := 0; i < len(in); {
		j := i
		nbrs = nbrs[:0]
		for ; j < len(in) && in[j].U == in[i].U; j++ {
			nbrs = append(nbrs, in[j].V)
		}
		fn(in[i].U, nbrs)
		i = j
	}
}

// Step runs a round of kind r over one worker's records: in holds, for
// every node routed to it, all the <node, neighbour> records Route gave it
// (in any order, repeats allowed; in is reordered). It appends the round's
// output edges (U > V) to dst. The output of all workers together has the
// components of the input.
func Step(r Round, dst, in []Edge) []Edge {
	in = sortHalves(in)
	var nbrs []uint64
	eachNode(in, nbrs, func(u uint64, nbrs []uint64) {
		m := min(u, nbrs[0])
		switch r {
		case Large:
			// Large-star: every neighbour larger than u moves to the
			// smallest node of u's closed neighbourhood.
			k, _ := slices.BinarySearch(nbrs, u+1)
			for _, v := range nbrs[k:] {
				dst = append(dst, Edge{U: v, V: m})
			}
		case Small:
			// Small-star: u and its smaller neighbours (all it was
			// given) move to the smallest of them.
			if u != m {
				dst = append(dst, Edge{U: u, V: m})
			}
			for _, v := range nbrs {
				if v != m {
					dst = append(dst, Edge{U: v, V: m})
				}
			}
		}
	})
	return dst
}

// Class is what a node is once the rounds are over.
type Class int

const (
	Root    Class = iota // every neighbour is larger
	Leaf                 // one neighbour, smaller: it takes that node's label
	Tangled              // the rest: its edges go to the residual union-find
)

// Classify calls fn for every node of in (one worker's records, routed as
// in a large-star round: every edge to both nodes; in is reordered) with
// its class and neighbours, ascending and distinct. fn must not keep nbrs.
func Classify(in []Edge, fn func(u uint64, c Class, nbrs []uint64)) {
	in = sortHalves(in)
	eachNode(in, nil, func(u uint64, nbrs []uint64) {
		switch {
		case nbrs[0] > u:
			fn(u, Root, nbrs)
		case len(nbrs) == 1:
			fn(u, Leaf, nbrs)
		default:
			fn(u, Tangled, nbrs)
		}
	})
}

// AppendResidual appends to dst the residual edges of a tangled node u:
// those to its smaller neighbours. Every edge belongs to its larger node,
// which is a leaf (the edge is a leaf's) or tangled (the edge is
// residual), never a root; so a leaf is never a node of the residual, and
// a root is one only if a tangled node hangs from it.
func AppendResidual(dst []Edge, u uint64, nbrs []uint64) []Edge {
	for _, v := range nbrs {
		if v >= u {
			break
		}
		dst = append(dst, Edge{U: u, V: v})
	}
	return dst
}

// Label names the component of one node: its smallest node.
type Label struct{ Node, Comp uint64 }

// Relabel is the finish of one worker: the roots routed to it, the
// leaves of those roots (U the leaf, V its root, routed by V) and the
// residual union-find's labels of its nodes (routed by node). It calls emit
// once for every node it can name: every residual node and root, and
// every leaf, which takes its root's label. The inputs are reordered.
func Relabel(roots []uint64, leaves []Edge, resid []Label, emit func(Label)) {
	slices.Sort(roots)
	roots = slices.Compact(roots)
	slices.SortFunc(resid, func(x, y Label) int { return cmp.Compare(x.Node, y.Node) })
	resid = slices.CompactFunc(resid, func(x, y Label) bool { return x.Node == y.Node })
	labelOf := func(n uint64) uint64 {
		if k, ok := slices.BinarySearchFunc(resid, n, func(l Label, n uint64) int { return cmp.Compare(l.Node, n) }); ok {
			return resid[k].Comp
		}
		return n // a root outside the residual is the smallest of its star
	}
	for _, l := range resid {
		emit(l)
	}
	for _, r := range roots {
		if _, ok := slices.BinarySearchFunc(resid, r, func(l Label, n uint64) int { return cmp.Compare(l.Node, n) }); !ok {
			emit(Label{r, r})
		}
	}
	for _, e := range leaves {
		emit(Label{e.U, labelOf(e.V)})
	}
}
