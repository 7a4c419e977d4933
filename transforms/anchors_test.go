package transforms

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestAnchorPairs checks ListCap.AnchorPairs against the rule written out
// naively: a document's anchors are the first AnchorDocs others of the
// list whose sizes are within anchorFit of its own, and each pair with an
// anchor on either side is called once.
func TestAnchorPairs(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for trial := range 300 {
		n, k := 2+r.IntN(60), 1+r.IntN(5)
		sizes := make([]uint32, n)
		for i := range sizes {
			switch r.IntN(3) {
			case 0: // a family's copies: sizes near 20
				sizes[i] = uint32(18 + r.IntN(5))
			case 1: // longer pages quoting it
				sizes[i] = uint32(60 + r.IntN(200))
			default:
				sizes[i] = uint32(1 + r.IntN(40))
			}
		}
		want := map[[2]int]int{}
		for y := range n {
			got := 0
			for x := 0; x < n && got < k; x++ {
				lo, hi := min(sizes[x], sizes[y]), max(sizes[x], sizes[y])
				if x != y && float64(lo) >= 0.4*float64(hi) {
					want[[2]int{min(x, y), max(x, y)}] = 1
					got++
				}
			}
		}
		got := map[[2]int]int{}
		ListCap{MaxShingleDocs: 1, AnchorDocs: k}.AnchorPairs(n, func(i int) uint32 { return sizes[i] }, func(x, y int) {
			if x >= y {
				t.Fatalf("trial %d: pair (%d, %d) not in order", trial, x, y)
			}
			got[[2]int{x, y}]++
		})
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d (n %d, k %d, sizes %v):\n got %v\nwant %v", trial, n, k, sizes, got, want)
		}
	}
}

// TestAnchorsOfAFamilyBesideLongerPages: the longer pages that come first
// in doc ID order (the full article a family's copies excerpt) do not
// take the anchors' places: each copy anchors on the first other copies.
func TestAnchorsOfAFamilyBesideLongerPages(t *testing.T) {
	sizes := []uint32{120, 118, 125, 121, 20, 19, 21, 20, 22, 20}
	anchoredOn := map[int][]int{}
	ListCap{MaxShingleDocs: 3, AnchorDocs: 2}.AnchorPairs(len(sizes), func(i int) uint32 { return sizes[i] }, func(x, y int) {
		anchoredOn[y] = append(anchoredOn[y], x)
	})
	for y := 6; y < len(sizes); y++ {
		if fmt.Sprint(anchoredOn[y]) != "[4 5]" {
			t.Errorf("copy %d is counted with %v, want the first two copies [4 5]", y, anchoredOn[y])
		}
	}
}
