// Package policy decides which document pairs link into clusters. Broder
// clusters on resemblance ("roughly the same") and notes that containment
// ("roughly contained") serves other uses, and that a different policy
// needs only the final phase redone; this package is that decision, shared
// by the full pipeline and by recluster.
package policy

import (
	"fmt"
	"strconv"
	"strings"
)

// Policy links a pair when its estimated resemblance reaches Resemblance,
// or when either document is contained in the other at least Containment.
// A zero threshold is not used; at least one is set.
type Policy struct {
	Resemblance float64
	Containment float64
}

// Default is Broder's: resemblance 0.5.
var Default = Policy{Resemblance: 0.5}

// DefaultContained is the containment threshold of the contained table
// when the policy does not set one.
const DefaultContained = 0.8

// The pairs table keeps every pair that shares two or more sketch values,
// plus single-value pairs that reach these floors, so that recluster can
// redo phase 4 exactly for any policy at or above them.
const (
	MinResemblance = 0.2
	MinContainment = 0.5
)

// Parse reads "resemblance:0.5", "containment:0.8" or both, comma-separated.
func Parse(s string) (Policy, error) {
	var p Policy
	for _, part := range strings.Split(s, ",") {
		kind, val, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok {
			return p, fmt.Errorf("policy %q: want resemblance:T or containment:T", part)
		}
		t, err := strconv.ParseFloat(val, 64)
		if err != nil || t <= 0 || t > 1 {
			return p, fmt.Errorf("policy %q: threshold must be a number in (0, 1]", part)
		}
		switch strings.ToLower(kind) {
		case "resemblance":
			p.Resemblance = t
		case "containment":
			p.Containment = t
		default:
			return p, fmt.Errorf("policy %q: unknown measure %q (resemblance or containment)", part, kind)
		}
	}
	return p, nil
}

// String is the policy in the form Parse reads.
func (p Policy) String() string {
	var parts []string
	if p.Resemblance > 0 {
		parts = append(parts, "resemblance:"+strconv.FormatFloat(p.Resemblance, 'g', -1, 64))
	}
	if p.Containment > 0 {
		parts = append(parts, "containment:"+strconv.FormatFloat(p.Containment, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// ContainedThreshold is the threshold of the contained table: the policy's
// containment threshold, or DefaultContained.
func (p Policy) ContainedThreshold() float64 {
	if p.Containment > 0 {
		return p.Containment
	}
	return DefaultContained
}

// Estimates are what phase 4 knows of a pair. Containment is nil where the
// sketch cannot estimate it (MIN_s, MinHash, super-shingles).
type Estimates struct {
	Shared      int
	Resemblance float64
	AInB, BInA  *float64
}

func maxContainment(e Estimates) float64 {
	var c float64
	if e.AInB != nil {
		c = *e.AInB
	}
	if e.BInA != nil {
		c = max(c, *e.BInA)
	}
	return c
}

// Links reports whether the policy links the pair.
func (p Policy) Links(e Estimates) bool {
	if p.Resemblance > 0 && e.Resemblance >= p.Resemblance {
		return true
	}
	return p.Containment > 0 && maxContainment(e) >= p.Containment
}

// Keep reports whether the pairs table keeps the pair: see MinResemblance.
func Keep(e Estimates, linked bool) bool {
	return linked || e.Shared >= 2 || e.Resemblance >= MinResemblance || maxContainment(e) >= MinContainment
}

// Reclusterable reports whether recluster can apply p exactly to a pairs
// table written under the floors above, and if not, why.
func (p Policy) Reclusterable() error {
	if p.Resemblance > 0 && p.Resemblance < MinResemblance {
		return fmt.Errorf("resemblance threshold %g is below %g: the pairs table does not keep every pair such a policy links; rerun the full pipeline", p.Resemblance, MinResemblance)
	}
	if p.Containment > 0 && p.Containment < MinContainment {
		return fmt.Errorf("containment threshold %g is below %g: the pairs table does not keep every pair such a policy links; rerun the full pipeline", p.Containment, MinContainment)
	}
	return nil
}
