package clusters

import (
	"slices"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/shuffle/packed"
)

// family is a component's members grouped by identical family: a
// representative with its identical copies, which resemble each other
// wholly and are always placed together. root[k] is the position of the
// representative of member k (k itself for a representative, or for a
// copy whose representative is not in the component), and the members of
// the family rooted at r are at[start[r]:start[r+1]].
type family struct {
	root, start, at []int
}

func families(members []packed.Member, index map[uint64]int) family {
	f := family{root: make([]int, len(members)), start: make([]int, len(members)+1), at: make([]int, len(members))}
	for k, m := range members {
		f.root[k] = k
		if m.IdenticalTo != packed.NoDoc {
			if r, ok := index[m.IdenticalTo]; ok {
				f.root[k] = r
			}
		}
		f.start[f.root[k]+1]++
	}
	for r := range members {
		f.start[r+1] += f.start[r]
	}
	next := slices.Clone(f.start[:len(members)])
	for k := range members { // in doc order within each family
		r := f.root[k]
		f.at[next[r]] = k
		next[r]++
	}
	return f
}

// of is the family of member k, its representative first when present.
func (f family) of(k int) []int {
	r := f.root[k]
	return f.at[f.start[r]:f.start[r+1]]
}

// sketchOf is the sketch that stands for member k: its representative's.
func sketchOf(members []packed.Member, f family, k int) []uint64 {
	return members[f.root[k]].Values
}

// whole places a component in one cluster kept by its best member (package
// keep), each member compared with it by estimate (nil: all alike).
func whole(members []packed.Member, res []float64, estimate Estimator, index map[uint64]int) (clusters [][]int, kepts []int) {
	f := families(members, index)
	kept := 0
	for k := range members {
		if keep.Better(members[k].Rank, members[k].Doc, members[kept].Rank, members[kept].Doc) {
			kept = k
		}
	}
	all := make([]int, len(members))
	for k := range members {
		all[k] = k
		res[k] = resemblance(members, f, k, kept, estimate)
	}
	return [][]int{all}, []int{kept}
}

// resemblance is member k's resemblance to the kept one. An identical copy
// of the kept document (or of the document it copies) resembles it wholly,
// whatever its sketch: an empty one (a short page) would otherwise
// estimate 0.
func resemblance(members []packed.Member, f family, k, kept int, estimate Estimator) float64 {
	if estimate == nil || f.root[k] == f.root[kept] {
		return 1
	}
	return estimate(sketchOf(members, f, k), sketchOf(members, f, kept)).Resemblance
}

// centre places a component in clusters centred on their kept documents
// (--clusters=centered): the members are taken in keep order, best first;
// each not yet placed keeps a new cluster, which takes its identical
// family and every family not yet placed that is linked to it and meets
// opt.Centered against it by their sketches (opt.Estimate, member against
// kept). A document placed alone is in no cluster.
//
// Each family's links are looked at once, when it keeps a cluster, so a
// component of n members and l links costs O(n log n + l) steps and l
// sketch comparisons, on a path of pages as on a star. It gives the
// clusters of the rule it replaced (pick the kept document, keep the
// members that meet the policy against it, regroup the rest by their links
// and repeat, which costs O(n) comparisons per cluster) whenever every
// pair of members that meets the policy is linked, as with --verify=none:
// the best member not yet placed is the kept document of its group under
// either rule, and a member that meets the policy against it is linked to
// it, so in its group. Where verification has rejected a pair (the texts
// are less alike than their sketches said), it does not put the two
// together, which the old rule did. See docs/components.md.
func centre(members []packed.Member, links []packed.ClusterLink, index map[uint64]int, res []float64, opt Options) (clusters [][]int, kepts []int) {
	f := families(members, index)
	// The families' links, both ways, as lists of neighbouring roots.
	start := make([]int, len(members)+1)
	var ends [][2]int
	for _, l := range links {
		a, okA := index[l.A]
		b, okB := index[l.B]
		if !okA || !okB {
			continue // cannot happen: a link's documents are members
		}
		if a, b = f.root[a], f.root[b]; a != b {
			ends = append(ends, [2]int{a, b})
			start[a+1]++
			start[b+1]++
		}
	}
	for k := range members {
		start[k+1] += start[k]
	}
	adj := make([]int, start[len(members)])
	next := slices.Clone(start[:len(members)])
	for _, e := range ends {
		adj[next[e[0]]], adj[next[e[1]]] = e[1], e[0]
		next[e[0]]++
		next[e[1]]++
	}
	order := make([]int, len(members))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(x, y int) int {
		switch {
		case keep.Better(members[x].Rank, members[x].Doc, members[y].Rank, members[y].Doc):
			return -1
		case keep.Better(members[y].Rank, members[y].Doc, members[x].Rank, members[x].Doc):
			return 1
		}
		return 0
	})
	placed := make([]bool, len(members)) // by family root
	for _, kept := range order {
		r := f.root[kept]
		if placed[r] {
			continue
		}
		placed[r] = true
		cluster := slices.Clone(f.of(kept))
		for _, k := range cluster {
			res[k] = 1
		}
		ks := sketchOf(members, f, kept)
		for _, nb := range adj[start[r]:start[r+1]] {
			if placed[nb] {
				continue
			}
			e := opt.Estimate(members[nb].Values, ks)
			if !opt.Centered.Links(e) {
				continue
			}
			placed[nb] = true
			for _, k := range f.of(nb) {
				res[k] = e.Resemblance
				cluster = append(cluster, k)
			}
		}
		clusters, kepts = append(clusters, cluster), append(kepts, kept)
	}
	return clusters, kepts
}
