package clusters

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/shuffle/packed"
)

// jaccard is the test's estimator: the resemblance of two value sets.
func jaccard(a, b []uint64) policy.Estimates {
	n := 0
	for _, x := range a {
		if slices.Contains(b, x) {
			n++
		}
	}
	if len(a)+len(b)-n == 0 {
		return policy.Estimates{}
	}
	return policy.Estimates{Shared: n, Resemblance: float64(n) / float64(len(a)+len(b)-n)}
}

// placed is where a reference puts a document: its cluster (smallest
// member), its kept document and its resemblance to it.
type placed struct {
	Cluster, Kept uint64
	Res           float64
}

// peelReference is the centred rule as first written, straight from its
// definition and in quadratic time: take a connected component (of links
// and copies), keep its best member (package keep), keep with it every
// member whose representative's sketch meets pol against the kept one's
// (its own family always), split the rest into the connected groups of
// the links and copies among them, and repeat on each group. It returns
// the documents in clusters of two or more.
func peelReference(sketch map[uint64][]uint64, copyOf map[uint64]uint64, rank map[uint64][]float64, links [][2]uint64, pol policy.Policy) map[uint64]placed {
	rep := func(d uint64) uint64 {
		if r, ok := copyOf[d]; ok {
			return r
		}
		return d
	}
	adj := map[uint64][]uint64{}
	for _, l := range links {
		adj[l[0]], adj[l[1]] = append(adj[l[0]], l[1]), append(adj[l[1]], l[0])
	}
	for c, r := range copyOf {
		adj[c], adj[r] = append(adj[c], r), append(adj[r], c)
	}
	// groups splits docs into the connected groups of adj among them.
	groups := func(docs []uint64) [][]uint64 {
		in, seen := map[uint64]bool{}, map[uint64]bool{}
		for _, d := range docs {
			in[d] = true
		}
		var out [][]uint64
		for _, d := range docs {
			if seen[d] {
				continue
			}
			g, stack := []uint64{}, []uint64{d}
			seen[d] = true
			for len(stack) > 0 {
				x := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				g = append(g, x)
				for _, y := range adj[x] {
					if in[y] && !seen[y] {
						seen[y] = true
						stack = append(stack, y)
					}
				}
			}
			out = append(out, g)
		}
		return out
	}
	var all []uint64
	for d := range adj {
		all = append(all, d)
	}
	slices.Sort(all)
	out := map[uint64]placed{}
	pending := groups(all)
	for len(pending) > 0 {
		g := pending[0]
		pending = pending[1:]
		kept := g[0]
		for _, d := range g {
			if keep.Better(rank[d], d, rank[kept], kept) {
				kept = d
			}
		}
		var stay, rest []uint64
		res := map[uint64]float64{}
		for _, d := range g {
			if rep(d) == rep(kept) {
				stay, res[d] = append(stay, d), 1
				continue
			}
			e := jaccard(sketch[rep(d)], sketch[rep(kept)])
			if pol.Links(e) {
				stay, res[d] = append(stay, d), e.Resemblance
			} else {
				rest = append(rest, d)
			}
		}
		if len(stay) > 1 {
			for _, d := range stay {
				out[d] = placed{Cluster: slices.Min(stay), Kept: kept, Res: res[d]}
			}
		}
		pending = append(pending, groups(rest)...)
	}
	return out
}

