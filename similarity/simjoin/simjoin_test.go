package simjoin_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/similarity/simjoin"
)

// scramble hides the vocabulary index behind a 64-bit value, so the token
// order Join receives has nothing to do with frequency and the rank remap
// is exercised (splitmix64 finalizer, a bijection).
func scramble(v uint64) uint64 {
	v += 0x9e3779b97f4a7c15
	v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9
	v = (v ^ (v >> 27)) * 0x94d049bb133111eb
	return v ^ (v >> 31)
}

func set(vocab []uint64) []uint64 {
	out := make([]uint64, len(vocab))
	for i, v := range vocab {
		out[i] = scramble(v)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ids hands out distinct, unordered record IDs.
type ids struct {
	r    *rand.Rand
	used map[uint64]bool
}

func newIDs(r *rand.Rand) *ids { return &ids{r: r, used: map[uint64]bool{}} }

func (g *ids) next() uint64 {
	for {
		id := g.r.Uint64N(1 << 40)
		if !g.used[id] {
			g.used[id] = true
			return id
		}
	}
}

func drawSet(r *rand.Rand, n int, draw func() uint64) []uint64 {
	seen := map[uint64]bool{}
	var v []uint64
	for tries := 0; len(v) < n && tries < 20*n; tries++ {
		x := draw()
		if !seen[x] {
			seen[x] = true
			v = append(v, x)
		}
	}
	return v
}

func genUniform(r *rand.Rand, n, minLen, maxLen int, vocab uint64) []simjoin.Record {
	g := newIDs(r)
	recs := make([]simjoin.Record, n)
	for i := range recs {
		m := minLen + r.IntN(maxLen-minLen+1)
		recs[i] = simjoin.Record{ID: g.next(), Tokens: set(drawSet(r, m, func() uint64 { return r.Uint64N(vocab) }))}
	}
	return recs
}

func genZipf(r *rand.Rand, n, minLen, maxLen int, vocab uint64, s float64) []simjoin.Record {
	g := newIDs(r)
	z := rand.NewZipf(r, s, 1, vocab-1)
	recs := make([]simjoin.Record, n)
	for i := range recs {
		m := minLen + r.IntN(maxLen-minLen+1)
		recs[i] = simjoin.Record{ID: g.next(), Tokens: set(drawSet(r, m, z.Uint64))}
	}
	return recs
}

// edit derives a near duplicate: each of k edits deletes, inserts or
// substitutes one token.
func edit(r *rand.Rand, base []uint64, k int, vocab uint64) []uint64 {
	v := slices.Clone(base)
	for range k {
		switch op := r.IntN(3); {
		case op == 0 && len(v) > 1:
			i := r.IntN(len(v))
			v = slices.Delete(v, i, i+1)
		case op == 1:
			v = append(v, r.Uint64N(vocab))
		default:
			v[r.IntN(len(v))] = r.Uint64N(vocab)
		}
	}
	return v
}

// genNearDup makes clusters: a base set and a few variants a few edits
// away, plus unrelated noise, all from one vocabulary.
func genNearDup(r *rand.Rand, clusters, minLen, maxLen int, vocab uint64, maxEdits int) []simjoin.Record {
	g := newIDs(r)
	var recs []simjoin.Record
	for range clusters {
		m := minLen + r.IntN(maxLen-minLen+1)
		base := drawSet(r, m, func() uint64 { return r.Uint64N(vocab) })
		recs = append(recs, simjoin.Record{ID: g.next(), Tokens: set(base)})
		for range 1 + r.IntN(4) {
			recs = append(recs, simjoin.Record{ID: g.next(), Tokens: set(edit(r, base, r.IntN(maxEdits+1), vocab))})
		}
	}
	r.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	return recs
}

func genTiny(r *rand.Rand, n int, vocab uint64) []simjoin.Record {
	recs := genUniform(r, n, 1, 3, vocab)
	recs[0].Tokens = nil // empty records never pair
	recs[1].Tokens = []uint64{}
	return recs
}

func genIdentical(r *rand.Rand, groups, copies, maxLen int, vocab uint64) []simjoin.Record {
	g := newIDs(r)
	var recs []simjoin.Record
	for range groups {
		toks := set(drawSet(r, 1+r.IntN(maxLen), func() uint64 { return r.Uint64N(vocab) }))
		for range copies {
			recs = append(recs, simjoin.Record{ID: g.next(), Tokens: toks})
		}
	}
	r.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
	return recs
}

var thresholds = []float64{0.3, 0.5, 0.6, 2.0 / 3, 0.75, 0.8, 0.9, 1.0}

func fmtPairs(ps []simjoin.Pair) string {
	var b strings.Builder
	for i, p := range ps {
		if i == 20 {
			fmt.Fprintf(&b, " ... (%d)", len(ps))
			break
		}
		fmt.Fprintf(&b, " %d-%d:%d/%.4f", p.A, p.B, p.Overlap, p.Jaccard)
	}
	return b.String()
}

// check compares Join with BruteForce and the Stats invariants, and
// returns the stats.
func check(t *testing.T, name string, recs []simjoin.Record, th float64) simjoin.Stats {
	t.Helper()
	got, st, err := simjoin.Join(recs, th)
	if err != nil {
		t.Fatalf("%s t=%v: %v", name, th, err)
	}
	want := simjoin.BruteForce(recs, th)
	if !slices.Equal(got, want) {
		t.Fatalf("%s t=%v: Join differs from BruteForce\n got %d:%s\nwant %d:%s", name, th, len(got), fmtPairs(got), len(want), fmtPairs(want))
	}
	if st.Results != len(got) {
		t.Errorf("%s t=%v: Stats.Results = %d, len(pairs) = %d", name, th, st.Results, len(got))
	}
	if st.Candidates != st.PositionalPruned+st.SuffixPruned+st.Verified {
		t.Errorf("%s t=%v: Candidates %d != PositionalPruned %d + SuffixPruned %d + Verified %d", name, th, st.Candidates, st.PositionalPruned, st.SuffixPruned, st.Verified)
	}
	if st.Verified < st.Results {
		t.Errorf("%s t=%v: Verified %d < Results %d", name, th, st.Verified, st.Results)
	}
	for _, p := range got {
		if p.A >= p.B {
			t.Fatalf("%s t=%v: pair %d-%d not ordered", name, th, p.A, p.B)
		}
	}
	return st
}

func TestJoinMatchesBruteForce(t *testing.T) {
	type dataset struct {
		name string
		gen  func(r *rand.Rand) []simjoin.Record
	}
	datasets := []dataset{
		{"uniform-small-vocab", func(r *rand.Rand) []simjoin.Record { return genUniform(r, 250, 1, 30, 60) }},
		{"uniform-long", func(r *rand.Rand) []simjoin.Record { return genUniform(r, 150, 40, 120, 400) }},
		{"zipf", func(r *rand.Rand) []simjoin.Record { return genZipf(r, 250, 5, 60, 2000, 1.2) }},
		{"zipf-heavy", func(r *rand.Rand) []simjoin.Record { return genZipf(r, 200, 10, 40, 300, 2.0) }},
		{"near-dup", func(r *rand.Rand) []simjoin.Record { return genNearDup(r, 60, 10, 80, 5000, 6) }},
		{"near-dup-small-vocab", func(r *rand.Rand) []simjoin.Record { return genNearDup(r, 60, 20, 60, 150, 8) }},
		{"tiny", func(r *rand.Rand) []simjoin.Record { return genTiny(r, 300, 12) }},
		{"identical", func(r *rand.Rand) []simjoin.Record { return genIdentical(r, 30, 4, 20, 40) }},
	}
	var total simjoin.Stats
	for _, d := range datasets {
		t.Run(d.name, func(t *testing.T) {
			for seed := range uint64(6) {
				r := rand.New(rand.NewPCG(seed, 0x5eed))
				recs := d.gen(r)
				for _, th := range thresholds {
					st := check(t, fmt.Sprintf("seed %d", seed), recs, th)
					total.Candidates += st.Candidates
					total.PositionalPruned += st.PositionalPruned
					total.SuffixPruned += st.SuffixPruned
					total.Verified += st.Verified
					total.Results += st.Results
				}
			}
		})
	}
	t.Logf("total stats over all datasets: %+v", total)
}

// A Jaccard that is exactly the threshold must be reported, whatever the
// rounding of t/(1+t)·n and t·n inside the filters; one ulp above it must
// not.
func TestExactThreshold(t *testing.T) {
	cases := []struct {
		a, b []uint64
		th   float64
	}{
		{[]uint64{1, 2, 3}, []uint64{2, 3, 4}, 0.5},
		{[]uint64{1, 2, 3, 4}, []uint64{1, 2, 3, 4, 5}, 0.8},
		{[]uint64{1, 2, 3, 4, 5, 6, 7, 8, 9}, []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 0.9},
		{[]uint64{1, 2, 3, 4, 5, 6}, []uint64{4, 5, 6, 7, 8, 9, 10}, 0.3},
		{[]uint64{1, 2}, []uint64{2, 3}, 1.0 / 3},
		{[]uint64{7}, []uint64{7}, 1.0},
	}
	for _, c := range cases {
		recs := []simjoin.Record{{ID: 2, Tokens: c.a}, {ID: 1, Tokens: c.b}}
		got, _, err := simjoin.Join(recs, c.th)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].A != 1 || got[0].B != 2 || got[0].Jaccard != c.th {
			t.Errorf("%v vs %v at t=%v: got %+v, want one pair with Jaccard %v", c.a, c.b, c.th, got, c.th)
		}
		if c.th < 1 {
			if got, _, _ := simjoin.Join(recs, math.Nextafter(c.th, 2)); len(got) != 0 {
				t.Errorf("%v vs %v just above t=%v: got %+v, want none", c.a, c.b, c.th, got)
			}
		}
	}

	// Every (|x|, |y|, overlap) up to 14, with t set to the pair's exact
	// Jaccard, among unrelated records that perturb the frequency order.
	r := rand.New(rand.NewPCG(7, 7))
	for lx := 1; lx <= 14; lx++ {
		for ly := 1; ly <= 14; ly++ {
			for o := 1; o <= min(lx, ly); o++ {
				perm := r.Perm(lx + ly - o)
				toks := make([]uint64, len(perm))
				for i, p := range perm {
					toks[i] = uint64(p)
				}
				x := set(toks[:lx])
				y := set(toks[lx-o:])
				recs := []simjoin.Record{{ID: 100, Tokens: x}, {ID: 200, Tokens: y}}
				for k := range 4 {
					recs = append(recs, simjoin.Record{ID: uint64(300 + k), Tokens: set(drawSet(r, 1+r.IntN(10), func() uint64 { return r.Uint64N(40) }))})
				}
				th := float64(o) / float64(lx+ly-o)
				got, _, err := simjoin.Join(recs, th)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.ContainsFunc(got, func(p simjoin.Pair) bool { return p.A == 100 && p.B == 200 }) {
					t.Fatalf("|x|=%d |y|=%d overlap=%d: pair at exactly t=%v missing", lx, ly, o, th)
				}
				check(t, fmt.Sprintf("boundary %d/%d/%d", lx, ly, o), recs, th)
				if th < 1 {
					check(t, fmt.Sprintf("boundary+ %d/%d/%d", lx, ly, o), recs, math.Nextafter(th, 2))
				}
			}
		}
	}
}

func TestOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	recs := genNearDup(r, 80, 10, 60, 500, 6)
	want, wantSt, err := simjoin.Join(recs, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		shuffled := slices.Clone(recs)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		got, st, err := simjoin.Join(shuffled, 0.7)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) || st != wantSt {
			t.Fatalf("result depends on input order: %+v vs %+v", st, wantSt)
		}
	}
}

