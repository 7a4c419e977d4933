package rankgroup

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/similarity/bloom"
)

// universe returns n distinct random fingerprints, unsorted.
func universe(r *rand.Rand, n int) []uint64 {
	seen := make(map[uint64]bool, n)
	out := make([]uint64, 0, n)
	for len(out) < n {
		if x := r.Uint64(); !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func filter(fs []uint64) bloom.Filter {
	fs = slices.Clone(fs)
	slices.Sort(fs)
	return bloom.New(fs, bloom.DefaultBitsPerFeature)
}

// variant returns base with the features at positions from..to replaced
// by fresh ones.
func variant(r *rand.Rand, base []uint64, from, to int) []uint64 {
	v := slices.Clone(base)
	copy(v[from:to], universe(r, to-from))
	return v
}

type want struct {
	group  int
	anchor bool
}

func expect(t *testing.T, got []Member, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("%d members for %d docs", len(got), len(wants))
	}
	for i, w := range wants {
		g := got[i]
		if g.Group != w.group || g.Anchor != w.anchor {
			t.Errorf("doc %d: group %d anchor %v, want group %d anchor %v", i, g.Group, g.Anchor, w.group, w.anchor)
		}
		if g.Anchor && (g.Resemblance != 1 || g.Containment != 1) {
			t.Errorf("doc %d: anchor with resemblance %v containment %v", i, g.Resemblance, g.Containment)
		}
	}
}

func TestGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	x, y, z := universe(r, 600), universe(r, 400), universe(r, 500)
	x1, x2 := variant(r, x, 0, 60), variant(r, x, 540, 600) // resemblance 0.82 with x, 0.67 with each other
	y1 := variant(r, y, 0, 40)
	docs := []Doc{
		{3, filter(y1)},   // 0: ties with doc 4, and comes first
		{5, filter(x1)},   // 1
		{1, filter(z)},    // 2: alone
		{2, filter(x)},    // 3
		{3, filter(y)},    // 4
		{0.5, filter(x2)}, // 5: the best of the x family
	}
	got, err := Group(docs, policy.Default)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, []want{{0, true}, {5, false}, {2, true}, {5, false}, {0, false}, {5, true}})
	for i, wantRes := range map[int]float64{1: 480.0 / 720, 3: 540.0 / 660, 4: 360.0 / 440} {
		if g := got[i]; math.Abs(g.Resemblance-wantRes) > 0.05 || math.Abs(g.Containment-wantRes*2/(1+wantRes)) > 0.05 {
			t.Errorf("doc %d: resemblance %.3f containment %.3f against its anchor, want about %.3f and %.3f", i, g.Resemblance, g.Containment, wantRes, wantRes*2/(1+wantRes))
		}
	}

	// A stricter policy splits the x family: x1 and x2 each link to x
	// only, and still form one component through it.
	got, _ = Group(docs, policy.Policy{Resemblance: 0.75})
	expect(t, got, []want{{0, true}, {5, false}, {2, true}, {5, false}, {0, false}, {5, true}})
	got, _ = Group(docs, policy.Policy{Resemblance: 0.9})
	expect(t, got, []want{{0, true}, {1, true}, {2, true}, {3, true}, {4, true}, {5, true}})
}

// TestChain: groups are connected components, not cliques.
func TestChain(t *testing.T) {
	u := universe(rand.New(rand.NewPCG(2, 2)), 1600)
	a, b, c := u[0:1000], u[300:1300], u[600:1600] // a-b and b-c 0.54, a-c 0.25
	docs := []Doc{{7, filter(c)}, {9, filter(a)}, {8, filter(b)}}
	got, err := Group(docs, policy.Default)
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, []want{{0, true}, {0, false}, {0, false}})
	if got[1].Resemblance > 0.35 {
		t.Errorf("a against c: resemblance %.3f, want about 0.25", got[1].Resemblance)
	}
	// Without b, a and c are apart.
	got, _ = Group([]Doc{docs[0], docs[1]}, policy.Default)
	expect(t, got, []want{{0, true}, {1, true}})
}

// TestContainment: a short document inside a long one links under a
// containment policy, not under resemblance; containment is the member's
// in the anchor.
func TestContainment(t *testing.T) {
	u := universe(rand.New(rand.NewPCG(3, 3)), 1000)
	long, short := filter(u), filter(u[200:600])
	docs := []Doc{{2, long}, {1, short}}
	got, _ := Group(docs, policy.Default)
	expect(t, got, []want{{0, true}, {1, true}})
	got, _ = Group(docs, policy.Policy{Containment: 0.8})
	expect(t, got, []want{{1, false}, {1, true}})
	if m := got[0]; math.Abs(m.Containment-0.4) > 0.05 || math.Abs(m.Resemblance-0.4) > 0.05 {
		t.Errorf("the long document against the short anchor: %+v, want containment and resemblance 0.4", m)
	}
	docs[0].Rank = 0
	got, _ = Group(docs, policy.Policy{Containment: 0.8})
	expect(t, got, []want{{0, true}, {0, false}})
	if m := got[1]; m.Containment != 1 {
		t.Errorf("the short document against the long anchor: %+v, want containment 1", m)
	}
}

