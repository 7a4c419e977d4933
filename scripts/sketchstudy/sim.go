package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// randomPair returns two sorted sets of random fingerprints with c shared
// values and pa, pb of their own (fresh values: a fresh random
// permutation of the shingles each time).
func randomPair(r *rand.Rand, c, pa, pb int) (a, b []uint64) {
	for range c {
		x := r.Uint64()
		a, b = append(a, x), append(b, x)
	}
	for range pa {
		a = append(a, r.Uint64())
	}
	for range pb {
		b = append(b, r.Uint64())
	}
	slices.Sort(a)
	slices.Sort(b)
	return a, b
}

// simRun draws trials pairs of size n each at resemblance about j and
// returns the exact resemblance and, per strategy, the estimates and the
// mean sketch values per document (the same pairs for every strategy).
func simRun(r *rand.Rand, sks []strategy, n int, j float64, trials int) (exact float64, est [][]float64, values []float64) {
	c := int(math.Round(2 * float64(n) * j / (1 + j)))
	exact = float64(c) / float64(2*n-c)
	est, values = make([][]float64, len(sks)), make([]float64, len(sks))
	for range trials {
		a, b := randomPair(r, c, n-c, n-c)
		for i, s := range sks {
			sa, sb := s.sketchOf(a), s.sketchOf(b)
			e, _, _, _ := s.estimate(sa, sb, nil)
			est[i] = append(est[i], e)
			values[i] += float64(len(sa.vals)+len(sb.vals)) / 2 / float64(trials)
		}
	}
	return exact, est, values
}

func meanSD(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(xs)-1))
}

// simulate prints, by set size, the bias and spread of each sketch's
// estimate against the exact Jaccard of random sets, and how often a pair
// on either side of the threshold lands on the wrong side.
func simulate() {
	r := rand.New(rand.NewPCG(25, 25))
	sizes := []int{10, 25, 50, 100, 200, 400, 800, 1600, 3200}
	sks := []strategy{modStrategy(25), floorStrategy(25, 8), floorStrategy(25, 16), floorStrategy(25, 32), floorStrategy(25, 64), floorStrategy(25, 100), minStrategy(100)}
	head := func(title string) {
		fmt.Printf("%s\n\n| shingles per doc |", title)
		for _, s := range sks {
			fmt.Printf(" %s |", s.name)
		}
		fmt.Printf("\n|---:|")
		for range sks {
			fmt.Printf("---:|")
		}
		fmt.Println()
	}
	t := *thresh
	head(fmt.Sprintf("### Bias (mean estimate - exact) and SD at J = 0.5, |A| = |B|, %d pairs per cell; in brackets the SD Floor.StdDev predicts", *trials))
	var values [][]float64
	for _, n := range sizes {
		fmt.Printf("| %d |", n)
		exact, est, v := simRun(r, sks, n, 0.5, *trials)
		values = append(values, v)
		for i, s := range sks {
			mean, sd := meanSD(est[i])
			cell := fmt.Sprintf(" %+.3f / %.3f", mean-exact, sd)
			if s.floor.K > 0 {
				cell += fmt.Sprintf(" [%.3f]", s.floor.StdDev(exact, 2*n-int(math.Round(2*float64(n)*0.5/1.5))))
			}
			fmt.Printf("%s |", cell)
		}
		fmt.Println()
	}
	fmt.Println()
	head("### Mean sketch values per document")
	for i, n := range sizes {
		fmt.Printf("| %d |", n)
		for _, v := range values[i] {
			fmt.Printf(" %.1f |", v)
		}
		fmt.Println()
	}
	fmt.Println()
	for _, j := range []float64{0.3, 0.4, 0.6, 0.7} {
		what := "false links: P(estimate >= %g) at J = %g"
		if j >= t {
			what = "misses: P(estimate < %g) at J = %g"
		}
		head("### " + fmt.Sprintf(what, t, j))
		for _, n := range sizes {
			fmt.Printf("| %d |", n)
			_, ests, _ := simRun(r, sks, n, j, *trials)
			for _, est := range ests {
				wrong := 0
				for _, e := range est {
					if (e >= t) != (j >= t) {
						wrong++
					}
				}
				fmt.Printf(" %.3f |", float64(wrong)/float64(len(est)))
			}
			fmt.Println()
		}
		fmt.Println()
	}
}