func TestErrors(t *testing.T) {
	ok := []simjoin.Record{{ID: 1, Tokens: []uint64{1, 2}}, {ID: 2, Tokens: []uint64{1, 2}}}
	for _, th := range []float64{0, -0.5, 1.0000001, math.NaN(), math.Inf(1)} {
		if _, _, err := simjoin.Join(ok, th); err == nil {
			t.Errorf("threshold %v: no error", th)
		}
		if got := simjoin.BruteForce(ok, th); got != nil {
			t.Errorf("BruteForce threshold %v: got %v", th, got)
		}
	}
	dup := []simjoin.Record{{ID: 5, Tokens: []uint64{1, 2}}, {ID: 6, Tokens: []uint64{3}}, {ID: 5, Tokens: []uint64{9}}}
	if _, _, err := simjoin.Join(dup, 0.5); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate IDs: err = %v", err)
	}
	// Duplicate IDs are an error even when one of the records is empty.
	dupEmpty := []simjoin.Record{{ID: 5, Tokens: []uint64{1, 2}}, {ID: 5}}
	if _, _, err := simjoin.Join(dupEmpty, 0.5); err == nil {
		t.Error("duplicate IDs with an empty record: no error")
	}
	for _, toks := range [][]uint64{{2, 1}, {1, 1}} {
		if _, _, err := simjoin.Join([]simjoin.Record{{ID: 1, Tokens: toks}}, 0.5); err == nil {
			t.Errorf("tokens %v: no error", toks)
		}
	}
}

