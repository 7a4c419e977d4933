// Package rankgroup refines a ranked result list the way Jain, Dahlin
// and Tewari (2005) use Bloom filters: every pair of results is compared
// through their filters, near-duplicates are grouped with a union-find
// ("we assume that a document belongs to a cluster if it is similar to a
// document in the cluster"), and "while grouping similar pages, the
// higher ranked page should be displayed as the anchor".
//
// A pair links when the policy says so of Compare's estimates (package
// bloom), which correct the false matches of the raw bit ratio; a group is
// a connected component of the links, anchored on its best-ranked member.
// The result depends on the documents and the policy only: the pair loop
// runs on every core, but which pairs link does not depend on the order
// they are compared in, nor the components on the order of the unions.
package rankgroup

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/clustering/unionfind"
	"github.com/neardup/neardup/similarity/bloom"
)

// Doc is one result: its rank (lower is better) and the Bloom filter of
// its features.
type Doc struct {
	Rank   float64
	Filter bloom.Filter
}

// Member is what Group says of one document.
type Member struct {
	Group  int  // index in docs of the group's anchor
	Anchor bool // the document is its group's anchor
	// Bloom estimates against the anchor: resemblance, and containment
	// of the member in the anchor; 1 for the anchor itself.
	Resemblance, Containment float64
}

// Group compares every pair of docs through their filters; a pair links
// when p.Links says so of the estimates (resemblance and both
// containments); groups are the connected components of the links, each
// anchored on its best-ranked member (lowest Rank, ties to the lowest
// index). It returns one Member per doc, in docs order. Every filter must
// have the same K, and no rank may be NaN.
//
// Under a policy of resemblance only, a pair whose sizes alone rule out
// the threshold is not compared: Compare's intersection is at most the
// smaller size, so its resemblance is at most min/max. Skipping such a
// pair changes nothing but the time taken.
func Group(docs []Doc, p policy.Policy) ([]Member, error) {
	links, err := Links(docs, p)
	if err != nil {
		return nil, err
	}
	uf := unionfind.New(len(docs))
	for i := range docs {
		uf.Add(uint64(i))
	}
	for _, l := range links {
		uf.Union(uint64(l[0]), uint64(l[1]))
	}
	// Each component is named by its lowest index; its anchor is the best
	// rank, the first index on a tie (indices ascend).
	anchor := make([]int, len(docs))
	for i := range docs {
		root := int(uf.Find(uint64(i)))
		if root == i || docs[i].Rank < docs[anchor[root]].Rank {
			anchor[root] = i
		}
	}
	out := make([]Member, len(docs))
	for i := range docs {
		a := anchor[int(uf.Find(uint64(i)))]
		if a == i {
			out[i] = Member{Group: i, Anchor: true, Resemblance: 1, Containment: 1}
			continue
		}
		e, err := bloom.Compare(docs[i].Filter, docs[a].Filter)
		if err != nil {
			return nil, fmt.Errorf("docs %d and %d: %w", i, a, err)
		}
		out[i] = Member{Group: a, Resemblance: e.Resemblance, Containment: e.AInB}
	}
	return out, nil
}

// check returns an error for a NaN rank or filters that do not compare.
func check(docs []Doc) error {
	for i, d := range docs {
		if math.IsNaN(d.Rank) {
			return fmt.Errorf("doc %d: rank is NaN", i)
		}
		f := d.Filter
		if w := len(f.Bits); w == 0 || w&(w-1) != 0 {
			return fmt.Errorf("doc %d: filter of %d words, not a power of two", i, w)
		}
		if f.K != docs[0].Filter.K {
			return fmt.Errorf("doc %d: filter with %d hash functions, doc 0's has %d: filters of one run compare", i, f.K, docs[0].Filter.K)
		}
	}
	return nil
}

// Links returns the pairs of docs that link under p (i < j), the edges
// Group takes its components of, comparing the pairs on GOMAXPROCS
// goroutines that take rows i in turn.
func Links(docs []Doc, p policy.Policy) ([][2]int32, error) {
	if err := check(docs); err != nil {
		return nil, err
	}
	n := len(docs)
	workers := max(1, min(runtime.GOMAXPROCS(0), n/32))
	sizeBound := p.Containment <= 0 // resemblance only: min/max bounds it
	var (
		next   atomic.Int64
		wg     sync.WaitGroup
		links  = make([][][2]int32, workers)
		errs   = make([]error, workers)
		errRow = make([]int, workers) // the row of errs[w]
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine [][2]int32
			for errs[w] == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					break
				}
				fi := docs[i].Filter
				if fi.N == 0 {
					continue // an empty set shares nothing
				}
				for j := i + 1; j < n; j++ {
					fj := docs[j].Filter
					if fj.N == 0 {
						continue
					}
					if sizeBound && float64(min(fi.N, fj.N))/float64(max(fi.N, fj.N)) < p.Resemblance {
						continue
					}
					e, err := bloom.Compare(fi, fj)
					if err != nil {
						errs[w], errRow[w] = fmt.Errorf("docs %d and %d: %w", i, j, err), i
						break
					}
					if p.Links(policy.Estimates{Shared: int(math.Round(e.Intersection)), Resemblance: e.Resemblance, AInB: &e.AInB, BInA: &e.BInA}) {
						mine = append(mine, [2]int32{int32(i), int32(j)})
					}
				}
			}
			links[w] = mine
		}()
	}
	wg.Wait()
	// The error of the lowest row: rows go out in ascending order and a
	// worker stops only after an error, so that row was compared.
	var first error
	row := n
	for w, err := range errs {
		if err != nil && errRow[w] < row {
			first, row = err, errRow[w]
		}
	}
	if first != nil {
		return nil, first
	}
	var all [][2]int32
	for _, l := range links {
		all = append(all, l...)
	}
	return all, nil
}
