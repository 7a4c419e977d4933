package simjoin_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/similarity/simjoin"
)

// bruteComponents labels BruteForce's pairs' components by their
// smallest ID, by repeated relabelling (no union-find: an independent
// way to the same answer).
func bruteComponents(recs []simjoin.Record, th float64) map[uint64]uint64 {
	labels := map[uint64]uint64{}
	pairs := simjoin.BruteForce(recs, th)
	for _, p := range pairs {
		labels[p.A], labels[p.B] = p.A, p.B
	}
	for changed := true; changed; {
		changed = false
		for _, p := range pairs {
			if m := min(labels[p.A], labels[p.B]); labels[p.A] != m || labels[p.B] != m {
				labels[p.A], labels[p.B], changed = m, m, true
			}
		}
	}
	return labels
}

// genFamilies makes families: each a base set and many variants a few
// edits from it (near-copies of near-copies are not all pairs), beside
// unrelated sets, so that components join through chains.
func genFamilies(r *rand.Rand, families, copies, minLen, maxLen int, vocab uint64, maxEdits int) []simjoin.Record {
	g := newIDs(r)
	var recs []simjoin.Record
	for range families {
		m := minLen + r.IntN(maxLen-minLen+1)
		base := drawSet(r, m, func() uint64 { return r.Uint64N(vocab) })
		for range copies {
			recs = append(recs, simjoin.Record{ID: g.next(), Tokens: set(edit(r, base, r.IntN(maxEdits+1), vocab))})
		}
	}
	recs = append(recs, genUniform(r, 3*copies, minLen, maxLen, vocab)...)
	r.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	return recs
}

func TestComponentsMatchBruteForce(t *testing.T) {
	datasets := []struct {
		name string
		gen  func(r *rand.Rand) []simjoin.Record
	}{
		{"uniform-small-vocab", func(r *rand.Rand) []simjoin.Record { return genUniform(r, 250, 1, 30, 60) }},
		{"zipf-heavy", func(r *rand.Rand) []simjoin.Record { return genZipf(r, 200, 10, 40, 300, 2.0) }},
		{"near-dup", func(r *rand.Rand) []simjoin.Record { return genNearDup(r, 60, 10, 80, 5000, 6) }},
		{"families", func(r *rand.Rand) []simjoin.Record { return genFamilies(r, 4, 60, 20, 60, 3000, 25) }},
		{"families-small-vocab", func(r *rand.Rand) []simjoin.Record { return genFamilies(r, 3, 50, 10, 40, 200, 12) }},
		{"tiny", func(r *rand.Rand) []simjoin.Record { return genTiny(r, 300, 12) }},
		{"identical", func(r *rand.Rand) []simjoin.Record { return genIdentical(r, 30, 4, 20, 40) }},
	}
	var skipped int
	for _, d := range datasets {
		t.Run(d.name, func(t *testing.T) {
			for seed := range uint64(6) {
				recs := d.gen(rand.New(rand.NewPCG(seed, 0xc0c0)))
				for _, th := range thresholds {
					got, st, err := simjoin.Components(recs, th)
					if err != nil {
						t.Fatal(err)
					}
					want := bruteComponents(recs, th)
					if !maps.Equal(got, want) {
						t.Fatalf("seed %d t=%v: %d labelled, want %d; first difference %s", seed, th, len(got), len(want), firstDifference(got, want))
					}
					if st.Candidates != st.PositionalPruned+st.Verified {
						t.Errorf("seed %d t=%v: Candidates %d != PositionalPruned %d + Verified %d", seed, th, st.Candidates, st.PositionalPruned, st.Verified)
					}
					pairs, _, _ := simjoin.Join(recs, th)
					skipped += len(pairs) - st.Results
				}
			}
		})
	}
	if skipped <= 0 {
		t.Errorf("Components made as many unions as Join has pairs: no pair was passed over as already in one component")
	}
}

func firstDifference(got, want map[uint64]uint64) string {
	for id, l := range want {
		if g, ok := got[id]; !ok || g != l {
			return fmt.Sprintf("record %d: got %d (labelled %v), want %d", id, g, ok, l)
		}
	}
	for id, l := range got {
		if _, ok := want[id]; !ok {
			return fmt.Sprintf("record %d: got %d, want no component", id, l)
		}
	}
	return "none"
}

// A family of 3,000 near-copies is 4.5 million pairs and one component:
// Components verifies about one candidate per copy.
func TestComponentsOfAFamilyVerifyLinearly(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	recs := genFamilies(r, 1, 3000, 200, 200, 1<<30, 8)
	got, st, err := simjoin.Components(recs, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	family := map[uint64]int{}
	for _, l := range got {
		family[l]++
	}
	largest := 0
	for _, n := range family {
		largest = max(largest, n)
	}
	if largest != 3000 {
		t.Errorf("largest component %d, want the family's 3000", largest)
	}
	if st.Verified > 10*3000 {
		t.Errorf("%d candidates verified for a family of 3000: quadratic, not about one per copy", st.Verified)
	}
	t.Logf("%+v", st)
}
