package main

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/neardup/neardup/similarity/simjoin"
	"github.com/neardup/neardup/similarity/sketch"
)

type pairKey [2]uint64

func keyOf(a, b uint64) pairKey {
	if a > b {
		a, b = b, a
	}
	return pairKey{a, b}
}

// outcome is one strategy's result on one corpus, for one way of linking:
// on the estimate alone (z = 0) or with the pairs within z standard
// errors of the threshold verified exactly.
type outcome struct {
	z             float64
	dense         string // the dense variant, when one
	verified      int    // candidate pairs verified exactly (dense: settled on the dense sample)
	exactAfter    int    // dense variants: pairs verified exactly after the dense sample
	docsVerified  int    // representatives in at least one verified pair
	linked, right int    // linked pairs (after identical copies), and how many are exact pairs

	// The false links between representatives (z = 0 only): the median
	// samples their estimates rest on and their median exact resemblance.
	falseSamples, falseJ float64
}

// result is one strategy on one corpus.
type result struct {
	strategy   strategy
	meanValues float64 // sketch values per document
	candidates int     // representative pairs sharing a sketch value
	outcomes   []outcome
}

// groups is the identical-document shortcut: documents with the same raw
// content, the first (lowest ID) their representative.
type groups struct {
	reps    []int         // indices into docs of the representatives
	members map[int][]int // representative -> its group, itself first
}

func identical(docs []doc) groups {
	g := groups{members: map[int][]int{}}
	first := map[uint64]int{}
	for i, d := range docs {
		if r, ok := first[d.Content]; ok {
			g.members[r] = append(g.members[r], i)
			continue
		}
		first[d.Content] = i
		g.reps = append(g.reps, i)
		g.members[i] = []int{i}
	}
	return g
}

// exactPairs is the exact join of the documents' whole sets at t.
func exactPairs(docs []doc, t float64) (map[pairKey]bool, error) {
	recs := make([]simjoin.Record, len(docs))
	for i, d := range docs {
		recs[i] = simjoin.Record{ID: d.ID, Tokens: d.Set}
	}
	pairs, _, err := simjoin.Join(recs, t)
	if err != nil {
		return nil, err
	}
	out := make(map[pairKey]bool, len(pairs))
	for _, p := range pairs {
		out[keyOf(p.A, p.B)] = true
	}
	return out, nil
}

// index is phase 2: for every sketch value kept, the representatives
// (indices into sks) whose sketch has it, and the values dropped as found
// in more than maxDocs of them.
type index struct {
	vals    []uint64 // sorted distinct kept values
	start   []int32  // postings of vals[i]: docs[start[i]:start[i+1]]
	docs    []int32
	dropped map[uint64]bool
}

func buildIndex(sks []docSketch, maxDocs int) *index {
	type post struct {
		v uint64
		d int32
	}
	var all []post
	for d, s := range sks {
		for _, v := range s.vals {
			all = append(all, post{v, int32(d)})
		}
	}
	slices.SortFunc(all, func(a, b post) int {
		if a.v != b.v {
			if a.v < b.v {
				return -1
			}
			return 1
		}
		return int(a.d - b.d)
	})
	ix := &index{dropped: map[uint64]bool{}}
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		if j-i > maxDocs {
			ix.dropped[all[i].v] = true
		} else {
			ix.vals = append(ix.vals, all[i].v)
			ix.start = append(ix.start, int32(len(ix.docs)))
			for _, p := range all[i:j] {
				ix.docs = append(ix.docs, p.d)
			}
		}
		i = j
	}
	ix.start = append(ix.start, int32(len(ix.docs)))
	return ix
}

// postings of v (nil when dropped or absent).
func (ix *index) postings(v uint64) []int32 {
	i, ok := slices.BinarySearch(ix.vals, v)
	if !ok {
		return nil
	}
	return ix.docs[ix.start[i]:ix.start[i+1]]
}

// forCandidates calls fn, from GOMAXPROCS goroutines (worker w of
// workers), for every pair (a, b) of representatives that share a kept
// sketch value, with a taken from anchors and b any other document (b >
// a when all is true, so that each pair comes once).
func forCandidates(sks []docSketch, ix *index, anchors []int, all bool, fn func(w, a, b int)) int {
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stamp := make([]int32, len(sks))
			var cand []int
			for i := w; i < len(anchors); i += workers {
				a := anchors[i]
				cand = cand[:0]
				for _, v := range sks[a].vals {
					for _, b := range ix.postings(v) {
						if int(b) == a || (all && int(b) < a) || stamp[b] == int32(a)+1 {
							continue
						}
						stamp[b] = int32(a) + 1
						cand = append(cand, int(b))
					}
				}
				for _, b := range cand {
					fn(w, a, b)
				}
			}
		}()
	}
	wg.Wait()
	return workers
}

