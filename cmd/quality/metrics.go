package main

import (
	"cmp"
	"encoding/csv"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/similarity/simjoin"
	"github.com/neardup/neardup/similarity/sketch"
)

// pairKey is an unordered document pair, stored with the smaller doc ID first.
type pairKey [2]uint64

func keyOf(a, b uint64) pairKey {
	if a > b {
		a, b = b, a
	}
	return pairKey{a, b}
}

// pairSet is a set of document pairs.
type pairSet map[pairKey]struct{}

func (s pairSet) add(a, b uint64) {
	if a != b {
		s[keyOf(a, b)] = struct{}{}
	}
}

// exactSet is the pairs of an exact join as a set.
func exactSet(pairs []simjoin.Pair) pairSet {
	s := make(pairSet, len(pairs))
	for _, p := range pairs {
		s.add(p.A, p.B)
	}
	return s
}

// identicalGroups maps every representative of an identical group to its
// members (itself first, then its copies in doc ID order), from the docs
// table's identical_to column. Documents that are no one's copy and have
// none are left out.
func identicalGroups(docs []tables.Doc) map[uint64][]uint64 {
	copies := map[uint64][]uint64{}
	for _, d := range docs {
		if d.IdenticalTo != nil {
			rep := uint64(*d.IdenticalTo)
			copies[rep] = append(copies[rep], uint64(d.DocID))
		}
	}
	groups := make(map[uint64][]uint64, len(copies))
	for rep, cs := range copies {
		slices.Sort(cs)
		groups[rep] = append([]uint64{rep}, cs...)
	}
	return groups
}

// representatives maps every identical copy to its representative.
func representatives(docs []tables.Doc) map[uint64]uint64 {
	reps := map[uint64]uint64{}
	for _, d := range docs {
		if d.IdenticalTo != nil {
			reps[uint64(d.DocID)] = uint64(*d.IdenticalTo)
		}
	}
	return reps
}

// repOf is the representative of doc: itself unless it is an identical copy.
func repOf(reps map[uint64]uint64, doc uint64) uint64 {
	if r, ok := reps[doc]; ok {
		return r
	}
	return doc
}

// foundPairs is every pair the pipeline calls near-duplicate directly: the
// linked rows of the pairs table, each expanded to every member of the two
// representatives' identical groups (a copy is byte-identical to its
// representative, so the link holds for it too), plus every pair within an
// identical group (resemblance 1). Only pairs of two documents with status
// ok (those with shingles) are kept, the universe of the exact join.
func foundPairs(docs []tables.Doc, pairs []tables.Pair) pairSet {
	ok := make(map[uint64]bool, len(docs))
	for _, d := range docs {
		ok[uint64(d.DocID)] = d.Status == tables.StatusOK
	}
	groups := identicalGroups(docs)
	members := func(rep uint64) []uint64 {
		if g, found := groups[rep]; found {
			return g
		}
		return []uint64{rep}
	}
	found := pairSet{}
	for _, p := range pairs {
		if !p.Linked {
			continue
		}
		for _, a := range members(uint64(p.DocA)) {
			for _, b := range members(uint64(p.DocB)) {
				if ok[a] && ok[b] {
					found.add(a, b)
				}
			}
		}
	}
	for _, g := range groups {
		for i, a := range g {
			for _, b := range g[i+1:] {
				if ok[a] && ok[b] {
					found.add(a, b)
				}
			}
		}
	}
	return found
}

// universeMismatch counts the documents on which the pipeline (status ok)
// and the exact side (a non-empty shingle set) disagree about having
// shingles; 0 when both judge the same universe.
func universeMismatch(docs []tables.Doc, sets map[uint64][]uint64) int {
	n, listed := 0, 0
	for _, d := range docs {
		_, has := sets[uint64(d.DocID)]
		if has {
			listed++
		}
		if has != (d.Status == tables.StatusOK) {
			n++
		}
	}
	return n + len(sets) - listed // sets the docs table does not list
}

// score compares found pairs with the exact ones.
type score struct {
	Exact, Found, Both int
}

func compare(found, exact pairSet) score {
	s := score{Exact: len(exact), Found: len(found)}
	for k := range found {
		if _, ok := exact[k]; ok {
			s.Both++
		}
	}
	return s
}

// ratio formats num/den with 3 decimals, or "-" when den is 0.
func ratio[T int | int64](num, den T) string {
	if den == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(num)/float64(den))
}

