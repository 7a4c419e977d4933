package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestStdErrValues(t *testing.T) {
	for _, tc := range []struct {
		r    float64
		n, u int
		want float64
	}{
		{0.5, 16, 0, 0.125},                         // sqrt(.25/16)
		{0.5, 100, 0, 0.05},                         // sqrt(.25/100)
		{0.2, 25, 0, 0.08},                          // sqrt(.16/25)
		{0.5, 16, 31, 0.125 * math.Sqrt(15.0/30.0)}, // half the union: fpc
		{0.5, 16, 16, 0},                            // the whole union
		{0.5, 20, 16, 0},
		{0, 9, 0, 0},
		{1, 9, 0, 0},
	} {
		if got := StdErr(tc.r, tc.n, tc.u); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("StdErr(%v, %d, %d) = %v, want %v", tc.r, tc.n, tc.u, got, tc.want)
		}
	}
	if !math.IsInf(StdErr(0.5, 0, 0), 1) {
		t.Error("no samples: want +Inf")
	}
}

func TestSamples(t *testing.T) {
	for _, tc := range []struct {
		spec                 Spec
		shared, sizeA, sizeB int
		n, u                 int
	}{
		{Spec{Mod, 25}, 3, 10, 12, 19, 0},
		{Spec{Mod, 1}, 3, 10, 12, 19, 19},
		{Spec{Min, 100}, 40, 100, 100, 100, 0},
		{Spec{Min, 100}, 40, 60, 70, 90, 90}, // both whole: the union
		{Spec{Min, 100}, 10, 60, 100, 100, 0},
		{Spec{Min, 100}, 0, 30, 100, 100, 0},
		{Spec{MinHash, 128}, 50, 128, 128, 128, 0},
		{Spec{MinHash, 128}, 0, 0, 128, 0, 0},
	} {
		if n, u := tc.spec.Samples(tc.shared, tc.sizeA, tc.sizeB); n != tc.n || u != tc.u {
			t.Errorf("%v.Samples(%d, %d, %d) = %d, %d; want %d, %d", tc.spec, tc.shared, tc.sizeA, tc.sizeB, n, u, tc.n, tc.u)
		}
	}
}

// TestStdErrMatchesSpread: for each kind, the spread of the estimate over
// random permutations (fresh random fingerprints) matches StdErr at the
// exact resemblance, given the sample sizes the estimates rest on.
func TestStdErrMatchesSpread(t *testing.T) {
	const trials = 2000
	r := rand.New(rand.NewPCG(21, 21))
	c, pa, pb := 300, 150, 150 // J = 0.5, |U| = 600
	exact := 0.5
	for _, spec := range []Spec{{Min, 50}, {Min, 200}, {MinHash, 64}, {Mod, 10}} {
		var est, pred []float64
		var va, vb []uint64
		for range trials {
			a, b := pair(r, c, pa, pb)
			va, vb = spec.Select(va, a), spec.Select(vb, b)
			shared := IntersectCount(va, vb)
			var e float64
			switch spec.Kind {
			case Min:
				e = MinResemblance(va, vb, spec.N)
			case MinHash:
				e = MinHashResemblance(shared, spec.N)
			default:
				e = ModResemblance(shared, len(va), len(vb))
			}
			n, u := spec.Samples(shared, len(va), len(vb))
			if u == 0 && spec.Kind != MinHash {
				u = c + pa + pb // the true union: what the correction needs
			}
			est = append(est, e)
			pred = append(pred, StdErr(exact, n, u)*StdErr(exact, n, u))
		}
		mean, _ := meanSE(pred)
		want, got := math.Sqrt(mean), sd(est)
		if math.Abs(got-want) > 0.08*want {
			t.Errorf("%v: SD %.4f over %d trials, StdErr predicts %.4f", spec, got, trials, want)
		} else {
			t.Logf("%v: SD %.4f, StdErr %.4f", spec, got, want)
		}
	}
}

// TestUncertainCoverage: an estimate of a pair whose resemblance is the
// threshold falls outside z standard errors about as often as a normal
// law says (z=2: about 5%), for few samples and many.
func TestUncertainCoverage(t *testing.T) {
	const trials = 4000
	r := rand.New(rand.NewPCG(22, 22))
	for _, k := range []int{16, 64} {
		f := Floor{M: 25, K: k}
		out := 0
		for range trials {
			a, b := pair(r, 200, 100, 100) // J = 0.5
			sa, _ := f.Select(a)
			sb, _ := f.Select(b)
			e := f.Compare(sa, sb)
			if !Uncertain(e.Resemblance, 0.5, 2, e.Samples, e.Universe) {
				out++
			}
		}
		share := float64(out) / trials
		// Discreteness makes small samples' tails lumpy: accept 1%..9%.
		if share < 0.01 || share > 0.09 {
			t.Errorf("K=%d: %.3f of estimates at J=t outside 2 SE, want about 0.05", k, share)
		} else {
			t.Logf("K=%d: %.3f outside 2 SE", k, share)
		}
	}
	if Uncertain(1, 0.5, 2, 3, 0) != true {
		t.Error("3 samples all shared should stay uncertain at z=2")
	}
	if Uncertain(1, 0.5, 2, 100, 0) != false {
		t.Error("100 samples all shared are certain")
	}
	if Uncertain(0.9, 0.5, 2, 5, 5) != false {
		t.Error("the whole union is certain")
	}
}

func ExampleStdErr() {
	// A MOD_25 pair of short pages: 2 shared of 3 sampled union values.
	n, u := Spec{Mod, 25}.Samples(2, 2, 3)
	fmt.Printf("estimate %.2f from %d samples, SE at 0.5: %.2f\n", ModResemblance(2, 2, 3), n, StdErr(0.5, n, u))
	// Output: estimate 0.67 from 3 samples, SE at 0.5: 0.29
}
