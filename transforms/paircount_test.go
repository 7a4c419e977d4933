package transforms

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

// TestMergeInPasses checks that phase 3's merge gives the same pairs,
// counts and order when a partition's triplets are decoded a range of
// their pair hash at a time as when they fit one pass, against pairs
// summed apart, by a map (the reference), and put in ComparePairs order.
func TestMergeInPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	docs := make([]uint64, 400)
	for i := range docs {
		docs[i] = rng.Uint64()
	}
	type key struct{ a, b uint64 }
	ranks := map[key][][2]uint16{}
	anchored := map[key]bool{}
	var held [][]byte
	for range 40 {
		var raw []byte
		for range 500 {
			a, b := docs[rng.IntN(len(docs))], docs[rng.IntN(len(docs))]
			if a == b {
				continue
			}
			a, b = min(a, b), max(a, b)
			// Ranks as real sketches give them: a pair's shared values
			// are distinct, ranked in the same order in both sketches.
			r := uint16(rng.IntN(100))
			if slices.ContainsFunc(ranks[key{a, b}], func(x [2]uint16) bool { return x[0] == r }) {
				continue
			}
			p := packed.Pair{A: a, B: b, Count: 1, SizeA: 100, SizeB: 100, RankA: r, RankB: r / 2}
			if rng.IntN(50) == 0 {
				p.Count |= anchoredBit
				anchored[key{a, b}] = true
			}
			ranks[key{a, b}] = append(ranks[key{a, b}], [2]uint16{p.RankA, p.RankB})
			raw = p.Append(raw)
		}
		held = append(held, packed.Seal(nil, packed.PackPairs(nil, raw)))
	}
	spec := sketch.Spec{Kind: sketch.Min, N: 100}
	var want []packed.Pair
	var wantAnchored []packed.Pair
	for k, r := range ranks {
		slices.SortFunc(r, func(x, y [2]uint16) int { return int(x[0]) - int(y[0]) })
		if anchored[k] {
			wantAnchored = append(wantAnchored, packed.Pair{A: k.a, B: k.b, Count: 1})
			continue
		}
		want = append(want, packed.Pair{A: k.a, B: k.b, Count: uint32(len(r)), SizeA: 100, SizeB: 100,
			MinShared: uint32(sketch.MinSharedInUnion(r, spec.N))})
	}
	slices.SortFunc(want, packed.ComparePairs)
	slices.SortFunc(wantAnchored, packed.ComparePairs)

	defer func(b int) { mergePassBudget = b }(mergePassBudget)
	for _, budget := range []int{1 << 30, 64 << 10, 4 << 10} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			mergePassBudget = budget
			passes, err := mergePasses(held)
			if err != nil {
				t.Fatal(err)
			}
			if budget < 1<<20 && passes < 3 {
				t.Fatalf("%d passes at a budget of %d bytes; want several", passes, budget)
			}
			i := 0
			it := func(b *[]byte) bool {
				if i == len(held) {
					return false
				}
				*b = held[i]
				i++
				return true
			}
			f := &mergePairsFn{Sketch: spec}
			out, n, gotAnchored, err := f.merge(it)
			if err != nil {
				t.Fatal(err)
			}
			got, err := packed.AppendPairs(nil, out)
			if err != nil {
				t.Fatal(err)
			}
			if int(n) != len(got) || !slices.Equal(got, want) {
				t.Errorf("%d passes: %d pairs (n %d), want %d, or not the same pairs in order", passes, len(got), n, len(want))
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("pair %d: %+v, want %+v", i, got[i], want[i])
					}
				}
			}
			if !slices.Equal(gotAnchored, wantAnchored) {
				t.Errorf("%d passes: %d anchored pairs, want %d, or not in order", passes, len(gotAnchored), len(wantAnchored))
			}
		})
	}
}

// TestPairRowsInRanges checks that a pair partition's rows written a
// doc_a range at a time come out as the whole partition sorted by pair
// would (the reference: every row, sorted apart), with the contained rows
// of the whole, whether the rows fit one range or take many, and that a
// document's rows are never split between two ranges.
func TestPairRowsInRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	var all []tables.Pair
	var held [][]byte
	for range 30 {
		var batch []tables.Pair
		for range 300 {
			a := int64(rng.IntN(500)) << 20 // a few hundred documents, some with many rows
			if rng.IntN(10) == 0 {
				a = 77 // one with thousands, as a family's anchor has
			}
			p := tables.Pair{DocA: a, DocB: a + 1 + int64(rng.IntN(1<<30)), Shared: int32(rng.IntN(100)), Resemblance: rng.Float64()}
			if rng.IntN(3) == 0 {
				c := rng.Float64()
				p.ContainmentAInB = &c
			}
			batch = append(batch, p)
		}
		all = append(all, batch...)
		held = append(held, sealRows(batch))
	}
	want := slices.Clone(all)
	slices.SortFunc(want, func(x, y tables.Pair) int { return cmp.Or(cmp.Compare(x.DocA, y.DocA), cmp.Compare(x.DocB, y.DocB)) })
	wantContained := tables.ContainedRows(want, 0.5)

	defer func(b int) { pairRowsPassBudget = b }(pairRowsPassBudget)
	for _, budget := range []int{1 << 20, 200, 7} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			pairRowsPassBudget = budget
			r, err := planPairRows(held, true, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			if budget < 1000 && len(r.bounds) < 10 {
				t.Fatalf("%d ranges at a budget of %d rows; want many", len(r.bounds)+1, budget)
			}
			got := make([]tables.Pair, r.n)
			for from := 0; from < r.n; from += 100 { // as tables.WriteEach calls it, a chunk at a time
				if err := r.fill(got[from:min(from+100, r.n)], from); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.drain(); err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, want, samePair) {
				t.Errorf("%d ranges: %d rows, not the %d sorted rows", len(r.bounds)+1, len(got), len(want))
			}
			if !slices.Equal(r.contained, wantContained) {
				t.Errorf("%d ranges: %d contained rows, want %d", len(r.bounds)+1, len(r.contained), len(wantContained))
			}
			for i := 1; i < len(r.bounds); i++ {
				if r.bounds[i] <= r.bounds[i-1] {
					t.Errorf("ranges out of order: %v", r.bounds)
				}
			}
		})
	}
}

func samePair(x, y tables.Pair) bool {
	f := func(p *float64) float64 {
		if p == nil {
			return -1
		}
		return *p
	}
	return x.DocA == y.DocA && x.DocB == y.DocB && x.Shared == y.Shared && x.Resemblance == y.Resemblance && f(x.ContainmentAInB) == f(y.ContainmentAInB)
}