func (s score) precision() string { return ratio(s.Both, s.Found) }
func (s score) recall() string    { return ratio(s.Both, s.Exact) }

// label is a Clough-Stevenson document's task and category ("orig" for
// the sources, else cut, light, heavy or non).
type label struct {
	Task, Category string
}

// categories is the order of the containment table's rows; other
// categories follow in name order.
var categories = []string{"cut", "light", "heavy", "non"}

const sourceCategory = "orig"

// readLabels reads the labels CSV: a header naming the columns File, Task
// and Category, then one row per document, keyed by File (the id column).
func readLabels(r io.Reader) (map[string]label, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("labels: empty file")
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[strings.ToLower(strings.TrimSpace(name))] = i
	}
	fi, ok1 := col["file"]
	ti, ok2 := col["task"]
	ci, ok3 := col["category"]
	if !ok1 || !ok2 || !ok3 {
		return nil, fmt.Errorf("labels: header %v lacks File, Task or Category", rows[0])
	}
	labels := map[string]label{}
	for _, row := range rows[1:] {
		if len(row) <= max(fi, ti, ci) {
			return nil, fmt.Errorf("labels: short row %v", row)
		}
		labels[row[fi]] = label{Task: strings.TrimSpace(row[ti]), Category: strings.ToLower(strings.TrimSpace(row[ci]))}
	}
	return labels, nil
}

// parseSource reads a label from the corpus's source column, like
// "clough-stevenson:task=b:category=cut". Without a category, a document
// whose id names a source text (orig_task*.txt) is a source.
func parseSource(id, source string) (label, bool) {
	var l label
	for _, part := range strings.Split(source, ":") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "task":
			l.Task = strings.TrimSpace(v)
		case "category":
			l.Category = strings.ToLower(strings.TrimSpace(v))
		}
	}
	if l.Category == "" && strings.HasPrefix(path.Base(id), "orig_") {
		l.Category = sourceCategory
	}
	return l, l.Task != "" && l.Category != ""
}

// containmentRow is one category of the containment table.
type containmentRow struct {
	Category   string
	Answers    int
	Found      int     // answers the contained table puts inside their task's source
	MeanEst    float64 // mean estimated containment of answer in source (0 when the pair is absent)
	MeanExact  float64 // mean exact |S(answer)∩S(source)| / |S(answer)|
	ExactAbove int     // answers whose exact containment reaches the threshold
	NoShingles int     // answers with no shingles (exact containment 0)
}

// containmentInput is what the containment table is computed from.
type containmentInput struct {
	Labels    map[string]label    // by the input's id
	DocIDs    map[string]uint64   // the input's id to doc ID
	Sets      map[uint64][]uint64 // full shingle sets by doc ID (sorted)
	Docs      []tables.Doc
	Pairs     []tables.Pair
	Contained []tables.Contained
	Threshold float64
}

