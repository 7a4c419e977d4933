package keep

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, s := range []string{"smallest-id", "longest", "earliest", "latest", "shortest-url", "static-url", "host-suffix:.uk", "max:score", "min:rank",
		"max:popularity,static-url,shortest-url", "host-suffix:.uk,longest", "static-url,host-suffix:example.com,earliest"} {
		p, err := Parse(s)
		if err != nil || p.String() != s {
			t.Errorf("Parse(%q) = %v, %v", s, p, err)
		}
	}
	if p, err := Parse(" static-url , HOST-suffix:.UK. "); err == nil {
		t.Errorf("Parse accepted an upper-case rule name: %v", p)
	}
	if p, _ := Parse("static-url, host-suffix:.UK."); p.String() != "static-url,host-suffix:.uk" {
		t.Errorf("spaces and the suffix's case: %q", p)
	}
	for _, s := range []string{"biggest", "max:", "max", "avg:x", "host-suffix:", "host-suffix:.", "longest,longest",
		"max:a,min:b", "smallest-id,longest", "longest,smallest-id", "longest,", ",longest"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
	p, _ := Parse("static-url,min:price,longest")
	if p.NeedsColumn() != "price" || !p.Ranked() {
		t.Errorf("%v: column %q, ranked %v", p, p.NeedsColumn(), p.Ranked())
	}
	if p, _ := Parse(""); p.Ranked() || p.String() != SmallestID || p.Rank(Doc{Tokens: 5}) != nil {
		t.Errorf("empty policy %v ranks", p)
	}
}

func TestRankOrders(t *testing.T) {
	must := func(s string) Policy {
		p, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		policy      string
		better, not Doc
	}{
		{"longest", Doc{Tokens: 10}, Doc{Tokens: 9}},
		{"earliest", Doc{Date: "2019-07-15T10:00:00Z"}, Doc{Date: "2019-07-15T10:00:01Z"}},
		{"earliest", Doc{Date: "2019-07-15"}, Doc{Date: ""}},
		{"latest", Doc{Date: "2020-01-01 00:00:00"}, Doc{Date: "2019-12-31T23:59:59.5Z"}},
		{"shortest-url", Doc{URL: "https://a.b/"}, Doc{URL: "https://a.b/c"}},
		{"shortest-url", Doc{URL: "https://a.b/c"}, Doc{}},
		{"max:s", Doc{Score: 2, HasScore: true}, Doc{Score: 1, HasScore: true}},
		{"max:s", Doc{Score: -5, HasScore: true}, Doc{}},
		{"min:s", Doc{Score: 1, HasScore: true}, Doc{Score: 2, HasScore: true}},
		{"min:s", Doc{Score: 1, HasScore: true}, Doc{Score: math.NaN(), HasScore: true}},
		{"static-url", Doc{URL: "https://a.b/very/long/page.html"}, Doc{URL: "https://a.b/?p=1"}},
		{"static-url", Doc{URL: "https://a.b/p;jsessionid=F00"}, Doc{}},
		{"host-suffix:.uk", Doc{URL: "https://news.example.co.uk/a"}, Doc{URL: "https://example.com/a"}},
		{"host-suffix:.uk", Doc{URL: "https://example.com/a"}, Doc{URL: "not a url"}},
		// Each rule breaks the ties of the one before it, and only those.
		{"max:s,static-url", Doc{Score: 2, HasScore: true, URL: "https://a.b/?x"}, Doc{Score: 1, HasScore: true, URL: "https://a.b/"}},
		{"max:s,static-url", Doc{Score: 1, HasScore: true, URL: "https://a.b/long-static"}, Doc{Score: 1, HasScore: true, URL: "https://a.b/?x"}},
		{"max:s,static-url,shortest-url", Doc{Score: 1, HasScore: true, URL: "https://a.b/x"}, Doc{Score: 1, HasScore: true, URL: "https://a.b/xy"}},
		{"host-suffix:.uk,longest", Doc{URL: "https://a.co.uk/", Tokens: 5}, Doc{URL: "https://a.com/", Tokens: 500}},
		{"host-suffix:.uk,longest", Doc{URL: "https://b.co.uk/", Tokens: 6}, Doc{URL: "https://a.co.uk/", Tokens: 5}},
	}
	for _, c := range cases {
		p := must(c.policy)
		if a, b := p.Rank(c.better), p.Rank(c.not); !Better(a, 9, b, 1) || Better(b, 1, a, 9) {
			t.Errorf("%s: %+v ranks %v, not above %+v at %v", c.policy, c.better, a, c.not, b)
		}
	}
	// Ties go to the smaller doc ID, and smallest-id ranks all alike.
	if !Better(Rank{1}, 3, Rank{1}, 4) || Better(Rank{1}, 4, Rank{1}, 3) || !Better(Rank{2}, 9, Rank{1}, 3) || !Better(Rank{1, 0}, 9, Rank{1, -1}, 3) {
		t.Error("Better does not compare rule by rule, then by doc ID")
	}
	if p := must("smallest-id"); !Better(p.Rank(Doc{Tokens: 5}), 1, p.Rank(Doc{Tokens: 9}), 2) {
		t.Error("smallest-id ranks documents differently")
	}
}