func TestEmptyAndTrivialInputs(t *testing.T) {
	for _, recs := range [][]simjoin.Record{
		nil,
		{{ID: 1, Tokens: []uint64{1}}},
		{{ID: 1}, {ID: 2}, {ID: 3, Tokens: []uint64{}}},
	} {
		got, st, err := simjoin.Join(recs, 0.5)
		if err != nil || got == nil || len(got) != 0 || st != (simjoin.Stats{}) {
			t.Errorf("%v: got %v %+v %v, want no pairs", recs, got, st, err)
		}
	}
	in := []simjoin.Record{{ID: 9, Tokens: []uint64{5, 6, 7}}, {ID: 3, Tokens: []uint64{5, 6, 7}}}
	before := slices.Clone(in[0].Tokens)
	got, _, err := simjoin.Join(in, 1)
	if err != nil || len(got) != 1 || got[0] != (simjoin.Pair{A: 3, B: 9, Jaccard: 1, Overlap: 3}) {
		t.Errorf("identical sets at t=1: got %+v, %v", got, err)
	}
	if !slices.Equal(in[0].Tokens, before) || in[0].ID != 9 {
		t.Error("Join modified its input")
	}
}

// The point of ppjoin+ over a plain prefix join: the positional and
// suffix filters must discard candidates before verification.
func TestFiltersPrune(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 11))
	recs := genNearDup(r, 120, 40, 120, 300, 12)
	var suffix int
	for _, th := range []float64{0.5, 0.8, 0.9} {
		st := check(t, "near-dup", recs, th)
		t.Logf("t=%v: %+v", th, st)
		if st.Candidates <= st.Verified {
			t.Errorf("t=%v: Candidates %d <= Verified %d: no pruning", th, st.Candidates, st.Verified)
		}
		if st.PositionalPruned == 0 {
			t.Errorf("t=%v: positional filter pruned nothing", th)
		}
		suffix += st.SuffixPruned
	}
	if suffix == 0 {
		t.Error("suffix filter pruned nothing")
	}
}

