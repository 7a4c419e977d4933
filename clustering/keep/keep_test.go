package keep

import (
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	for _, s := range []string{"smallest-id", "longest", "earliest", "latest", "shortest-url", "max:score", "min:rank"} {
		p, err := Parse(s)
		if err != nil || p.String() != s {
			t.Errorf("Parse(%q) = %v, %v", s, p, err)
		}
	}
	for _, s := range []string{"biggest", "max:", "max", "avg:x"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}

func TestRankOrders(t *testing.T) {
	must := func(s string) Policy { p, _ := Parse(s); return p }
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
	}
	for _, c := range cases {
		p := must(c.policy)
		if a, b := p.Rank(c.better), p.Rank(c.not); !(a > b) {
			t.Errorf("%s: %+v ranks %g, not above %+v at %g", c.policy, c.better, a, c.not, b)
		}
	}
	// Ties go to the smaller doc ID, and smallest-id ranks all alike.
	if !Better(1, 3, 1, 4) || Better(1, 4, 1, 3) || !Better(2, 9, 1, 3) {
		t.Error("Better does not break ties by doc ID")
	}
	if p := must("smallest-id"); p.Rank(Doc{Tokens: 5}) != p.Rank(Doc{Tokens: 9}) {
		t.Error("smallest-id ranks documents differently")
	}
}
