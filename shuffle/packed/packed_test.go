package packed

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var (
		ps                     []Posting
		prs                    []Pair
		sks                    []Sketch
		es                     []Edge
		as                     []Assignment
		cs                     []ClusterStat
		arcs                   []Arc
		cls                    []ClusterLink
		b1, b2, b3, b4, b5, b6 []byte
		b7, b8                 []byte
	)
	for i := 0; i < 100; i++ {
		p := Posting{rng.Uint64(), rng.Uint64(), rng.Uint32(), uint16(rng.Uint32())}
		ps, b1 = append(ps, p), p.Append(b1)
		pr := Pair{rng.Uint64(), rng.Uint64(), rng.Uint32(), rng.Uint32(), rng.Uint32(), uint16(rng.Uint32()), uint16(rng.Uint32()), rng.Uint32()}
		prs, b2 = append(prs, pr), pr.Append(b2)
		sk := Sketch{Key: rng.Uint64(), Doc: rng.Uint64(), Rank: rank(rng, i%3), Site: rng.Uint64(), Features: rng.Uint32()}
		for range rng.IntN(5) {
			sk.Values = append(sk.Values, rng.Uint64())
		}
		for range rng.IntN(3) {
			sk.Supers = append(sk.Supers, rng.Uint64())
		}
		sks, b3 = append(sks, sk), sk.Append(b3)
		e := Edge{rng.Uint64(), rng.Uint64(), rng.Float64(), rank(rng, i%3), i%2 == 0}
		es, b4 = append(es, e), e.Append(b4)
		a := Assignment{rng.Uint64(), rng.Uint64(), NoDoc, rng.Uint64(), rng.Float64(), rng.Uint64(), uint16(rng.Uint32()), uint8(i % 6)}
		as, b5 = append(as, a), a.Append(b5)
		c := ClusterStat{rng.Uint64(), rng.Uint32(), rng.Uint32(), rng.Uint32(), rng.Float64(), rng.Float64(), rng.Uint64(), rng.Float64(), rng.Float64(), rng.Uint32(), i%2 == 1}
		cs, b6 = append(cs, c), c.Append(b6)
		a7 := Arc{rng.Uint64(), rng.Uint64()}
		arcs, b7 = append(arcs, a7), a7.Append(b7)
		l := ClusterLink{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Float64()}
		cls, b8 = append(cls, l), l.Append(b8)
	}
	check := func(name string, want, got any, err error) {
		t.Helper()
		if err != nil || !reflect.DeepEqual(want, got) {
			t.Errorf("%s: round trip differs (err %v)", name, err)
		}
	}
	got1, err := AppendPostings(nil, b1)
	check("postings", ps, got1, err)
	got2, err := AppendPairs(nil, b2)
	check("pairs", prs, got2, err)
	got3, err := AppendSketches(nil, b3)
	check("sketches", sks, got3, err)
	got4, err := AppendEdges(nil, b4)
	check("edges", es, got4, err)
	got5, err := AppendAssignments(nil, b5)
	check("assignments", as, got5, err)
	got6, err := AppendClusterStats(nil, b6)
	check("cluster stats", cs, got6, err)
	got7, err := AppendArcs(nil, b7)
	check("arcs", arcs, got7, err)
	var mems []Member
	var b9 []byte
	for i := range 50 {
		m := Member{Doc: rng.Uint64(), Comp: rng.Uint64(), IdenticalTo: NoDoc, Rank: rank(rng, i%3)}
		for range i % 4 {
			m.Values = append(m.Values, rng.Uint64())
		}
		mems, b9 = append(mems, m), m.Append(b9)
	}
	got9, err := AppendMembers(nil, b9)
	check("members", mems, got9, err)
	if _, err := AppendMembers(nil, b9[:len(b9)-1]); err == nil {
		t.Error("a truncated members batch decoded without error")
	}
	var drs []DocRank
	var b11 []byte
	for i := range 50 {
		d := DocRank{Doc: rng.Uint64(), Rank: rank(rng, i%4)}
		drs, b11 = append(drs, d), d.Append(b11)
	}
	got11, err := AppendDocRanks(nil, b11)
	check("doc ranks", drs, got11, err)
	if _, err := AppendDocRanks(nil, b11[:len(b11)-1]); err == nil {
		t.Error("a truncated doc ranks batch decoded without error")
	}
	if _, err := AppendEdges(nil, b4[:len(b4)-1]); err == nil {
		t.Error("a truncated edges batch decoded without error")
	}
	var owners []URLOwner
	var hops []RedirectHop
	var b12, b13 []byte
	for i := range 50 {
		o := URLOwner{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint32(), uint8(i % 3)}
		owners, b12 = append(owners, o), o.Append(b12)
		h := RedirectHop{Source: rng.Uint64(), At: rng.Uint64(), Target: rng.Uint64(), Outcome: uint8(i % 5)}
		for range i % 4 {
			h.Visited = append(h.Visited, rng.Uint64())
		}
		hops, b13 = append(hops, h), h.Append(b13)
	}
	got12, err := AppendURLOwners(nil, b12)
	check("URL owners", owners, got12, err)
	got13, err := AppendRedirectHops(nil, b13)
	check("redirect hops", hops, got13, err)
	if _, err := AppendRedirectHops(nil, b13[:len(b13)-1]); err == nil {
		t.Error("a truncated redirect hops batch decoded without error")
	}
	got8, err := AppendClusterLinks(nil, b8)
	check("cluster links", cls, got8, err)
	if _, err := AppendArcs(nil, b7[:len(b7)-1]); err == nil {
		t.Error("a truncated arcs batch decoded without error")
	}

	var scs []SiteCount
	var b10 []byte
	for i := range 50 {
		c := SiteCount{Site: rng.Uint64(), Value: rng.Uint64(), Docs: rng.Uint32(), Pages: i%3 == 0}
		scs, b10 = append(scs, c), c.Append(b10)
	}
	got10, err := AppendSiteCounts(nil, b10)
	check("site counts", scs, got10, err)
	if _, err := AppendSiteCounts(nil, b10[:len(b10)-1]); err == nil {
		t.Error("a truncated site counts batch decoded without error")
	}

	if _, err := AppendPostings(nil, b1[:len(b1)-1]); err == nil {
		t.Error("a truncated postings batch decoded without error")
	}
	if _, err := AppendSketches(nil, b3[:len(b3)-3]); err == nil {
		t.Error("a truncated sketch batch decoded without error")
	}
}

