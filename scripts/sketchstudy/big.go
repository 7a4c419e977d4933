package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/neardup/neardup/similarity/sketch"
)

// big reports cost proxies of the sketches on a large corpus (about a
// gigabyte of real text): sketch values per document, which phases 2 and 3
// carry; the triplets phase 3 expands (a pair per two documents sharing a
// value) and, for the floors, the share of them that must travel with
// ranks (pairs of two short documents); and, over the pairs of a random
// sample of documents, the candidate pairs and those within z standard
// errors of the threshold that verification would check.
func big(ctx context.Context) error {
	if *bigGlob == "" {
		return fmt.Errorf("big mode needs -big")
	}
	const kMax = 100
	fl := sketch.Floor{M: 25, K: kMax}
	mod := sketch.Spec{Kind: sketch.Mod, N: 25}
	start := time.Now()
	docs, rows, err := readDocs(ctx, corpus{name: "big", glob: *bigGlob}, *words, func(d *doc, set []uint64) {
		sk, below := fl.Select(set)
		d.Set, d.Below, d.N = slices.Clone(sk), below, len(set)
		d.Mod = mod.Select(nil, set)
	})
	if err != nil {
		return err
	}
	g := identical(docs)
	shingles := 0
	for _, d := range docs {
		shingles += d.N
	}
	progress("big: %d rows, %d with shingles, %d representatives, read in %.0fs", rows, len(docs), len(g.reps), time.Since(start).Seconds())
	fmt.Printf("## Cost proxies on %s: %d rows, %d with shingles (mean %.0f shingles), %d after identical copies\n\n",
		*bigGlob, rows, len(docs), float64(shingles)/float64(len(docs)), len(g.reps))

	// The strategies, each a sketch of every representative. The floor
	// sketches and MIN_100 are prefixes of the floor-100 one.
	type strat struct {
		name string
		s    strategy
		sks  func() []docSketch
	}
	// A floor sketch of rate M >= 25 and floor K <= 100 is a prefix of
	// the stored one, whose rate sample holds every value <= L.
	prefix := func(m int, size func(d *doc, below int) int) func() []docSketch {
		lim := sketch.Floor{M: m}.Limit()
		return func() []docSketch {
			out := make([]docSketch, len(g.reps))
			for i, r := range g.reps {
				d := &docs[r]
				below, _ := slices.BinarySearchFunc(d.Set[:d.Below], lim, func(x, l uint64) int {
					if x <= l {
						return -1
					}
					return 1
				})
				out[i] = docSketch{vals: d.Set[:size(d, below)], below: below}
			}
			return out
		}
	}
	strats := []strat{{"mod:25", modStrategy(25), func() []docSketch {
		out := make([]docSketch, len(g.reps))
		for i, r := range g.reps {
			out[i] = docSketch{vals: docs[r].Mod}
		}
		return out
	}}}
	for _, s := range studyStrategies() {
		if s.floor.M == 0 {
			continue
		}
		if s.floor.M < 25 || s.floor.K > kMax {
			return fmt.Errorf("big: %s is not a prefix of the stored sketch", s.name)
		}
		k := s.floor.K
		strats = append(strats, strat{s.name, s, prefix(s.floor.M, func(d *doc, below int) int { return max(below, min(k, d.N)) })})
	}
	strats = append(strats, strat{"min:100", minStrategy(100), prefix(25, func(d *doc, _ int) int { return min(100, d.N) })})

	// Anchors: a random sample of the representatives.
	rng := rand.New(rand.NewPCG(7, 7))
	var anchors []int
	for i := range g.reps {
		if rng.Float64() < *sample {
			anchors = append(anchors, i)
		}
	}
	f := float64(len(anchors)) / float64(len(g.reps))
	fmt.Printf("Pairs are counted over the pairs of %d sampled documents (%.1f%%) and scaled by 1/(2·%.3f).\n\n", len(anchors), 100*f, f)
	zs, err := parseZs()
	if err != nil {
		return err
	}
	fmt.Print("| sketch | values/doc | total values | vs mod:25 | short docs (floor rules) | phase-3 triplets | of them with ranks | candidate pairs | linked on estimate |")
	for _, z := range zs {
		fmt.Printf(" uncertain z=%g | docs in one | their features / mod:25 values |", z)
	}
	fmt.Print("\n|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for range zs {
		fmt.Print("---:|---:|---:|")
	}
	fmt.Println()
	var modTotal int
	for _, st := range strats {
		t0 := time.Now()
		sks := st.sks()
		total, short := 0, 0
		for i, r := range g.reps {
			n := len(g.members[r])
			total += len(sks[i].vals) * n
			if st.s.floor.M > 0 && sks[i].below < st.s.floor.K {
				short += n
			}
		}
		if st.name == "mod:25" {
			modTotal = total
		}
		ix := buildIndex(sks, *maxDocs)
		// Triplets: every two documents sharing a kept value; with ranks
		// when both are short (pairs of floor sketches that cannot be
		// summed before the shuffle).
		var triplets, ranked int64
		for i := range ix.vals {
			ds := ix.docs[ix.start[i]:ix.start[i+1]]
			n := int64(len(ds))
			triplets += n * (n - 1) / 2
			if st.s.floor.K > 0 {
				var s int64
				for _, d := range ds {
					if sks[d].below < st.s.floor.K {
						s++
					}
				}
				ranked += s * (s - 1) / 2
			}
		}
		if st.s.spec.Kind == sketch.Min {
			ranked = triplets
		}
		workers := runtime.GOMAXPROCS(0)
		type acc struct {
			cand, linked int
			unc          []int
		}
		accs := make([]acc, workers)
		for w := range accs {
			accs[w].unc = make([]int, len(zs))
		}
		involved := make([][]bool, len(zs))
		for i := range zs {
			involved[i] = make([]bool, len(sks))
		}
		forCandidates(sks, ix, anchors, false, func(w, a, b int) {
			est, n, u, _ := st.s.estimate(sks[a], sks[b], ix.dropped)
			ac := &accs[w]
			ac.cand++
			if est >= *thresh {
				ac.linked++
			}
			for i, z := range zs {
				// Each anchor is handled by one worker: no race.
				if sketch.Uncertain(est, *thresh, z, n, u) {
					ac.unc[i]++
					involved[i][a] = true
				}
			}
		})
		var cand, linked int
		unc := make([]int, len(zs))
		for _, ac := range accs {
			cand += ac.cand
			linked += ac.linked
			for i := range zs {
				unc[i] += ac.unc[i]
			}
		}
		// The features verification must move: the whole sets of the
		// documents in an uncertain pair, each once at least, against
		// the MOD_25 sketch values phases 2-3 move today (per sampled
		// document, scaled to all).
		var anchorShingles, anchorMod int
		for _, a := range anchors {
			d := &docs[g.reps[a]]
			anchorShingles += d.N
			anchorMod += len(d.Mod)
		}
		scale := func(n int) string { return fmt.Sprintf("%.0f", float64(n)/(2*f)) }
		shortCell := "-"
		if st.s.floor.M > 0 {
			shortCell = pct(short, len(docs))
		}
		rankCell := "-"
		if ranked > 0 {
			rankCell = fmt.Sprintf("%.1f%%", 100*float64(ranked)/float64(max(1, triplets)))
		}
		fmt.Printf("| %s | %.1f | %d | %+.1f%% | %s | %d | %s | %s | %s |",
			st.name, float64(total)/float64(len(docs)), total, 100*(float64(total)/float64(modTotal)-1), shortCell,
			triplets, rankCell, scale(cand), scale(linked))
		for i := range zs {
			n, feats := 0, 0
			for _, a := range anchors {
				if involved[i][a] {
					n++
					feats += docs[g.reps[a]].N
				}
			}
			fmt.Printf(" %s | %s | %.1fx |", scale(unc[i]), pct(n, len(anchors)), float64(feats)/float64(max(1, anchorMod)))
		}
		fmt.Println()
		progress("big: %s in %.0fs", st.name, time.Since(t0).Seconds())
	}
	return nil
}
