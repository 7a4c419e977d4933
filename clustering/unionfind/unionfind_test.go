package unionfind

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// naiveComponents labels every ID with the smallest ID reachable from it,
// by label propagation until nothing changes: slow, obviously correct.
func naiveComponents(edges [][2]uint64) map[uint64]uint64 {
	label := map[uint64]uint64{}
	for _, e := range edges {
		label[e[0]] = e[0]
		label[e[1]] = e[1]
	}
	for changed := true; changed; {
		changed = false
		for _, e := range edges {
			a, b := label[e[0]], label[e[1]]
			if a < b {
				label[e[1]] = a
				changed = true
			} else if b < a {
				label[e[0]] = b
				changed = true
			}
		}
	}
	return label
}

func randomEdges(r *rand.Rand, nodes, edges int) [][2]uint64 {
	// Sparse, scattered 64-bit IDs, as document IDs are.
	ids := make([]uint64, nodes)
	for i := range ids {
		ids[i] = r.Uint64()
	}
	out := make([][2]uint64, edges)
	for i := range out {
		out[i] = [2]uint64{ids[r.IntN(nodes)], ids[r.IntN(nodes)]}
	}
	return out
}

func TestAgainstLabelPropagation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		nodes := 1 + r.IntN(200)
		edges := randomEdges(r, nodes, r.IntN(2*nodes))
		want := naiveComponents(edges)
		u := New(0)
		for _, e := range edges {
			u.Union(e[0], e[1])
		}
		if u.Len() != len(want) {
			t.Fatalf("Len = %d, want %d", u.Len(), len(want))
		}
		for id, root := range want {
			if got := u.Find(id); got != root {
				t.Fatalf("Find(%d) = %d, want %d", id, got, root)
			}
		}
		var prev uint64
		n := 0
		u.Each(func(id, root uint64) {
			if n > 0 && id <= prev {
				t.Fatalf("Each not in ascending ID order: %d after %d", id, prev)
			}
			if want[id] != root {
				t.Fatalf("Each(%d) root %d, want %d", id, root, want[id])
			}
			prev = id
			n++
		})
		if n != len(want) {
			t.Fatalf("Each visited %d IDs, want %d", n, len(want))
		}
	}
}

func TestOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 50 {
		edges := randomEdges(r, 300, 250)
		results := make([][][2]uint64, 0, 3)
		for range 3 {
			r.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
			for i := range edges {
				if r.IntN(2) == 0 {
					edges[i][0], edges[i][1] = edges[i][1], edges[i][0]
				}
			}
			u := New(len(edges))
			for _, e := range edges {
				u.Union(e[0], e[1])
			}
			var got [][2]uint64
			u.Each(func(id, root uint64) { got = append(got, [2]uint64{id, root}) })
			results = append(results, got)
		}
		if !slices.Equal(results[0], results[1]) || !slices.Equal(results[0], results[2]) {
			t.Fatal("clustering depends on union order")
		}
	}
}

func TestUnseenAndSingletons(t *testing.T) {
	u := New(4)
	if got := u.Find(42); got != 42 {
		t.Errorf("Find(unseen) = %d, want 42", got)
	}
	if u.Len() != 0 {
		t.Error("Find added an ID")
	}
	u.Union(7, 7)
	u.Add(9)
	u.Add(9)
	if u.Len() != 2 || u.Find(7) != 7 || u.Find(9) != 9 {
		t.Errorf("singletons wrong: Len %d", u.Len())
	}
	u.Union(9, 3)
	u.Union(3, 9)
	if u.Find(9) != 3 || u.Find(3) != 3 || u.Len() != 3 {
		t.Errorf("Find(9) = %d, want 3", u.Find(9))
	}
	// Extreme IDs.
	u.Union(^uint64(0), 0)
	if u.Find(^uint64(0)) != 0 {
		t.Error("max ID not joined to 0")
	}
}