// rank is a --keep rank of n values (none: nil, as smallest-id has it),
// with a Missing one (-Inf) among them.
func rank(rng *rand.Rand, n int) []float64 {
	if n == 0 {
		return nil
	}
	r := make([]float64, n)
	for i := range r {
		r[i] = rng.NormFloat64()
	}
	r[rng.IntN(n)] = math.Inf(-1)
	return r
}

func TestPartitionSpreadsStructuredKeys(t *testing.T) {
	// Doc IDs are file<<40|row: consecutive rows must spread evenly.
	const n, parts = 64000, 16
	counts := make([]int, parts)
	for row := uint64(0); row < n; row++ {
		counts[Partition(3<<40|row, parts)]++
	}
	for p, c := range counts {
		if c < n/parts*9/10 || c > n/parts*11/10 {
			t.Errorf("partition %d holds %d of %d keys, want about %d", p, c, n, n/parts)
		}
	}
}

func TestSealOpen(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var batch []byte
	for i := range 5000 {
		batch = Pair{A: uint64(i / 7), B: rng.Uint64() >> 20, Count: 1, SizeA: 40, SizeB: 41}.Append(batch)
	}
	sealed := Seal(nil, batch)
	if len(sealed) >= len(batch)/2 {
		t.Errorf("sealed %d bytes of sorted pairs into %d: want at least 2x smaller", len(batch), len(sealed))
	}
	got, err := Open([]byte("keep"), sealed)
	if err != nil || string(got[:4]) != "keep" || !reflect.DeepEqual(got[4:], batch) {
		t.Fatalf("Open(Seal(batch)) differs from batch (err %v)", err)
	}
	if empty, err := Open(nil, Seal(nil, nil)); err != nil || len(empty) != 0 {
		t.Errorf("empty batch: %v, %v", empty, err)
	}
	sealed[len(sealed)/2] ^= 0xff
	sealed = sealed[:len(sealed)-3]
	if _, err := Open(nil, sealed); err == nil {
		t.Error("Open accepted a damaged batch")
	}
}
