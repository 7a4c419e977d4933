package main

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/similarity/simjoin"
)

// bruteScore counts same-cluster pairs one pair at a time, the definition
// scoreClusters computes from its contingency table.
func bruteScore(ids []uint64, truth, found map[uint64]uint64) clusterScore {
	same := func(m map[uint64]uint64, a, b uint64) bool {
		la, oka := m[a]
		lb, okb := m[b]
		return oka && okb && la == lb
	}
	var s clusterScore
	sizes := map[uint64]int{}
	for _, id := range ids {
		if l, ok := found[id]; ok {
			sizes[l]++
		}
	}
	for _, n := range sizes {
		if n > 1 {
			s.Clusters++
		}
		s.Largest = max(s.Largest, n)
	}
	for i, a := range ids {
		for _, b := range ids[i+1:] {
			t, f := same(truth, a, b), same(found, a, b)
			if t {
				s.Truth++
			}
			if f {
				s.Found++
			}
			if t && f {
				s.Both++
			}
		}
	}
	return s
}

func TestScoreClustersCountsPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + r.IntN(60)
		universe := map[uint64][]uint64{}
		var ids []uint64
		truth, found := map[uint64]uint64{}, map[uint64]uint64{}
		for i := range n {
			id := uint64(i*7 + 3)
			ids = append(ids, id)
			universe[id] = []uint64{1}
			if r.IntN(4) > 0 {
				truth[id] = uint64(r.IntN(5))
			}
			if r.IntN(4) > 0 {
				found[id] = uint64(r.IntN(5))
			}
		}
		// Labels of documents outside the universe must not count.
		found[1<<60], truth[1<<60] = 0, 0
		if got, want := scoreClusters(universe, truth, found), bruteScore(ids, truth, found); got != want {
			t.Fatalf("trial %d: scoreClusters = %+v, pair by pair %+v", trial, got, want)
		}
	}
}

func TestComponentsOfTheJoin(t *testing.T) {
	got := components([]simjoin.Pair{{A: 5, B: 9}, {A: 9, B: 2}, {A: 7, B: 8}})
	want := map[uint64]uint64{2: 2, 5: 2, 9: 2, 7: 7, 8: 7}
	if len(got) != len(want) {
		t.Fatalf("components = %v, want %v", got, want)
	}
	for id, l := range want {
		if got[id] != l {
			t.Fatalf("components = %v, want %v", got, want)
		}
	}
}

func TestReadClusterCSV(t *testing.T) {
	got, err := readClusterCSV(strings.NewReader("cluster,id\nx,10\ny,11\nx,12\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[10] != got[12] || got[10] == got[11] {
		t.Fatalf("labels = %v: 10 and 12 share x, 11 is y", got)
	}
	for _, bad := range []string{"doc,cluster\n1,a\n", "id,cluster\nnine,a\n", ""} {
		if _, err := readClusterCSV(strings.NewReader(bad)); err == nil {
			t.Errorf("readClusterCSV(%q): no error", bad)
		}
	}
}

func TestParseModesNone(t *testing.T) {
	ms, err := parseModes("none")
	if err != nil || len(ms) != 0 {
		t.Fatalf("parseModes(none) = %v, %v; want no modes", ms, err)
	}
}

// TestMissedBands: of three exact pairs the pipeline found one; of the two
// missed, the one at 0.95 is in the pairs table through the identical
// copy 9 of 3 (counted), the one at 0.52 never counted.
func TestMissedBands(t *testing.T) {
	exact := map[pairKey]float64{keyOf(1, 2): 0.6, keyOf(1, 9): 0.95, keyOf(4, 5): 0.52}
	found := pairSet{}
	found.add(1, 2)
	three := int64(3)
	docs := []tables.Doc{{DocID: 9, IdenticalTo: &three}}
	pairs := []tables.Pair{{DocA: 1, DocB: 3, Shared: 4, SketchSizeA: 12, SketchSizeB: 12, Resemblance: 0.2}}
	got := missedBands(found, exact, pairs, docs)
	for _, want := range []string{"[t, 0.55) 1 (0 counted)", "[0.55, 0.6) 0 (0 counted)", "[0.9, 1] 1 (1 counted)", "1-9 exact 0.950: shared 4 of 12 and 12, estimate 0.200"} {
		if !strings.Contains(got, want) {
			t.Errorf("missedBands = %q, want it to hold %q", got, want)
		}
	}
}

// TestFamilyShares: family 0 has 3 documents with shingles (one, 4, has
// none and is left out), 2 of them in cluster 7; family 1's lone
// labelled document and its unlabelled one are one each.
func TestFamilyShares(t *testing.T) {
	docs := []doc{{ID: 1, Name: "family-0-copy-0"}, {ID: 2, Name: "family-0-copy-1"}, {ID: 3, Name: "family-0-copy-2"},
		{ID: 4, Name: "family-0-copy-3"}, {ID: 5, Name: "family-1-copy-0"}, {ID: 6, Name: "family-1-copy-1"}, {ID: 8, Name: "page"}}
	universe := map[uint64][]uint64{1: {1}, 2: {1}, 3: {1}, 5: {1}, 6: {1}, 8: {1}}
	fams := plantedFamilies(regexp.MustCompile(`family-(\d+)-copy-`), docs, universe)
	got := familyShares(fams, map[uint64]uint64{1: 7, 3: 7, 2: 9, 9: 9, 5: 5, 8: 7}, map[string]float64{"1": 0.5})
	want := []familyShare{{Name: "0", Size: 3, Largest: 2}, {Name: "1", Size: 2, Largest: 1, Median: 0.5}}
	if !slices.Equal(got, want) {
		t.Fatalf("familyShares = %v, want %v", got, want)
	}
}

// TestMedianResemblance: of a family of three sets, pairs {1,2,3,4} and
// {1,2,3,5} resemble at 3/5, either and {1,2,3,4,5,6} at 4/6 and 4/6;
// every pair drawn is one of these, the median of such draws among them.
func TestMedianResemblance(t *testing.T) {
	sets := map[uint64][]uint64{10: {1, 2, 3, 4}, 11: {1, 2, 3, 5}, 12: {1, 2, 3, 4, 5, 6}}
	m := medianResemblance([]uint64{10, 11, 12}, sets)
	if m != 2.0/3 && m != 0.6 && m != (0.6+2.0/3)/2 {
		t.Fatalf("median %v, want 0.6, 2/3 or between", m)
	}
	if m := medianResemblance([]uint64{10, 10 + 1}, sets); m != 0.6 {
		t.Fatalf("median of one pair drawn again and again %v, want 0.6", m)
	}
}
