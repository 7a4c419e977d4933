package simjoin

// Components returns the connected components of the join at t (the
// graph whose edges are Join's pairs) without listing the pairs: each
// record in a component of two or more is labelled with the component's
// smallest ID; records with no partner are left out.
//
// It is the reference for clusters when the join's pairs are too many to
// list: a family of n near-copies makes n(n-1)/2 pairs, 1.25 billion for
// 50,000 copies, yet one component. The prefix, length and positional
// filters are Join's, so no pair of resemblance t or more escapes being a
// candidate; what Components adds is that a candidate already in the
// probing record's component is not verified, since its edge could not
// change a component. The inverted lists are kept as runs of records of
// one component (unions only merge components, so a run stays of one
// component as the join goes on), and a run of the probing record's own
// component is passed over in one step: a family costs about a
// verification per member, not one per pair.
//
// Stats counts as Join's do, over the candidates examined: Verified those
// merged, Results the unions made (the edges of a spanning forest).
// Records with duplicate IDs or tokens out of order are an error, as for
// Join.
func Components(records []Record, t float64) (map[uint64]uint64, Stats, error) {
	var st Stats
	c, err := prepare(records, t)
	if err != nil {
		return nil, st, err
	}
	labels := map[uint64]uint64{}
	if len(c.ids) < 2 {
		return labels, st, nil
	}
	j := newComponentJoiner(c, t)
	for x := range c.ids {
		j.probe(int32(x), &st)
	}
	// The label is the smallest ID of the component, whatever its root.
	smallest := map[int32]uint64{}
	for x := range c.ids {
		r := j.find(int32(x))
		if r == int32(x) && j.size[x] == 1 {
			continue
		}
		if id, ok := smallest[r]; !ok || c.ids[x] < id {
			smallest[r] = c.ids[x]
		}
	}
	for x := range c.ids {
		if id, ok := smallest[j.find(int32(x))]; ok {
			labels[c.ids[x]] = id
		}
	}
	return labels, st, nil
}

// span is a run of a list's postings, [lo, hi), all of one component.
type span struct{ lo, hi int32 }

// componentList is an inverted list as runs of one component each;
// spans before start hold records too short for every later probe.
type componentList struct {
	postings []posting
	spans    []span
	start    int
}

// componentJoiner is the join with a union-find over the records'
// canonical numbers (package unionfind keys by ID through a map, a lookup
// too many on every run passed over).
type componentJoiner struct {
	canon
	t      float64
	ratio  float64
	lists  []componentList
	parent []int32
	size   []int32
	seen   []int32 // seen[y] == x+1: y was a candidate of x already
}

func newComponentJoiner(c canon, t float64) *componentJoiner {
	n := len(c.ids)
	nTok := 0
	for _, ts := range c.toks {
		nTok = max(nTok, int(ts[len(ts)-1])+1)
	}
	j := &componentJoiner{canon: c, t: t, ratio: t / (1 + t),
		lists:  make([]componentList, nTok-int(c.nSingle)),
		parent: make([]int32, n), size: make([]int32, n), seen: make([]int32, n)}
	for i := range j.parent {
		j.parent[i], j.size[i] = int32(i), 1
	}
	return j
}

func (j *componentJoiner) find(x int32) int32 {
	for j.parent[x] != x {
		j.parent[x] = j.parent[j.parent[x]]
		x = j.parent[x]
	}
	return x
}

func (j *componentJoiner) union(a, b int32) {
	a, b = j.find(a), j.find(b)
	if a == b {
		return
	}
	if j.size[a] < j.size[b] {
		a, b = b, a
	}
	j.parent[b] = a
	j.size[a] += j.size[b]
}

// probe joins record x to the components of the records before it that
// it resembles, then indexes x.
func (j *componentJoiner) probe(x int32, st *Stats) {
	xs := j.toks[x]
	lx := len(xs)
	minLen, probeLen, indexLen := prefixes(j.t, lx)
	for i := 0; i < probeLen; i++ {
		if xs[i] < j.nSingle {
			continue
		}
		l := &j.lists[xs[i]-j.nSingle]
		for l.start < len(l.spans) && len(j.toks[l.postings[l.spans[l.start].hi-1].rec]) < minLen {
			l.start++
		}
		// Merging neighbouring runs that unions have made one component
		// keeps the runs few.
		kept := l.start
		for s := l.start; s < len(l.spans); s++ {
			sp := l.spans[s]
			if kept > l.start && j.find(l.postings[l.spans[kept-1].lo].rec) == j.find(l.postings[sp.lo].rec) {
				l.spans[kept-1].hi = sp.hi
				continue
			}
			l.spans[kept] = sp
			kept++
		}
		l.spans = l.spans[:kept]
		for _, sp := range l.spans[l.start:] {
			if j.find(l.postings[sp.lo].rec) == j.find(x) {
				continue
			}
			for _, p := range l.postings[sp.lo:sp.hi] {
				if j.seen[p.rec] == x+1 {
					continue
				}
				j.seen[p.rec] = x + 1
				if ly := len(j.toks[p.rec]); ly < minLen {
					continue
				}
				st.Candidates++
				if j.resembles(x, p, i, st) {
					st.Results++
					j.union(x, p.rec)
					break // the rest of the run is x's component now
				}
			}
		}
	}
	r := j.find(x)
	for i := 0; i < indexLen; i++ {
		if xs[i] < j.nSingle {
			continue
		}
		l := &j.lists[xs[i]-j.nSingle]
		n := int32(len(l.postings))
		if k := len(l.spans) - 1; k >= l.start && l.spans[k].hi == n && j.find(l.postings[l.spans[k].lo].rec) == r {
			l.spans[k].hi++
		} else {
			l.spans = append(l.spans, span{n, n + 1})
		}
		l.postings = append(l.postings, posting{rec: x, pos: int32(i)})
	}
}

// resembles reports whether x and y = p.rec, first seen sharing x's token
// at i (y's at p.pos), have a Jaccard of t or more, deciding as Join does.
// Being the first shared token of the two prefixes, x[:i] and y[:p.pos]
// share nothing (a shared token there would sit in both prefixes and
// have made y a candidate of x before).
func (j *componentJoiner) resembles(x int32, p posting, i int, st *Stats) bool {
	xs, ys := j.toks[x], j.toks[p.rec]
	lx, ly := len(xs), len(ys)
	alpha := max(1, ceilLow(j.ratio*float64(lx+ly)))
	if min(lx-i, ly-int(p.pos)) < alpha {
		st.PositionalPruned++
		return false
	}
	st.Verified++
	o := mergeOverlap(xs, ys, i, int(p.pos), 0, alpha)
	return o >= alpha && float64(o)/float64(lx+ly-o) >= j.t
}
