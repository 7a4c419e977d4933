package main

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/similarity/simjoin"
)

func i64(v int64) *int64        { return &v }
func f64(v float64) *float64    { return &v }
func okDoc(id int64) tables.Doc { return tables.Doc{DocID: id, Status: tables.StatusOK} }

func copyOf(id, rep int64) tables.Doc {
	d := okDoc(id)
	d.IdenticalTo = i64(rep)
	return d
}

func sortedKeys(s pairSet) []pairKey {
	keys := slices.Collect(maps.Keys(s))
	slices.SortFunc(keys, func(a, b pairKey) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return keys
}

func TestFoundPairs(t *testing.T) {
	short := tables.Doc{DocID: 20, Status: tables.StatusTooShort}
	shortCopy := tables.Doc{DocID: 21, Status: tables.StatusTooShort, IdenticalTo: i64(20)}
	docs := []tables.Doc{
		okDoc(1), copyOf(2, 1), copyOf(3, 1), // group {1, 2, 3}
		okDoc(5), copyOf(6, 5), // group {5, 6}
		okDoc(8), okDoc(9), okDoc(10),
		short, shortCopy, // too short: no shingles, never counted
	}
	pairs := []tables.Pair{
		{DocA: 1, DocB: 5, Linked: true},   // expands to {1,2,3} x {5,6}
		{DocA: 8, DocB: 9, Linked: true},   // plain
		{DocA: 9, DocB: 10, Linked: false}, // not linked: not found
		{DocA: 5, DocB: 8, Linked: true},   // {5,6} x {8}
	}
	got := sortedKeys(foundPairs(docs, pairs))
	want := []pairKey{
		{1, 2}, {1, 3}, {1, 5}, {1, 6},
		{2, 3}, {2, 5}, {2, 6},
		{3, 5}, {3, 6},
		{5, 6}, {5, 8},
		{6, 8},
		{8, 9},
	}
	if !slices.Equal(got, want) {
		t.Errorf("foundPairs = %v, want %v", got, want)
	}
}

func TestFoundPairsSkipsDocsWithoutShingles(t *testing.T) {
	// A linked representative whose copy is (oddly) not ok: the copy is
	// left out, the representative's pair stays.
	odd := tables.Doc{DocID: 4, Status: tables.StatusEmpty, IdenticalTo: i64(1)}
	docs := []tables.Doc{okDoc(1), odd, okDoc(7)}
	got := sortedKeys(foundPairs(docs, []tables.Pair{{DocA: 1, DocB: 7, Linked: true}}))
	if want := []pairKey{{1, 7}}; !slices.Equal(got, want) {
		t.Errorf("foundPairs = %v, want %v", got, want)
	}
}

func TestCompare(t *testing.T) {
	exact := exactSet([]simjoin.Pair{{A: 1, B: 2}, {A: 3, B: 4}, {A: 5, B: 6}, {A: 7, B: 8}})
	found := pairSet{}
	found.add(2, 1) // order does not matter
	found.add(3, 4)
	found.add(1, 9)
	s := compare(found, exact)
	if s != (score{Exact: 4, Found: 3, Both: 2}) {
		t.Fatalf("compare = %+v", s)
	}
	if p, r := s.precision(), s.recall(); p != "0.667" || r != "0.500" {
		t.Errorf("precision, recall = %s, %s; want 0.667, 0.500", p, r)
	}
	empty := compare(pairSet{}, pairSet{})
	if p, r := empty.precision(), empty.recall(); p != "-" || r != "-" {
		t.Errorf("empty: precision, recall = %s, %s; want -, -", p, r)
	}
	none := compare(pairSet{}, exact)
	if p, r := none.precision(), none.recall(); p != "-" || r != "0.000" {
		t.Errorf("nothing found: precision, recall = %s, %s; want -, 0.000", p, r)
	}
}

func TestPairSetIgnoresSelfPairs(t *testing.T) {
	s := pairSet{}
	s.add(3, 3)
	if len(s) != 0 {
		t.Errorf("a document paired with itself was counted: %v", s)
	}
}

func TestUniverseMismatch(t *testing.T) {
	docs := []tables.Doc{okDoc(1), okDoc(2), {DocID: 3, Status: tables.StatusTooShort}}
	sets := map[uint64][]uint64{1: {10}, 2: {11}}
	if n := universeMismatch(docs, sets); n != 0 {
		t.Errorf("mismatch %d, want 0", n)
	}
	sets[3] = []uint64{12} // too short in the pipeline, shingles here
	sets[4] = []uint64{13} // not in the docs table
	delete(sets, 2)        // ok in the pipeline, no shingles here
	if n := universeMismatch(docs, sets); n != 3 {
		t.Errorf("mismatch %d, want 3", n)
	}
}

func TestReadLabels(t *testing.T) {
	csv := "File,Task,Category\ng0pA_taska.txt,a,non\ng0pA_taskb.txt,b,cut\norig_taskb.txt,b,orig\n"
	labels, err := readLabels(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]label{
		"g0pA_taska.txt": {"a", "non"},
		"g0pA_taskb.txt": {"b", "cut"},
		"orig_taskb.txt": {"b", "orig"},
	}
	if !maps.Equal(labels, want) {
		t.Errorf("readLabels = %v, want %v", labels, want)
	}
	if _, err := readLabels(strings.NewReader("Name,Task\nx,a\n")); err == nil {
		t.Error("a header without File and Category was accepted")
	}
}

func TestParseSource(t *testing.T) {
	for _, tc := range []struct {
		id, source string
		want       label
		ok         bool
	}{
		{"g0pA_taskb.txt", "clough-stevenson:task=b:category=cut", label{"b", "cut"}, true},
		{"orig_taskc.txt", "clough-stevenson:task=c:category=orig", label{"c", "orig"}, true},
		{"orig_taskc.txt", "clough-stevenson:task=c", label{"c", "orig"}, true},
		{"g0pA_taskb.txt", "clough-stevenson:task=b", label{Task: "b"}, false},
		{"x", "", label{}, false},
	} {
		got, ok := parseSource(tc.id, tc.source)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseSource(%q, %q) = %v, %v; want %v, %v", tc.id, tc.source, got, ok, tc.want, tc.ok)
		}
	}
}