// TestCentredEqualsPeeling: on random components whose links are every
// pair that meets the policy (as --verify=none makes them), with identical
// copies and ties of rank, the centred clusters in O(links) are those of
// the quadratic rule they replaced, document by document, resemblances
// included.
func TestCentredEqualsPeeling(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 40))
	for trial := range 400 {
		n := 2 + rng.IntN(40)
		universe := uint64(6 + rng.IntN(20))
		pol := policy.Policy{Resemblance: []float64{0.3, 0.5, 0.7}[rng.IntN(3)]}
		sketch, copyOf, rank := map[uint64][]uint64{}, map[uint64]uint64{}, map[uint64][]float64{}
		var sketches []packed.Sketch
		var reps []uint64
		for i := range n {
			doc := uint64(3*i + 1 + rng.IntN(2))
			var vs []uint64
			for v := range universe {
				if rng.IntN(3) == 0 {
					vs = append(vs, v)
				}
			}
			sketch[doc], reps = vs, append(reps, doc)
			sketches = append(sketches, packed.Sketch{Doc: doc, Values: vs})
		}
		var edges []packed.Edge
		var links [][2]uint64
		for i, a := range reps {
			for _, b := range reps[i+1:] {
				if e := jaccard(sketch[a], sketch[b]); pol.Links(e) {
					edges = append(edges, packed.Edge{A: a, B: b, Resemblance: e.Resemblance})
					links = append(links, [2]uint64{a, b})
				}
			}
		}
		var ranks []packed.DocRank
		rankOf := func(doc uint64) []float64 {
			if rng.IntN(4) == 0 {
				return nil // ranks 0 on every rule
			}
			r := []float64{float64(rng.IntN(3))}
			rank[doc] = r
			return r
		}
		for _, d := range reps {
			if r := rankOf(d); r != nil {
				ranks = append(ranks, packed.DocRank{Doc: d, Rank: r})
			}
		}
		for c := range rng.IntN(n / 2) {
			doc, r := uint64(1000+c), reps[rng.IntN(n)]
			copyOf[doc] = r
			edges = append(edges, packed.Edge{A: r, B: doc, Resemblance: 1, Copy: true, Rank: rankOf(doc)})
		}
		want := peelReference(sketch, copyOf, rank, links, pol)
		assign, _, _ := Components(edges, sketches, ranks, Options{Estimate: jaccard, Centered: &pol})
		got := map[uint64]placed{}
		for _, a := range assign {
			got[a.Doc] = placed{Cluster: a.Cluster, Kept: a.Kept, Res: a.ResToKept}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d (%d docs, %d links, %d copies, policy %g):\ncentred %v\npeeling %v", trial, n, len(links), len(copyOf), pol.Resemblance, got, want)
		}
	}
}

// TestCentredNeedsLink: a pair whose sketches agree but whose link
// verification rejected (the texts are less alike than the sketches said)
// is not put in one cluster, though the kept document's sketch admits the
// other. 1 is kept; 3 has 1's sketch but is linked only through 2, which
// resembles neither: every document is alone. (The quadratic rule made
// {1, 3} a cluster.)
func TestCentredNeedsLink(t *testing.T) {
	sketches := []packed.Sketch{{Doc: 1, Values: []uint64{1, 2, 3, 4}}, {Doc: 2, Values: []uint64{3, 4, 5, 6, 7, 8}}, {Doc: 3, Values: []uint64{1, 2, 3, 4}}}
	edges := []packed.Edge{{A: 1, B: 2, Resemblance: 0.6}, {A: 2, B: 3, Resemblance: 0.6}}
	pol := policy.Policy{Resemblance: 0.5}
	assign, stats, _ := Components(edges, sketches, nil, Options{Estimate: jaccard, Centered: &pol})
	if len(assign) != 0 || len(stats) != 0 {
		t.Errorf("centred: %+v %+v; want every document alone", assign, stats)
	}
	// With the pair 1-3 linked too, 1 keeps 3.
	edges = append(edges, packed.Edge{A: 1, B: 3, Resemblance: 1})
	assign, _, _ = Components(edges, sketches, nil, Options{Estimate: jaccard, Centered: &pol})
	if len(assign) != 2 || assign[0].Doc != 1 || assign[1].Doc != 3 || assign[1].Kept != 1 || assign[1].ResToKept != 1 {
		t.Errorf("centred with 1-3 linked: %+v; want 1 and 3 kept by 1", assign)
	}
}

// TestCentredPathIsLinear: on a path of documents each linked to the next
// (and resembling only its neighbours), the centred rule compares each
// link at most once: the estimator's calls are counted, not timed.
func TestCentredPathIsLinear(t *testing.T) {
	for _, n := range []int{1000, 10000} {
		var sketches []packed.Sketch
		var edges []packed.Edge
		for i := range n {
			d := uint64(i + 1)
			sketches = append(sketches, packed.Sketch{Doc: d, Values: []uint64{d, d + 1, d + 2}})
			if i > 0 {
				edges = append(edges, packed.Edge{A: d - 1, B: d, Resemblance: 0.5})
			}
		}
		calls := 0
		est := func(a, b []uint64) policy.Estimates { calls++; return jaccard(a, b) }
		pol := policy.Policy{Resemblance: 0.5}
		assign, stats, _ := Components(edges, sketches, nil, Options{Estimate: est, Centered: &pol})
		// Kept 1 takes 2 (2 of 4 values shared); 3 takes 4; and so on.
		if len(stats) != n/2 || len(assign) != n {
			t.Errorf("path of %d: %d clusters of %d documents, want %d of %d", n, len(stats), len(assign), n/2, n)
		}
		// Each cluster's kept document compares its one free neighbour:
		// n/2 calls, and Summarize's resemblances to kept none more.
		if calls > n {
			t.Errorf("path of %d: %d sketch comparisons, want at most %d", n, calls, n)
		}
	}
}
