package policy

import (
	"fmt"
	"math"
	"testing"
)

func f(x float64) *float64 { return &x }

func TestParse(t *testing.T) {
	for in, want := range map[string]Policy{
		"resemblance:0.5":                  {Resemblance: 0.5},
		"containment:0.8":                  {Containment: 0.8},
		"resemblance:0.9, containment:0.8": {Resemblance: 0.9, Containment: 0.8},
		"Containment:1":                    {Containment: 1},
	} {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if back, _ := Parse(got.String()); back != got {
			t.Errorf("%q does not round trip through String: %q", in, got.String())
		}
	}
	for _, bad := range []string{"", "resemblance", "resemblance:0", "resemblance:1.5", "jaccard:0.5", "containment:x"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

// TestLinksAtTheThreshold: a pair exactly at a threshold links and one a
// hair below does not, for each measure, on both sides of the pair. The
// expectations are Broder's rule ("at least the threshold") written out,
// with fractions that are exact in binary and in decimal (4/5 is the
// double nearest 0.8, as is the literal), not the package's own result.
func TestLinksAtTheThreshold(t *testing.T) {
	below := func(x float64) float64 { return math.Nextafter(x, 0) }
	cases := []struct {
		name string
		p    Policy
		e    Estimates
		want bool
	}{
		{"resemblance at 0.5", Default, Estimates{Shared: 3, Resemblance: 3.0 / 6}, true},
		{"resemblance below 0.5", Default, Estimates{Shared: 3, Resemblance: below(0.5)}, false},
		{"resemblance at 0.8", Policy{Resemblance: 0.8}, Estimates{Resemblance: 4.0 / 5}, true},
		{"resemblance below 0.8", Policy{Resemblance: 0.8}, Estimates{Resemblance: below(4.0 / 5)}, false},
		{"resemblance at 1", Policy{Resemblance: 1}, Estimates{Resemblance: 1}, true},
		{"A in B at 0.8", Policy{Containment: 0.8}, Estimates{AInB: f(4.0 / 5), BInA: f(0.1)}, true},
		{"B in A at 0.8", Policy{Containment: 0.8}, Estimates{AInB: f(0.1), BInA: f(4.0 / 5)}, true},
		{"A in B below 0.8", Policy{Containment: 0.8}, Estimates{AInB: f(below(0.8)), BInA: f(0.1)}, false},
		{"B in A below 0.8", Policy{Containment: 0.8}, Estimates{AInB: f(0.1), BInA: f(below(0.8))}, false},
		{"containment at 1", Policy{Containment: 1}, Estimates{AInB: f(1)}, true},
		{"both, containment at its threshold", Policy{Resemblance: 0.5, Containment: 0.75}, Estimates{Resemblance: 0.25, AInB: f(3.0 / 4)}, true},
		{"both, each below", Policy{Resemblance: 0.5, Containment: 0.75}, Estimates{Resemblance: below(0.5), AInB: f(below(0.75))}, false},
	}
	for _, c := range cases {
		if got := c.p.Links(c.e); got != c.want {
			t.Errorf("%s: %v links %+v = %v, want %v", c.name, c.p, c.e, got, c.want)
		}
	}
}

// TestKeepAtTheFloors: the pairs table keeps a pair from each floor up
// (two shared values, resemblance MinResemblance, containment
// MinContainment either way) and drops one just under all of them.
func TestKeepAtTheFloors(t *testing.T) {
	below := func(x float64) float64 { return math.Nextafter(x, 0) }
	lowR, lowC := below(0.2), f(below(0.5))
	cases := []struct {
		name   string
		e      Estimates
		linked bool
		want   bool
	}{
		{"two shared values", Estimates{Shared: 2, Resemblance: 0.01, AInB: f(0.01), BInA: f(0.01)}, false, true},
		{"one shared value", Estimates{Shared: 1, Resemblance: lowR, AInB: lowC, BInA: lowC}, false, false},
		{"no containment estimate", Estimates{Shared: 1, Resemblance: lowR}, false, false},
		{"linked", Estimates{Shared: 1, Resemblance: lowR, AInB: lowC, BInA: lowC}, true, true},
		{"resemblance at 0.2", Estimates{Shared: 1, Resemblance: 1.0 / 5, AInB: lowC, BInA: lowC}, false, true},
		{"A in B at 0.5", Estimates{Shared: 1, Resemblance: lowR, AInB: f(1.0 / 2), BInA: lowC}, false, true},
		{"B in A at 0.5", Estimates{Shared: 1, Resemblance: lowR, AInB: lowC, BInA: f(1.0 / 2)}, false, true},
	}
	if MinResemblance != 0.2 || MinContainment != 0.5 {
		t.Fatalf("the floors are %g and %g; this test's cases sit at 0.2 and 0.5", MinResemblance, MinContainment)
	}
	for _, c := range cases {
		if got := Keep(c.e, c.linked); got != c.want {
			t.Errorf("%s: Keep(%+v, linked %v) = %v, want %v", c.name, c.e, c.linked, got, c.want)
		}
	}
}

func TestLinks(t *testing.T) {
	both := Policy{Resemblance: 0.5, Containment: 0.8}
	cases := []struct {
		p    Policy
		e    Estimates
		want bool
	}{
		{Default, Estimates{Resemblance: 0.5}, true},
		{Default, Estimates{Resemblance: 0.49, AInB: f(1), BInA: f(0.1)}, false},
		{Policy{Containment: 0.8}, Estimates{Resemblance: 0.1, AInB: f(0.1), BInA: f(0.85)}, true},
		{Policy{Containment: 0.8}, Estimates{Resemblance: 0.9}, false}, // no containment estimate (MIN_s)
		{both, Estimates{Resemblance: 0.6, AInB: f(0.7), BInA: f(0.7)}, true},
		{both, Estimates{Resemblance: 0.2, AInB: f(0.9), BInA: f(0.2)}, true},
		{both, Estimates{Resemblance: 0.2, AInB: f(0.7), BInA: f(0.2)}, false},
	}
	for _, c := range cases {
		if got := c.p.Links(c.e); got != c.want {
			t.Errorf("%v links %+v = %v, want %v", c.p, c.e, got, c.want)
		}
	}
}

// TestKeepCoversReclusterablePolicies: any pair a reclusterable policy
// links is kept, whatever policy the full run used.
func TestKeepCoversReclusterablePolicies(t *testing.T) {
	for a := 1; a <= 12; a++ {
		for b := 1; b <= 12; b++ {
			for shared := 1; shared <= min(a, b); shared++ {
				e := Estimates{Shared: shared, Resemblance: float64(shared) / float64(a+b-shared),
					AInB: f(float64(shared) / float64(a)), BInA: f(float64(shared) / float64(b))}
				for _, th := range []float64{MinResemblance, 0.3, 0.5, 0.8, 1} {
					for _, p := range []Policy{{Resemblance: th}, {Containment: max(th, MinContainment)}} {
						if err := p.Reclusterable(); err != nil {
							t.Fatal(err)
						}
						if p.Links(e) && !Keep(e, false) {
							t.Errorf("%v links %+v but the pairs table would not keep it", p, e)
						}
					}
				}
			}
		}
	}
	if (Policy{Resemblance: 0.1}).Reclusterable() == nil || (Policy{Containment: 0.3}).Reclusterable() == nil {
		t.Error("policies below the floors must not be reclusterable")
	}
}

func ExampleParse() {
	p, _ := Parse("resemblance:0.5,containment:0.8")
	fmt.Println(p.Links(Estimates{Resemblance: 0.1, AInB: f(0.95), BInA: f(0.1)}))
	// Output: true
}