// evaluate runs one strategy over a corpus's representatives and links
// each candidate on its estimate, and, for each z, with the uncertain
// candidates verified against the exact pairs.
func evaluate(docs []doc, g groups, exact map[pairKey]bool, s strategy, t float64, zs []float64, dense []denseVariant, maxDocs int) result {
	sks := make([]docSketch, len(g.reps))
	dks := make([][]uint32, len(g.reps))
	kmax := 0
	for _, v := range dense {
		kmax = max(kmax, v.k)
	}
	values := 0
	for i, r := range g.reps {
		sks[i] = s.sketchOf(docs[r].Set)
		values += len(sks[i].vals) * len(g.members[r])
		if kmax > 0 {
			dks[i] = denseOf(docs[r].Set, kmax)
		}
	}
	ix := buildIndex(sks, maxDocs)
	anchors := make([]int, len(sks))
	for i := range anchors {
		anchors[i] = i
	}
	nv := 1 + len(zs) + len(dense)
	type acc struct {
		falseN, falseJ []float64
		candidates     int
		linked         [][][2]int // per variant: linked representative pairs
		verified       []int
		exactAfter     []int
		vdocs          [][]bool
	}
	workers := runtime.GOMAXPROCS(0)
	accs := make([]acc, workers)
	for w := range accs {
		accs[w].linked = make([][][2]int, nv)
		accs[w].verified = make([]int, nv)
		accs[w].exactAfter = make([]int, nv)
		accs[w].vdocs = make([][]bool, nv)
		for v := range nv {
			accs[w].vdocs[v] = make([]bool, len(sks))
		}
	}
	forCandidates(sks, ix, anchors, true, func(w, a, b int) {
		ac := &accs[w]
		ac.candidates++
		est, n, u, _ := s.estimate(sks[a], sks[b], ix.dropped)
		onEst := est >= t
		if onEst {
			ac.linked[0] = append(ac.linked[0], [2]int{a, b})
			if x, y := docs[g.reps[a]], docs[g.reps[b]]; !exact[keyOf(x.ID, y.ID)] {
				ac.falseN = append(ac.falseN, float64(n))
				ac.falseJ = append(ac.falseJ, sketch.Jaccard(x.Set, y.Set))
			}
		}
		for zi, z := range zs {
			v := zi + 1
			link := onEst
			if sketch.Uncertain(est, t, z, n, u) {
				ac.verified[v]++
				ac.vdocs[v][a], ac.vdocs[v][b] = true, true
				link = exact[keyOf(docs[g.reps[a]].ID, docs[g.reps[b]].ID)]
			}
			if link {
				ac.linked[v] = append(ac.linked[v], [2]int{a, b})
			}
		}
		for di, dv := range dense {
			v := 1 + len(zs) + di
			x, y := docs[g.reps[a]], docs[g.reps[b]]
			link, stage := dv.decide(est, n, u, t, dks[a], dks[b], len(x.Set), len(y.Set), func() bool { return exact[keyOf(x.ID, y.ID)] })
			if stage >= 2 {
				ac.verified[v]++
				ac.vdocs[v][a], ac.vdocs[v][b] = true, true
			}
			if stage == 3 {
				ac.exactAfter[v]++
			}
			if link {
				ac.linked[v] = append(ac.linked[v], [2]int{a, b})
			}
		}
	})
	res := result{strategy: s, meanValues: float64(values) / float64(len(docs))}
	for v := range nv {
		o := outcome{}
		if v > 0 && v <= len(zs) {
			o.z = zs[v-1]
		} else if v > len(zs) {
			o.z, o.dense = dense[v-1-len(zs)].z, dense[v-1-len(zs)].String()
		}
		vd := make([]bool, len(sks))
		for w := range accs {
			o.verified += accs[w].verified[v]
			o.exactAfter += accs[w].exactAfter[v]
			for d, x := range accs[w].vdocs[v] {
				vd[d] = vd[d] || x
			}
			for _, p := range accs[w].linked[v] {
				for _, x := range g.members[g.reps[p[0]]] {
					for _, y := range g.members[g.reps[p[1]]] {
						o.linked++
						if exact[keyOf(docs[x].ID, docs[y].ID)] {
							o.right++
						}
					}
				}
			}
		}
		for _, x := range vd {
			if x {
				o.docsVerified++
			}
		}
		// Every pair within an identical group links.
		for _, r := range g.reps {
			m := g.members[r]
			for i := range m {
				for j := i + 1; j < len(m); j++ {
					o.linked++
					if exact[keyOf(docs[m[i]].ID, docs[m[j]].ID)] {
						o.right++
					}
				}
			}
		}
		res.outcomes = append(res.outcomes, o)
	}
	var fn, fj []float64
	for w := range accs {
		res.candidates += accs[w].candidates
		fn, fj = append(fn, accs[w].falseN...), append(fj, accs[w].falseJ...)
	}
	res.outcomes[0].falseSamples, res.outcomes[0].falseJ = median(fn), median(fj)
	return res
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}

func pct(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(a)/float64(b))
}

// median of xs (NaN when empty); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}