// TestLongChainWork bounds the work of long chains of unions, the input
// that would build paths of length n without union by size, and of
// finding every ID afterwards. The work of Union and Find is root's walk
// up the parent links, so before each call the test walks (read-only)
// the paths the call will take and counts their links: a bound on the
// loop iterations of root, which path halving takes one per two links.
// The count stops at a budget, so a forest gone deep fails the test
// rather than hanging it.
//
// Measured (two chains of 500,000 IDs, linked new-to-old and old-to-new,
// then a Find of every ID): 1,999,993 links for 1,999,998 calls, 1.00
// per call, and a largest depth of 1 after the unions and the finds.
// Checked by temporary mutations of unionfind.go: without union by size
// the first chain is a path, 499,999 links deep, and the depth check
// fails (the calls then follow 1.64 links each, path halving alone being
// logarithmic amortized); with neither union by size nor path halving
// the Finds go quadratic (about 1.25e11 links) and, after the depth
// check has failed, the budget stops the test at call 1,000,012. Without
// path halving alone the work stays at 1.00 per call: union by size
// keeps it linear here, as it should.
func TestLongChainWork(t *testing.T) {
	const (
		n = 500_000
		// The budget of links per call (measured 1.00), and the
		// largest depth allowed afterwards: union by size alone keeps
		// every depth at most log2 of the IDs, 20 (measured 1).
		maxPerCall = 2
		maxDepth   = 20
	)
	u := New(2 * n)
	calls, links := 0, 0
	budget := maxPerCall * 4 * n // about 4n calls
	// walk adds the depth of id's node (0 for an ID not yet seen) to
	// links, and fails once the budget is spent.
	walk := func(id uint64) {
		i, ok := u.index[id]
		if !ok {
			return
		}
		for u.parent[i] != i {
			i = u.parent[i]
			links++
			if links > budget {
				t.Fatalf("after %d calls, %d parent links followed: over the budget of %d per call", calls, links, maxPerCall)
			}
		}
	}
	union := func(a, b uint64) {
		walk(a)
		walk(b)
		u.Union(a, b)
		calls++
	}
	chainA := func(i uint64) uint64 { return i*7919 + 1 }
	chainB := func(i uint64) uint64 { return i*7919 + 2 }
	for i := uint64(1); i < n; i++ {
		union(chainA(i), chainA(i-1)) // each new ID to the previous one
	}
	for i := uint64(1); i < n; i++ {
		union(chainB(i-1), chainB(i)) // the other way round
	}
	if u.Len() != 2*n {
		t.Fatalf("Len = %d, want %d", u.Len(), 2*n)
	}
	if d := forestDepth(u); d > maxDepth {
		t.Errorf("after the unions a node is %d links deep, want <= %d", d, maxDepth)
	}
	for i := uint64(0); i < n; i++ {
		for _, id := range []uint64{chainA(i), chainB(i)} {
			walk(id)
			want := chainA(0)
			if id%7919 == 2 {
				want = chainB(0)
			}
			if got := u.Find(id); got != want {
				t.Fatalf("Find(%d) = %d, want %d", id, got, want)
			}
			calls++
		}
	}
	if d := forestDepth(u); d > maxDepth {
		t.Errorf("after the finds a node is %d links deep, want <= %d", d, maxDepth)
	}
	per := float64(links) / float64(calls)
	t.Logf("%d calls followed %d parent links, %.2f per call; largest depth %d; %.0f bytes/ID", calls, links, per, forestDepth(u), u.BytesPerID())
	if per > maxPerCall {
		t.Errorf("%.2f parent links per call, want <= %d", per, maxPerCall)
	}
}

// forestDepth returns the largest number of parent links from a node of
// u to its root, in time linear in the nodes (each depth is computed
// once, without recursion).
func forestDepth(u *UF) int {
	depth := make([]int32, len(u.parent))
	for i := range depth {
		depth[i] = -1
	}
	var path []int32
	maxD := 0
	for i := range u.parent {
		j := int32(i)
		for depth[j] < 0 && u.parent[j] != j {
			path = append(path, j)
			j = u.parent[j]
		}
		if u.parent[j] == j {
			depth[j] = 0
		}
		for k := len(path) - 1; k >= 0; k-- {
			depth[path[k]] = depth[u.parent[path[k]]] + 1
		}
		if len(path) > 0 {
			maxD = max(maxD, int(depth[path[0]]))
		}
		path = path[:0]
	}
	return maxD
}

// BenchmarkLongChain is the speed of TestLongChainWork's chains: a
// million unions that link each new ID to the previous one, then a Find
// of the end.
func BenchmarkLongChain(b *testing.B) {
	const n = 1_000_000
	for b.Loop() {
		u := New(n)
		for i := uint64(1); i < n; i++ {
			u.Union(i*7919+1, (i-1)*7919+1)
		}
		if got := u.Find((n-1)*7919 + 1); got != 1 {
			b.Fatalf("Find(end of chain) = %d, want 1", got)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/union")
}

func TestBytesPerIDIsSane(t *testing.T) {
	if got := New(0).BytesPerID(); got != 0 {
		t.Errorf("empty: %v", got)
	}
	u := New(0)
	for i := range uint64(10000) {
		u.Union(i, i/2)
	}
	if got := u.BytesPerID(); got < 24 || got > 120 {
		t.Errorf("BytesPerID = %v, outside plausible range", got)
	}
}

func Example() {
	u := New(8)
	// Links between resembling documents, in any order.
	u.Union(30, 10)
	u.Union(20, 40)
	u.Union(40, 30)
	u.Union(99, 77)
	u.Add(5) // a document with no near-duplicate
	var pairs []string
	u.Each(func(id, root uint64) { pairs = append(pairs, fmt.Sprint(id, "→", root)) })
	fmt.Println(strings.Join(pairs, " "))
	fmt.Println(u.Find(40), u.Find(123))
	// Output:
	// 5→5 10→10 20→10 30→10 40→10 77→77 99→77
	// 10 123
}

func BenchmarkUnion(b *testing.B) {
	r := rand.New(rand.NewPCG(5, 6))
	const nodes = 1 << 16
	edges := randomEdges(r, nodes, nodes)
	b.ResetTimer()
	for b.Loop() {
		u := New(nodes)
		for _, e := range edges {
			u.Union(e[0], e[1])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/nodes, "ns/union")
}

func BenchmarkFind(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	const nodes = 1 << 16
	edges := randomEdges(r, nodes, nodes)
	u := New(nodes)
	for _, e := range edges {
		u.Union(e[0], e[1])
	}
	i := 0
	for b.Loop() {
		_ = u.Find(edges[i&(nodes-1)][0])
		i++
	}
}

// BenchmarkMemory measures the heap held per ID and reports it next to
// BytesPerID's estimate, at sizes spread over a doubling of the map.
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{1 << 20, 1<<20 + 1<<19, 1<<21 - 1<<17} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var held, est float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				u := New(0)
				for i := range uint64(n) {
					u.Union(i*0x9E3779B97F4A7C15, (i/2)*0x9E3779B97F4A7C15)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				held = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
				est = u.BytesPerID()
				runtime.KeepAlive(u)
			}
			b.ReportMetric(held, "heap-B/ID")
			b.ReportMetric(est, "est-B/ID")
		})
	}
}