func ExampleJoin() {
	records := []simjoin.Record{
		{ID: 1, Tokens: []uint64{10, 20, 30, 40, 50}},
		{ID: 2, Tokens: []uint64{10, 20, 30, 40, 60}},
		{ID: 3, Tokens: []uint64{70, 80, 90}},
		{ID: 4, Tokens: []uint64{10, 20, 30, 40}},
	}
	pairs, stats, err := simjoin.Join(records, 0.8)
	if err != nil {
		panic(err)
	}
	for _, p := range pairs {
		fmt.Printf("%d-%d: overlap %d, Jaccard %.2f\n", p.A, p.B, p.Overlap, p.Jaccard)
	}
	fmt.Println("results:", stats.Results)
	// Output:
	// 1-4: overlap 4, Jaccard 0.80
	// 2-4: overlap 4, Jaccard 0.80
	// results: 2
}

// benchRecords builds the benchmark corpus: shingle-like sets of 100-300
// tokens drawn from a Zipf vocabulary (a few common shingles, a long tail
// of rare ones), 5% of which are near duplicates of another record.
func benchRecords(n int) []simjoin.Record {
	r := rand.New(rand.NewPCG(2008, 2008))
	const vocab = 1 << 22
	z := rand.NewZipf(r, 1.1, 1, vocab-1)
	g := newIDs(r)
	recs := make([]simjoin.Record, 0, n)
	bases := make([][]uint64, 0, n)
	for len(recs) < n {
		if len(bases) > 0 && r.IntN(100) < 5 {
			base := bases[r.IntN(len(bases))]
			v := edit(r, base, 1+r.IntN(len(base)/15), vocab)
			recs = append(recs, simjoin.Record{ID: g.next(), Tokens: set(v)})
			continue
		}
		base := drawSet(r, 100+r.IntN(201), z.Uint64)
		bases = append(bases, base)
		recs = append(recs, simjoin.Record{ID: g.next(), Tokens: set(base)})
	}
	return recs
}

