package policy

import (
	"fmt"
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
