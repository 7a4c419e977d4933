package packed

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortsEqualComparisonSort checks the bucket sorts against
// slices.SortFunc with the same order, on sizes around the cut-offs,
// with repeated keys (a shingle in many documents, a pair seen many
// times) and with keys that are not uniform.
func TestSortsEqualComparisonSort(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{0, 1, 63, 64, 65, 1000, 20000} {
		for _, skew := range []bool{false, true} {
			ps := make([]Posting, n)
			prs := make([]Pair, n)
			for i := range ps {
				sh := r.Uint64()
				if skew {
					sh = uint64(r.IntN(5)) // few, small keys: one bucket
				}
				ps[i] = Posting{Shingle: sh, Doc: uint64(r.IntN(n + 1)), Size: uint32(i)}
				a, b := uint64(r.IntN(50)), uint64(r.IntN(50))
				if !skew {
					a, b = r.Uint64()>>24, r.Uint64()>>24
				}
				prs[i] = Pair{A: a, B: b, RankA: uint16(r.IntN(4)), Count: uint32(i)}
			}
			wantP := slices.Clone(ps)
			slices.SortStableFunc(wantP, ComparePostings)
			bucketSort(ps, make([]Posting, len(ps)), postingKey, ComparePostings)
			for i := range ps {
				if ComparePostings(ps[i], wantP[i]) != 0 {
					t.Fatalf("n=%d skew=%v: postings[%d] = %+v, want %+v", n, skew, i, ps[i], wantP[i])
				}
			}
			wantR := slices.Clone(prs)
			slices.SortStableFunc(wantR, ComparePairs)
			SortPairs(prs)
			for i := range prs {
				if ComparePairs(prs[i], wantR[i]) != 0 {
					t.Fatalf("n=%d skew=%v: pairs[%d] = %+v, want %+v", n, skew, i, prs[i], wantR[i])
				}
			}
		}
	}
}

func BenchmarkSortPostings(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	ps := make([]Posting, 500000)
	for i := range ps {
		ps[i] = Posting{Shingle: r.Uint64(), Doc: r.Uint64() >> 24}
	}
	work := make([]Posting, len(ps))
	b.Run("bucket", func(b *testing.B) {
		for range b.N {
			copy(work, ps)
			bucketSort(work, make([]Posting, len(work)), postingKey, ComparePostings)
		}
	})
	b.Run("SortFunc", func(b *testing.B) {
		for range b.N {
			copy(work, ps)
			slices.SortFunc(work, ComparePostings)
		}
	})
}

// TestSketchOrder checks bucketSort on sketch records (NewSketchSorter's
// key and order) against slices.SortStableFunc.
func TestSketchOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{0, 5, 64, 3000} {
		ss := make([]Sketch, n)
		for i := range ss {
			ss[i] = Sketch{Key: r.Uint64() >> uint(r.IntN(2)*60), Doc: uint64(r.IntN(n + 1)), Values: []uint64{uint64(i)}}
		}
		want := slices.Clone(ss)
		slices.SortStableFunc(want, func(x, y Sketch) int {
			if x.Key != y.Key {
				if x.Key < y.Key {
					return -1
				}
				return 1
			}
			return int(x.Doc) - int(y.Doc)
		})
		bucketSort(ss, make([]Sketch, len(ss)), sketchKey, compareSketches)
		for i := range ss {
			if ss[i].Key != want[i].Key || ss[i].Doc != want[i].Doc {
				t.Fatalf("n=%d: sketches[%d] = (%x, %d), want (%x, %d)", n, i, ss[i].Key, ss[i].Doc, want[i].Key, want[i].Doc)
			}
		}
	}
}

// TestRangeSorterEqualsComparisonSort adds records in batches of many
// sizes (one larger than a run) and checks that the ranges Next returns,
// one after another, are the records in slices.SortStableFunc's order,
// with keys uniform, concentrated in one range, and repeated across
// batches (a shingle in many documents).
func TestRangeSorterEqualsComparisonSort(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{0, 1, 100, 5000, 40000} {
		for _, keys := range []string{"uniform", "one range", "repeated"} {
			ps := make([]Posting, n)
			for i := range ps {
				sh := r.Uint64()
				switch keys {
				case "one range":
					sh >>= rangeBits
				case "repeated":
					sh = uint64(r.IntN(7)) << 60
				}
				ps[i] = Posting{Shingle: sh, Doc: uint64(r.IntN(n + 1)), Size: uint32(i)}
			}
			want := slices.Clone(ps)
			slices.SortStableFunc(want, ComparePostings)
			s := NewPostingSorter()
			for rest := slices.Clone(ps); len(rest) > 0; {
				k := min(len(rest), 1+r.IntN(2*runMax))
				s.Add(rest[:k])
				rest = rest[k:]
			}
			if s.Len() != n {
				t.Fatalf("n=%d %s: Len() = %d", n, keys, s.Len())
			}
			var got []Posting
			for b := s.Next(); b != nil; b = s.Next() {
				got = append(got, b...)
			}
			if len(got) != n {
				t.Fatalf("n=%d %s: %d records out", n, keys, len(got))
			}
			for i := range got {
				if ComparePostings(got[i], want[i]) != 0 {
					t.Fatalf("n=%d %s: [%d] = %+v, want %+v", n, keys, i, got[i], want[i])
				}
			}
		}
	}
}