func TestEdgeCases(t *testing.T) {
	if got, err := Group(nil, policy.Default); err != nil || len(got) != 0 {
		t.Errorf("no docs: %v, %v", got, err)
	}
	u := universe(rand.New(rand.NewPCG(4, 4)), 300)
	empty := bloom.New(nil, bloom.DefaultBitsPerFeature)
	// Empty documents are alone, even two of them; equal ranks go to
	// the lowest index.
	got, err := Group([]Doc{{1, empty}, {1, filter(u)}, {1, empty}, {1, filter(u)}}, policy.Policy{Resemblance: 0.5, Containment: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, got, []want{{0, true}, {1, true}, {2, true}, {1, false}})
	if _, err := Group([]Doc{{0, filter(u)}, {math.NaN(), filter(u)}}, policy.Default); err == nil {
		t.Error("a NaN rank was accepted")
	}
	if _, err := Group([]Doc{{0, filter(u)}, {1, bloom.New(slices.Sorted(slices.Values(u)), 4)}}, policy.Default); err == nil {
		t.Error("filters of different K were accepted")
	}
	if _, err := Group([]Doc{{0, bloom.Filter{N: 1, K: 6}}}, policy.Default); err == nil {
		t.Error("a filter without words was accepted")
	}
	// Infinite ranks order like any others.
	got, _ = Group([]Doc{{math.Inf(1), filter(u)}, {math.Inf(-1), filter(u)}}, policy.Default)
	expect(t, got, []want{{1, false}, {1, true}})
}

// corpus returns n documents of 300 to 1,000 features in families of
// near-duplicates, with ranks in list order and some ties.
func corpus(r *rand.Rand, n int) ([][]uint64, []float64) {
	var bases [][]uint64
	feats := make([][]uint64, n)
	ranks := make([]float64, n)
	for i := range feats {
		if len(bases) == 0 || r.IntN(3) == 0 {
			bases = append(bases, universe(r, 300+r.IntN(701)))
		}
		base := bases[r.IntN(len(bases))]
		k := r.IntN(len(base) / 2) // up to half replaced
		from := r.IntN(len(base) - k + 1)
		v := variant(r, base, from, from+k)
		if r.IntN(4) == 0 { // some are cut short or extended
			v = v[:len(v)*3/4]
		} else if r.IntN(4) == 0 {
			v = append(v, universe(r, len(v)/3)...)
		}
		slices.Sort(v)
		feats[i] = v
		ranks[i] = float64(i / 3)
	}
	return feats, ranks
}

// reference is Group the plain way: every pair, one goroutine, labels
// merged by relabelling.
func reference(t *testing.T, docs []Doc, p policy.Policy) []Member {
	n := len(docs)
	label := make([]int, n)
	for i := range label {
		label[i] = i
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			e, err := bloom.Compare(docs[i].Filter, docs[j].Filter)
			if err != nil {
				t.Fatal(err)
			}
			if p.Links(policy.Estimates{Resemblance: e.Resemblance, AInB: &e.AInB, BInA: &e.BInA}) && label[i] != label[j] {
				old, nw := max(label[i], label[j]), min(label[i], label[j])
				for k := range label {
					if label[k] == old {
						label[k] = nw
					}
				}
			}
		}
	}
	out := make([]Member, n)
	for i := range n {
		a := -1
		for j := range n {
			if label[j] == label[i] && (a < 0 || docs[j].Rank < docs[a].Rank) {
				a = j
			}
		}
		e, _ := bloom.Compare(docs[i].Filter, docs[a].Filter)
		out[i] = Member{Group: a, Anchor: a == i, Resemblance: e.Resemblance, Containment: e.AInB}
		if a == i {
			out[i].Resemblance, out[i].Containment = 1, 1
		}
	}
	return out
}

// TestMatchesReference: the parallel, size-bounded pair loop gives what
// comparing every pair serially does, on any number of cores.
func TestMatchesReference(t *testing.T) {
	feats, ranks := corpus(rand.New(rand.NewPCG(5, 5)), 300)
	docs := make([]Doc, len(feats))
	for i := range docs {
		docs[i] = Doc{ranks[i], filter(feats[i])}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, p := range []policy.Policy{policy.Default, {Resemblance: 0.8}, {Containment: 0.8}, {Resemblance: 0.6, Containment: 0.9}} {
		want := reference(t, docs, p)
		groups, grouped := 0, 0
		for i, m := range want {
			if m.Anchor {
				groups++
			}
			if m.Group != i {
				grouped++
			}
		}
		t.Logf("%s: %d groups of %d docs, %d docs grouped under another", p, groups, len(docs), grouped)
		if grouped == 0 || groups == 1 {
			t.Fatalf("%s: a corpus without structure (%d groups)", p, groups)
		}
		for _, procs := range []int{1, 2, 8} {
			runtime.GOMAXPROCS(procs)
			got, err := Group(docs, p)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("%s, GOMAXPROCS %d: differs from the serial reference", p, procs)
			}
		}
	}
}

// BenchmarkGroup1000 groups 1,000 documents of 300 to 1,000 features,
// building their filters first, as a results page of 1,000 hits would.
func BenchmarkGroup1000(b *testing.B) {
	feats, ranks := corpus(rand.New(rand.NewPCG(6, 6)), 1000)
	docs := make([]Doc, len(feats))
	for _, p := range []policy.Policy{policy.Default, {Containment: 0.8}} {
		b.Run(p.String(), func(b *testing.B) {
			for b.Loop() {
				for i := range docs {
					docs[i] = Doc{ranks[i], bloom.New(feats[i], bloom.DefaultBitsPerFeature)}
				}
				if _, err := Group(docs, p); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
		})
	}
}