func TestStaticAndHosts(t *testing.T) {
	for u, want := range map[string]bool{
		"https://example.com/":                       true,
		"https://example.com/a/b.html#top":           true,
		"http://example.com/a;v=2/b":                 true, // a path parameter, not a session
		"https://example.com/?":                      false,
		"https://example.com/a?id=3":                 false,
		"https://example.com/a;jsessionid=0AF3":      false,
		"https://example.com/a;JSESSIONID=0AF3?x":    false,
		"https://example.com/shop;sid=9/item":        false,
		"https://example.com/x;foo=1;PHPSESSID=abcd": false,
	} {
		if got, ok := Static(u); !ok || got != want {
			t.Errorf("Static(%q) = %v, %v; want %v", u, got, ok, want)
		}
	}
	for _, u := range []string{"", "relative/path", "::"} {
		if _, ok := Static(u); ok {
			t.Errorf("Static(%q) judged a URL", u)
		}
	}
	for _, c := range []struct {
		url, suffix string
		want        bool
	}{
		{"https://news.bbc.co.uk/x", ".uk", true},
		{"https://news.bbc.co.uk/x", "uk", true},
		{"https://WWW.Example.COM./x", "example.com", true},
		{"https://example.com:8080/", "example.com", true},
		{"https://badexample.com/", "example.com", false},
		{"https://example.com/uk", ".uk", false},
		{"https://example.org/", ".com", false},
	} {
		host, ok := Host(c.url)
		if !ok || HasSuffix(host, c.suffix) != c.want {
			t.Errorf("host of %q (%q, %v) ends in %q: %v, want %v", c.url, host, ok, c.suffix, !c.want, c.want)
		}
	}
}

// TestPartialsMerge: the ranks recluster joins from its two sources (the
// docs table's rules, the input column's) are the ranks of the whole
// document, for random documents and policies.
func TestPartialsMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	urls := []string{"", "https://a.co.uk/x", "https://b.com/?q=1", "https://c.com/p;sid=1", "https://d.org/long/path"}
	dates := []string{"", "2020-01-01", "2019-05-06T07:08:09Z", "junk"}
	specs := []string{"max:s", "min:s,longest", "static-url,max:s,shortest-url", "host-suffix:.uk,latest,min:s", "earliest,static-url"}
	for i := range 2000 {
		p, err := Parse(specs[i%len(specs)])
		if err != nil {
			t.Fatal(err)
		}
		d := Doc{Tokens: rng.Int64N(50), URL: urls[rng.IntN(len(urls))], Date: dates[rng.IntN(len(dates))], Score: float64(rng.IntN(5)), HasScore: rng.IntN(3) > 0}
		want := p.Rank(d)
		for _, got := range []Rank{Merge(p.Partial(d, false), p.Partial(d, true)), Merge(p.Partial(d, true), p.Partial(d, false))} {
			if !slices.Equal(got, want) {
				t.Fatalf("%v, %+v: merged %v, whole %v", p, d, got, want)
			}
		}
		for _, x := range want {
			if math.IsNaN(x) {
				t.Fatalf("%v, %+v: rank %v holds NaN", p, d, want)
			}
		}
	}
	// A document the column alone knows (no docs row: an empty page) has
	// its other rules Missing.
	p, _ := Parse("longest,max:s")
	if got := Merge(nil, p.Partial(Doc{Score: 3, HasScore: true}, true)); !slices.Equal(got, Rank{Missing, 3}) {
		t.Errorf("column only: %v", got)
	}
}