func TestContainmentTable(t *testing.T) {
	// Doc IDs: sources 100 (task a) and 200 (task b); answers below.
	labels := map[string]label{
		"orig_a": {"a", "orig"}, "orig_b": {"b", "orig"},
		"cut1": {"a", "cut"}, "cut2": {"b", "cut"},
		"light1": {"a", "light"},
		"non1":   {"a", "non"}, "non2": {"b", "non"},
	}
	ids := map[string]uint64{"orig_a": 100, "orig_b": 200, "cut1": 1, "cut2": 2, "light1": 3, "non1": 4, "non2": 5}
	sets := map[uint64][]uint64{
		100: {10, 11, 12, 13, 14, 15, 16, 17},
		200: {20, 21, 22, 23},
		1:   {10, 11, 12, 13},     // fully inside a: 1
		2:   {20, 21, 22, 23},     // byte-identical to its source b: 1
		3:   {10, 11, 90, 91},     // half inside a: 0.5
		4:   {80, 81, 82, 83, 84}, // nothing: 0
		// 5 has no shingles
	}
	docs := []tables.Doc{
		okDoc(100), okDoc(200), okDoc(1), copyOf(2, 200), okDoc(3), okDoc(4),
		{DocID: 5, Status: tables.StatusTooShort},
	}
	pairs := []tables.Pair{
		// answer 1 is doc_a: its containment in source 100 is containment_a_in_b.
		{DocA: 1, DocB: 100, ContainmentAInB: f64(0.9), ContainmentBInA: f64(0.4)},
		// answer 3 is doc_a too; estimate 0.45, below the threshold.
		{DocA: 3, DocB: 100, ContainmentAInB: f64(0.45), ContainmentBInA: f64(0.2)},
		// a pair not involving a source: ignored.
		{DocA: 1, DocB: 3, ContainmentAInB: f64(0.7), ContainmentBInA: f64(0.7)},
	}
	contained := []tables.Contained{
		{Contained: 1, Container: 100, Containment: 0.9},
		{Contained: 1, Container: 3, Containment: 0.7}, // wrong container: not counted
		{Contained: 100, Container: 4, Containment: 0.6},
	}
	rows, err := containmentTable(containmentInput{
		Labels: labels, DocIDs: ids, Sets: sets, Docs: docs, Pairs: pairs, Contained: contained, Threshold: 0.5,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []containmentRow{
		// cut1: found, est 0.9, exact 1; cut2: identical copy of its
		// source, found, est 1, exact 1.
		{Category: "cut", Answers: 2, Found: 2, MeanEst: 0.95, MeanExact: 1, ExactAbove: 2},
		{Category: "light", Answers: 1, Found: 0, MeanEst: 0.45, MeanExact: 0.5, ExactAbove: 1},
		// non1: no pair, exact 0; non2: no shingles.
		{Category: "non", Answers: 2, Found: 0, MeanEst: 0, MeanExact: 0, ExactAbove: 0, NoShingles: 1},
	}
	if len(rows) != len(want) {
		t.Fatalf("got %d rows %+v, want %+v", len(rows), rows, want)
	}
	for i := range want {
		g, w := rows[i], want[i]
		if g.Category != w.Category || g.Answers != w.Answers || g.Found != w.Found || g.ExactAbove != w.ExactAbove ||
			g.NoShingles != w.NoShingles || math.Abs(g.MeanEst-w.MeanEst) > 1e-12 || math.Abs(g.MeanExact-w.MeanExact) > 1e-12 {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestContainmentTableBDirection(t *testing.T) {
	// The answer has the larger doc ID, so its containment in the source
	// is containment_b_in_a.
	labels := map[string]label{"orig_a": {"a", "orig"}, "ans": {"a", "heavy"}}
	ids := map[string]uint64{"orig_a": 1, "ans": 9}
	sets := map[uint64][]uint64{1: {1, 2, 3, 4}, 9: {3, 4, 5, 6}}
	pairs := []tables.Pair{{DocA: 1, DocB: 9, ContainmentAInB: f64(0.1), ContainmentBInA: f64(0.6)}}
	contained := []tables.Contained{{Contained: 9, Container: 1, Containment: 0.6}}
	rows, err := containmentTable(containmentInput{
		Labels: labels, DocIDs: ids, Sets: sets, Docs: []tables.Doc{okDoc(1), okDoc(9)},
		Pairs: pairs, Contained: contained, Threshold: 0.5,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := containmentRow{Category: "heavy", Answers: 1, Found: 1, MeanEst: 0.6, MeanExact: 0.5, ExactAbove: 1}
	if len(rows) != 1 || rows[0] != want {
		t.Errorf("rows = %+v, want [%+v]", rows, want)
	}
}

func TestContainmentTableMissingSource(t *testing.T) {
	labels := map[string]label{"ans": {"z", "cut"}}
	_, err := containmentTable(containmentInput{Labels: labels, DocIDs: map[string]uint64{"ans": 1}})
	if err == nil {
		t.Error("an answer without a source was accepted")
	}
}

func TestIsHTMLCorpus(t *testing.T) {
	for glob, want := range map[string]bool{
		"../shared/data/python-3.11-docs-html.parquet": true,
		"testdata/html/*.parquet":                      false, // the folder does not count
		"data/PAGES.HTML.parquet":                      true,
		"testdata/crawl/*.parquet":                     false,
	} {
		if got := isHTMLCorpus(glob); got != want {
			t.Errorf("isHTMLCorpus(%q) = %v, want %v", glob, got, want)
		}
	}
}

func TestParseModesAndThresholds(t *testing.T) {
	ms, err := parseModes("mod:25, min:100,supershingle+verify")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.name)
	}
	if want := []string{"mod:25", "min:100", "supershingle+verify"}; !slices.Equal(names, want) {
		t.Errorf("parseModes = %v, want %v", names, want)
	}
	if _, err := parseModes("mod:26"); err == nil {
		t.Error("unknown mode accepted")
	}
	ts, err := parseThresholds("0.5, 0.8,1")
	if err != nil || !slices.Equal(ts, []float64{0.5, 0.8, 1}) {
		t.Errorf("parseThresholds = %v, %v", ts, err)
	}
	for _, bad := range []string{"0", "1.5", "x", ""} {
		if _, err := parseThresholds(bad); err == nil {
			t.Errorf("threshold %q accepted", bad)
		}
	}
}

func TestShingleSetsAndRecords(t *testing.T) {
	docs := []doc{
		{ID: 7, Text: "one two three four five six"},
		{ID: 3, Text: "one two three four five six seven"},
		{ID: 5, Text: "too short"},
	}
	sets := shingleSets(docs, 1, 5)
	if len(sets) != 2 || len(sets[7]) != 2 || len(sets[3]) != 3 {
		t.Fatalf("shingleSets = %v", sets)
	}
	recs := records(sets)
	if len(recs) != 2 || recs[0].ID != 3 || recs[1].ID != 7 {
		t.Fatalf("records = %v", recs)
	}
	pairs, _, err := simjoin.Join(recs, 0.5)
	if err != nil || len(pairs) != 1 || pairs[0].Overlap != 2 {
		t.Errorf("join = %v, %v; want one pair with overlap 2", pairs, err)
	}
}
