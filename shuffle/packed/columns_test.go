package packed

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomTriplets are pair triplets as phase 3 sends them: pairs of the
// documents of 20 files of 20,000 rows (crawl.DocID: file << 40 | row), some met several times (MIN_s: one triplet per
// shared shingle), a pair of the largest IDs, and A > B once (not made,
// but the format must not depend on it).
func randomTriplets(r *rand.Rand, n int) []Pair {
	ps := make([]Pair, n)
	for i := range ps {
		a, b := r.Uint64N(20)<<40|r.Uint64N(20000), r.Uint64N(20)<<40|r.Uint64N(20000)
		if i > 0 && r.IntN(3) == 0 {
			a, b = ps[i-1].A, ps[i-1].B // the same pair again
		} else if a > b {
			a, b = b, a
		}
		ps[i] = Pair{A: a, B: b, Count: uint32(r.IntN(30)), SizeA: uint32(r.IntN(200)), SizeB: uint32(r.IntN(200)),
			RankA: uint16(r.IntN(1 << 16)), RankB: uint16(r.IntN(100)), MinShared: uint32(r.Uint32())}
	}
	if n >= 2 {
		ps[0] = Pair{A: 1<<64 - 2, B: 1<<64 - 1, Count: 1<<32 - 1}
		ps[1] = Pair{A: 9, B: 3}
	}
	return ps
}

// TestPackedPairsRoundTrip checks that AppendPackedPairs gives back the
// pairs PackPairs was given, sorted by A, after what dst already holds.
func TestPackedPairsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range []int{0, 1, 2, 3, 100, 29000} {
		ps := randomTriplets(r, n)
		var raw []byte
		for _, p := range ps {
			raw = p.Append(raw)
		}
		packed := PackPairs(nil, raw)
		before := []Pair{{A: 7, B: 8}}
		got, err := AppendPackedPairs(slices.Clone(before), packed)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		want := append(slices.Clone(before), ps...)
		if len(got) != len(want) {
			t.Fatalf("n=%d: %d pairs back, want %d", n, len(got), len(want))
		}
		if got[0] != before[0] {
			t.Fatalf("n=%d: dst's pair became %+v", n, got[0])
		}
		for i := 2; i < len(got); i++ {
			if got[i].A < got[i-1].A {
				t.Fatalf("n=%d: [%d].A = %d after %d: not sorted by A", n, i, got[i].A, got[i-1].A)
			}
		}
		full := func(x, y Pair) int {
			return cmp.Or(cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B), cmp.Compare(x.RankA, y.RankA), cmp.Compare(x.RankB, y.RankB),
				cmp.Compare(x.Count, y.Count), cmp.Compare(x.SizeA, y.SizeA), cmp.Compare(x.SizeB, y.SizeB), cmp.Compare(x.MinShared, y.MinShared))
		}
		slices.SortFunc(got, full)
		slices.SortFunc(want, full)
		if !slices.Equal(got, want) {
			t.Fatalf("n=%d: the pairs' other fields differ", n)
		}
	}
}

// TestPackedPairsCorrupt checks that a cut or padded batch is an error,
// not pairs.
func TestPackedPairsCorrupt(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	var raw []byte
	for _, p := range randomTriplets(r, 50) {
		raw = p.Append(raw)
	}
	b := PackPairs(nil, raw)
	for _, bad := range [][]byte{b[:len(b)-1], b[:len(b)/2], append(slices.Clone(b), 0), {0xff}, {200}} {
		if _, err := AppendPackedPairs(nil, bad); err == nil {
			t.Errorf("a batch of %d bytes (of %d) decoded without an error", len(bad), len(b))
		}
	}
}

// TestPackedPairsSmaller checks the point of packing: sealed, a batch of
// MOD_m triplets (counts of one to three, sketch sizes fixed per
// document, no ranks) takes at most three quarters of the bytes it takes
// sealed as Append lays it out. (The pairs shuffle of a gigabyte of grown
// real text went from 670 to 439 MB.)
func TestPackedPairsSmaller(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	var raw []byte
	for _, p := range randomTriplets(r, 29000) {
		p.Count, p.SizeA, p.SizeB = uint32(1+r.IntN(3)), uint32(p.A%97+20), uint32(p.B%97+20)
		p.RankA, p.RankB, p.MinShared = 0, 0, 0
		raw = p.Append(raw)
	}
	plain, packed := len(Seal(nil, raw)), len(Seal(nil, PackPairs(nil, raw)))
	if 4*packed > 3*plain {
		t.Errorf("sealed: %d bytes packed, %d plain; want at most three quarters", packed, plain)
	}
	t.Logf("29,000 triplets: %d bytes raw, %d sealed, %d packed and sealed", len(raw), plain, packed)
}
