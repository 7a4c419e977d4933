package sketch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// denseRef is the definition of a dense sample, computed the long way:
// every value, sorted, distinct, the K first.
func denseRef(d Dense, set []uint64) []uint32 {
	var all []uint32
	for _, x := range set {
		all = append(all, DenseValue(x))
	}
	slices.Sort(all)
	all = slices.Compact(all)
	return all[:min(d.K, len(all))]
}

// TestDenseSample: the sample is the K smallest distinct values of the
// set, whatever its size and order, appended after what dst holds.
func TestDenseSample(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	d := Dense{K: 64}
	for _, n := range []int{0, 1, 63, 64, 65, 128, 129, 1000, 5000} {
		set := make([]uint64, n)
		for i := range set {
			set[i] = r.Uint64()
		}
		want := denseRef(d, set)
		got := d.Sample([]uint32{7}, set)
		if got[0] != 7 || !slices.Equal(got[1:], want) {
			t.Errorf("n=%d: Sample = %d values, want the %d of the definition", n, len(got)-1, len(want))
		}
	}
	// Many equal values: the quickselect's three-way partition.
	set := make([]uint64, 3000)
	for i := range set {
		set[i] = uint64(i % 7)
	}
	if got, want := d.Sample(nil, set), denseRef(d, set); !slices.Equal(got, want) {
		t.Errorf("repeated values: Sample = %v, want %v", got, want)
	}
}

// TestDenseSelect: Sorted(Select(set)) is the dense sample, whatever the
// set's size.
func TestDenseSelect(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	// Sizes where the bucket of the K-th smallest value (Select's radix
	// step) holds one value and where it holds hundreds.
	for _, d := range []Dense{{K: 64}, DefaultDense} {
		for _, n := range []int{0, 1, 63, 64, 65, 128, 129, 513, 600, 1000, 5000, 100000} {
			set := make([]uint64, n)
			for i := range set {
				set[i] = r.Uint64()
			}
			sel := d.Select([]uint32{7}, set)
			if sel[0] != 7 || len(sel)-1 != min(n, d.K) {
				t.Fatalf("K=%d n=%d: Select kept %d values", d.K, n, len(sel)-1)
			}
			if got, want := Sorted(sel[1:]), denseRef(d, set); !slices.Equal(got, want) {
				t.Errorf("K=%d n=%d: Sorted(Select) = %d values, want the %d of the definition", d.K, n, len(got), len(want))
			}
		}
	}
	// Many equal values (the quickselect's three-way partition): the K
	// smallest, repeats counted.
	set := make([]uint64, 3000)
	for i := range set {
		set[i] = uint64(i % 7)
	}
	var all []uint32
	for _, x := range set {
		all = append(all, DenseValue(x))
	}
	slices.Sort(all)
	d := Dense{K: 64}
	if got := slices.Sorted(slices.Values(d.Select(nil, set))); !slices.Equal(got, all[:d.K]) {
		t.Errorf("repeated values: Select kept %v, want the %d smallest with their repeats", got, d.K)
	}
}

// TestDenseValueIsAnotherOrder: the dense sample of a set is not its
// smallest fingerprints (the sketches' order), or a pair chosen by its
// sketch estimate would be judged on the same values.
func TestDenseValueIsAnotherOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	set := make([]uint64, 10000)
	for i := range set {
		set[i] = r.Uint64()
	}
	slices.Sort(set)
	d := Dense{K: 100}
	sample := d.Sample(nil, set)
	lowest := map[uint32]bool{}
	for _, x := range set[:d.K] {
		lowest[DenseValue(x)] = true
	}
	common := 0
	for _, v := range sample {
		if lowest[v] {
			common++
		}
	}
	// Independent orders share about K*K/n = 1 value.
	if common > 10 {
		t.Errorf("the dense sample shares %d of %d values with the set's smallest fingerprints", common, d.K)
	}
}

// overlapping makes two sets of sizes na and nb sharing c values.
func overlapping(r *rand.Rand, na, nb, c int) (a, b []uint64) {
	for range c {
		x := r.Uint64()
		a, b = append(a, x), append(b, x)
	}
	for range na - c {
		a = append(a, r.Uint64())
	}
	for range nb - c {
		b = append(b, r.Uint64())
	}
	return a, b
}

// TestDenseEstimateExactOnSmallSets: when both sets have at most K
// values the samples are the sets, and the estimate is their Jaccard
// index, exact (Universe == Samples), even when their union has more
// than K.
func TestDenseEstimateExactOnSmallSets(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	d := Dense{K: 128}
	for _, c := range []struct{ na, nb, shared int }{{10, 10, 5}, {128, 100, 60}, {1, 128, 1}, {50, 50, 0}} {
		a, b := overlapping(r, c.na, c.nb, c.shared)
		e := d.Estimate(d.Sample(nil, a), d.Sample(nil, b), len(a), len(b))
		want := float64(c.shared) / float64(c.na+c.nb-c.shared)
		if e.Resemblance != want || e.Samples != c.na+c.nb-c.shared || e.Universe != e.Samples || StdErr(0.5, e.Samples, e.Universe) != 0 {
			t.Errorf("%+v: %+v, want resemblance %g exact", c, e, want)
		}
	}
	// One set larger than K: an estimate on K samples, not exact.
	a, b := overlapping(r, 129, 20, 10)
	if e := d.Estimate(d.Sample(nil, a), d.Sample(nil, b), len(a), len(b)); e.Universe != 0 || e.Samples != 128 {
		t.Errorf("a set of 129 with K = 128: %+v, want 128 samples of an unknown union", e)
	}
}

// TestDenseEstimateUnbiased: over many random pairs of long sets at a
// known resemblance, the estimates average to it and spread as StdErr
// says (hypergeometric: K of the union without replacement).
func TestDenseEstimateUnbiased(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	d := DefaultDense
	for _, c := range []struct{ na, nb, shared int }{{2000, 2000, 1333}, {3000, 1000, 800}, {600, 600, 300}} {
		t.Run(fmt.Sprintf("%d-%d-%d", c.na, c.nb, c.shared), func(t *testing.T) {
			u := c.na + c.nb - c.shared
			j := float64(c.shared) / float64(u)
			const trials = 1500
			var ests []float64
			for range trials {
				a, b := overlapping(r, c.na, c.nb, c.shared)
				e := d.Estimate(d.Sample(nil, a), d.Sample(nil, b), len(a), len(b))
				if e.Samples != d.K {
					t.Fatalf("%d samples, want K = %d", e.Samples, d.K)
				}
				ests = append(ests, e.Resemblance)
			}
			mean := 0.0
			for _, x := range ests {
				mean += x
			}
			mean /= trials
			want := StdErr(j, d.K, u)
			if math.Abs(mean-j) > 4*want/math.Sqrt(trials) {
				t.Errorf("mean estimate %.4f, resemblance %.4f (standard error of the mean %.4f)", mean, j, want/math.Sqrt(trials))
			}
			if got := sd(ests); math.Abs(got-want)/want > 0.1 {
				t.Errorf("estimates spread %.4f, StdErr says %.4f", got, want)
			}
		})
	}
}

// BenchmarkDenseSample is the dense sample's cost in phase 1 (Select),
// per document of n shingles (a news page is about 600).
func BenchmarkDenseSample(b *testing.B) {
	for _, n := range []int{100, 600, 1000, 2000, 5000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(9, 10))
			set := make([]uint64, n)
			for i := range set {
				set[i] = r.Uint64()
			}
			var dst []uint32
			b.ReportAllocs()
			for b.Loop() {
				dst = DefaultDense.Select(dst[:0], set)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/shingle")
		})
	}
}