func BenchmarkJoin20k(b *testing.B) {
	recs := benchRecords(20000)
	b.ResetTimer()
	var st simjoin.Stats
	start := time.Now()
	for b.Loop() {
		var err error
		if _, st, err = simjoin.Join(recs, 0.8); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start).Seconds() / float64(b.N)
	b.ReportMetric(float64(st.Results), "pairs")
	b.ReportMetric(float64(st.Results)/elapsed, "pairs/s")
	b.ReportMetric(float64(len(recs))/elapsed, "records/s")
	b.ReportMetric(float64(st.Candidates), "candidates")
	b.ReportMetric(float64(st.Verified), "verified")
}

// Overlap must say yes exactly when the true overlap reaches alpha, with
// the true overlap then, whatever alpha; and its filters must prune.
func TestOverlapMatchesIntersection(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	recs := genNearDup(r, 40, 5, 300, 2000, 40)
	pruned := 0
	for i := range recs {
		for k := i + 1; k < len(recs) && k < i+30; k++ {
			x, y := recs[i].Tokens, recs[k].Tokens
			truth := 0
			for _, a := range x {
				if slices.Contains(y, a) {
					truth++
				}
			}
			for _, alpha := range []int{0, 1, truth, truth + 1, simjoin.MinOverlap(0.5, len(x), len(y)), min(len(x), len(y)) + 1} {
				o, ok := simjoin.Overlap(x, y, alpha)
				if ok != (truth >= alpha) || (ok && o != truth) {
					t.Fatalf("Overlap(%d, %d tokens, alpha %d) = %d, %v; the overlap is %d", len(x), len(y), alpha, o, ok, truth)
				}
				if !ok && o == 0 && truth > 0 && alpha <= min(len(x), len(y)) {
					pruned++ // the suffix filter decided before any merge
				}
			}
		}
	}
	if pruned == 0 {
		t.Fatal("no pair was pruned before its merge")
	}
}

func TestMinOverlap(t *testing.T) {
	// J = 2/(3+3-2) = 0.5: two shared tokens of three each is just enough.
	if got := simjoin.MinOverlap(0.5, 3, 3); got != 2 {
		t.Fatalf("MinOverlap(0.5, 3, 3) = %d, want 2", got)
	}
	if got := simjoin.MinOverlap(1, 4, 4); got != 4 {
		t.Fatalf("MinOverlap(1, 4, 4) = %d, want 4", got)
	}
}
