package redirects

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/neardup/neardup/shuffle/packed"
)

// row is a crawl row for the reference: its URL, what it redirects to
// ("" none), whether it has content, and its sweep (a day number).
type row struct {
	url, to string
	content bool
	sweep   uint32
}

// follow is the reference: it walks each redirect's chain over the rows'
// URLs by string, one redirect at a time, as a reader would by hand.
func follow(rows []row, i int) (outcome uint8, target, hops int) {
	owner := func(u string) (int, bool) {
		best := -1
		rank := func(r row) int {
			switch {
			case r.to != "":
				return 2
			case r.content:
				return 1
			}
			return 3
		}
		for j, r := range rows {
			if r.url != u {
				continue
			}
			// The latest sweep's rows, then by rank; rows in doc ID
			// order: the first of a rank wins.
			if best < 0 || r.sweep > rows[best].sweep || r.sweep == rows[best].sweep && rank(r) < rank(rows[best]) {
				best = j
			}
		}
		return best, best >= 0
	}
	seen := map[string]bool{rows[i].url: true}
	at := rows[i].to
	for hops = 1; ; hops++ {
		if seen[at] {
			return Cycle, 0, hops
		}
		j, ok := owner(at)
		switch {
		case !ok:
			return Outside, 0, hops
		case rows[j].to == "" && rows[j].content:
			return Joined, j, hops
		case rows[j].to == "":
			return ToEmpty, 0, hops
		case hops >= MaxHops:
			return TooLong, 0, hops
		}
		seen[at] = true
		at = rows[j].to
	}
}

// resolve runs Start and Step as the pipeline does, in rounds, over the
// owners of all rows.
func resolve(rows []row) map[int]packed.RedirectHop {
	key := func(u string) uint64 {
		var h uint64 = 14695981039346656037
		for i := 0; i < len(u); i++ {
			h = (h ^ uint64(u[i])) * 1099511628211
		}
		return h
	}
	var owners []packed.URLOwner
	var pending []packed.RedirectHop
	for i, r := range rows {
		o := packed.URLOwner{URL: key(r.url), Doc: uint64(i), Sweep: r.sweep, Kind: Empty}
		switch {
		case r.to != "":
			o.Kind, o.Next = Redirect, key(r.to)
			pending = append(pending, Start(uint64(i), key(r.url), key(r.to)))
		case r.content:
			o.Kind = Content
		}
		owners = append(owners, o)
	}
	owners = Owners(owners)
	done := map[int]packed.RedirectHop{}
	for round := 0; len(pending) > 0; round++ {
		if round > MaxHops {
			panic("chains outlast MaxHops rounds")
		}
		var next []packed.RedirectHop
		for _, h := range pending {
			o, ok := Lookup(owners, h.At)
			if h = Step(h, o, ok); h.Outcome != Underway {
				done[int(h.Source)] = h
			} else {
				next = append(next, h)
			}
		}
		pending = next
	}
	return done
}