// containmentTable compares, per category, the pipeline's view of how much
// of each answer lies in its own task's source with the exact containment
// of their full shingle sets. Identical copies are resolved to their
// representatives, which are the documents the pairs and contained tables
// name.
func containmentTable(in containmentInput) ([]containmentRow, error) {
	sources := map[string]uint64{}
	for name, l := range in.Labels {
		if l.Category != sourceCategory {
			continue
		}
		id, ok := in.DocIDs[name]
		if !ok {
			return nil, fmt.Errorf("source %s is not in the corpus", name)
		}
		sources[l.Task] = id
	}
	reps := representatives(in.Docs)
	byPair := make(map[pairKey]*tables.Pair, len(in.Pairs))
	for i := range in.Pairs {
		p := &in.Pairs[i]
		byPair[keyOf(uint64(p.DocA), uint64(p.DocB))] = p
	}
	contained := map[[2]uint64]bool{}
	for _, c := range in.Contained {
		contained[[2]uint64{uint64(c.Contained), uint64(c.Container)}] = true
	}
	rows := map[string]*containmentRow{}
	names := make([]string, 0, len(in.Labels))
	for name := range in.Labels {
		names = append(names, name)
	}
	slices.Sort(names) // deterministic float sums
	for _, name := range names {
		l := in.Labels[name]
		if l.Category == sourceCategory {
			continue
		}
		a, ok := in.DocIDs[name]
		if !ok {
			return nil, fmt.Errorf("answer %s is not in the corpus", name)
		}
		s, ok := sources[l.Task]
		if !ok {
			return nil, fmt.Errorf("answer %s: no source for task %q", name, l.Task)
		}
		r := rows[l.Category]
		if r == nil {
			r = &containmentRow{Category: l.Category}
			rows[l.Category] = r
		}
		r.Answers++
		ra, rs := repOf(reps, a), repOf(reps, s)
		var est float64
		switch p := byPair[keyOf(ra, rs)]; {
		case ra == rs:
			est = 1
		case p == nil:
		case uint64(p.DocA) == ra && p.ContainmentAInB != nil:
			est = *p.ContainmentAInB
		case uint64(p.DocB) == ra && p.ContainmentBInA != nil:
			est = *p.ContainmentBInA
		}
		r.MeanEst += est
		if ra == rs || contained[[2]uint64{ra, rs}] {
			r.Found++
		}
		sa := in.Sets[a]
		var exact float64
		if len(sa) == 0 {
			r.NoShingles++
		} else {
			exact = float64(sketch.IntersectCount(sa, in.Sets[s])) / float64(len(sa))
		}
		r.MeanExact += exact
		if exact >= in.Threshold {
			r.ExactAbove++
		}
	}
	out := make([]containmentRow, 0, len(rows))
	for _, r := range rows {
		r.MeanEst /= float64(r.Answers)
		r.MeanExact /= float64(r.Answers)
		out = append(out, *r)
	}
	slices.SortFunc(out, func(x, y containmentRow) int {
		ix, iy := slices.Index(categories, x.Category), slices.Index(categories, y.Category)
		if ix < 0 {
			ix = len(categories)
		}
		if iy < 0 {
			iy = len(categories)
		}
		return cmp.Or(cmp.Compare(ix, iy), cmp.Compare(x.Category, y.Category))
	})
	return out, nil
}

// isHTMLCorpus reports whether a corpus glob is read as HTML by default:
// its file name contains "html".
func isHTMLCorpus(glob string) bool {
	return strings.Contains(strings.ToLower(path.Base(glob)), "html")
}

// jaccards is each exact pair's resemblance.
func jaccards(pairs []simjoin.Pair) map[pairKey]float64 {
	m := make(map[pairKey]float64, len(pairs))
	for _, p := range pairs {
		m[keyOf(p.A, p.B)] = p.Jaccard
	}
	return m
}

// missedBands says where the exact pairs the pipeline did not find lie:
// how many in each band of exact resemblance, and of those how many the
// pairs table holds (counted, but not linked), the rest never counted
// (their sketches shared nothing phase 3 kept). Identical copies count
// through their representatives.
func missedBands(found pairSet, exact map[pairKey]float64, pairs []tables.Pair, docs []tables.Doc) string {
	bands := []float64{0.55, 0.6, 0.7, 0.8, 0.9, 1.01}
	missed, counted := make([]int, len(bands)), make([]int, len(bands))
	reps := representatives(docs)
	rows := make(map[pairKey]tables.Pair, len(pairs))
	for _, p := range pairs {
		rows[keyOf(uint64(p.DocA), uint64(p.DocB))] = p
	}
	var examples []string
	for k, j := range exact {
		if _, ok := found[k]; ok {
			continue
		}
		b := 0
		for b < len(bands)-1 && j >= bands[b] {
			b++
		}
		missed[b]++
		r, ok := rows[keyOf(repOf(reps, k[0]), repOf(reps, k[1]))]
		if !ok {
			continue
		}
		counted[b]++
		if j >= 0.9 && len(examples) < 5 {
			dense := "-"
			if r.DenseResemblance != nil {
				dense = fmt.Sprintf("%.3f", *r.DenseResemblance)
			}
			examples = append(examples, fmt.Sprintf("%d-%d exact %.3f: shared %d of %d and %d, estimate %.3f, dense %s", k[0], k[1], j, r.Shared, r.SketchSizeA, r.SketchSizeB, r.Resemblance, dense))
		}
	}
	var parts []string
	lo := "t"
	for b, hi := range bands {
		name := fmt.Sprintf("[%s, %g)", lo, hi)
		if hi > 1 {
			name = fmt.Sprintf("[%s, 1]", lo)
		}
		parts = append(parts, fmt.Sprintf("%s %d (%d counted)", name, missed[b], counted[b]))
		lo = fmt.Sprintf("%g", hi)
	}
	if len(examples) > 0 {
		parts = append(parts, "e.g. "+strings.Join(examples, "; "))
	}
	return strings.Join(parts, ", ")
}