func TestChains(t *testing.T) {
	rows := []row{
		0:  {"https://a/", "", true, 0},
		1:  {"https://r1/", "https://a/", false, 0},        // one hop
		2:  {"https://r2/", "https://r1/", false, 0},       // two
		3:  {"https://self/", "https://self/", false, 0},   // a page redirecting to itself
		4:  {"https://x/", "https://y/", false, 0},         // x -> y -> x
		5:  {"https://y/", "https://x/", false, 0},         //
		6:  {"https://out/", "https://nowhere/", false, 0}, // not in the input
		7:  {"https://e/", "", false, 0},                   // empty
		8:  {"https://toe/", "https://e/", false, 0},       //
		9:  {"https://a/", "https://elsewhere/", false, 0}, // a's content wins its URL
		10: {"https://r3/", "https://a/", false, 0},        // many to one
		11: {"https://cyc-in/", "https://x/", false, 0},    // into a cycle: back at x
		// A later sweep: b's new content row wins its URL over the
		// older one (Zhu's case 1), and c, which now redirects to a,
		// over its older content (case 3).
		12: {"https://b/", "", true, 0},
		13: {"https://b/", "", true, 1},
		14: {"https://to-b/", "https://b/", false, 0},
		15: {"https://c/", "", true, 0},
		16: {"https://c/", "https://a/", false, 1},
		17: {"https://to-c/", "https://c/", false, 0},
	}
	want := map[int][3]int{ // outcome, target, hops
		1: {int(Joined), 0, 1}, 2: {int(Joined), 0, 2}, 3: {int(Cycle), 0, 1}, 4: {int(Cycle), 0, 2}, 5: {int(Cycle), 0, 2},
		6: {int(Outside), 0, 1}, 8: {int(ToEmpty), 0, 1}, 9: {int(Outside), 0, 1}, 10: {int(Joined), 0, 1}, 11: {int(Cycle), 0, 3},
		14: {int(Joined), 13, 1}, 16: {int(Joined), 0, 1}, 17: {int(Joined), 0, 2},
	}
	got := resolve(rows)
	if len(got) != len(want) {
		t.Fatalf("%d chains ended, want %d", len(got), len(want))
	}
	for i, w := range want {
		h := got[i]
		if [3]int{int(h.Outcome), int(h.Target), Hops(h)} != w {
			t.Errorf("row %d: outcome %d, target %d, %d hops; want %v", i, h.Outcome, h.Target, Hops(h), w)
		}
		if o, tg, hops := follow(rows, i); [3]int{int(o), tg, hops} != w {
			t.Errorf("row %d: the reference says %d, %d, %d; want %v", i, o, tg, hops, w)
		}
	}
}

// TestChainsMatchReference: on random crawls of short URLs (so that
// chains, cycles, shared URLs and dead ends abound), the rounds of Step
// end every redirect as the reference walks it, chains longer than
// MaxHops included.
func TestChainsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 300 {
		n := 2 + rng.IntN(40)
		urls := 1 + rng.IntN(n+5)
		u := func() string { return fmt.Sprintf("https://h/%d", rng.IntN(urls)) }
		rows := make([]row, n)
		for i := range rows {
			rows[i] = row{url: u(), content: rng.IntN(4) > 0, sweep: uint32(rng.IntN(1 + trial%3))}
			if rng.IntN(2) == 0 {
				rows[i].to = u()
			}
		}
		if trial%10 == 0 { // a long chain: 0 -> 1 -> ... -> k
			k := MaxHops - 2 + rng.IntN(5)
			rows = rows[:0]
			for i := range k {
				rows = append(rows, row{url: fmt.Sprintf("https://c/%d", i), to: fmt.Sprintf("https://c/%d", i+1)})
			}
			rows = append(rows, row{url: fmt.Sprintf("https://c/%d", k), content: true})
		}
		got := resolve(rows)
		for i, r := range rows {
			if r.to == "" {
				continue
			}
			o, tg, hops := follow(rows, i)
			h := got[i]
			if h.Outcome != o || (o == Joined && int(h.Target) != tg) || Hops(h) != hops {
				t.Fatalf("trial %d, row %d of %+v: got outcome %d target %d hops %d; the reference %d %d %d", trial, i, rows, h.Outcome, h.Target, Hops(h), o, tg, hops)
			}
		}
	}
}

func TestSweepDay(t *testing.T) {
	for sweep, want := range map[string]uint32{"1970-01-01": 0, "1970-01-02": 1, "2026-11-27": 20784, "": 0, "garbage": 0} {
		if got := SweepDay(sweep); got != want {
			t.Errorf("SweepDay(%q) = %d, want %d", sweep, got, want)
		}
	}
}

func TestTarget(t *testing.T) {
	for _, c := range [][3]string{
		{"https://a.test/x/y", "https://b.test/", "https://b.test/"},
		{"https://a.test/x/y", "/z", "https://a.test/z"},
		{"https://a.test/x/y", "z?q=1", "https://a.test/x/z?q=1"},
		{"https://a.test/x/y", "  ", ""},
		{"", "/z", "/z"},
	} {
		if got := Target(c[0], c[1]); got != c[2] {
			t.Errorf("Target(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}
