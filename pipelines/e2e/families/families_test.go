// Package families holds families over --max-shingle-docs to the issue's
// targets in every mode and feature (familytest): pairs, verified,
// distributed components, chunks, super-shingles and bands. Centered
// clusters, recluster and update are in pipelines/e2e/familyruns, so
// that each package stays within CI's budget.
package families

import (
	"testing"

	"github.com/neardup/neardup/internal/testing/familytest"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/transforms"
)

// TestFamiliesOverTheCap: families of 2.5 and 6 times --max-shingle-docs
// are each found whole, in one cluster, in every mode, with same-cluster
// precision of at least 0.99 against the exact join; the boilerplate
// pages that share shingles over the cap stay apart. With --anchor-docs
// 0 (Broder's drop) the families are not found, which is what makes the
// others' figures mean something (super-shingles aside: their lists are
// shorter, and most of them stay under the cap;
// TestSuperCandidatesAnchorListsOverTheCap checks those that do not).
func TestFamiliesOverTheCap(t *testing.T) {
	min100 := sketch.Spec{Kind: sketch.Min, N: 100}
	minhash := sketch.Spec{Kind: sketch.MinHash, N: 100}
	for _, c := range []familytest.Case{
		{Name: "pairs", Set: func(*transforms.Config) {}},
		{Name: "pairs verified", Set: func(c *transforms.Config) { c.Verify = settings.VerifyAuto }},
		{Name: "pairs dropped", Set: func(c *transforms.Config) { c.AnchorDocs = 0 }, Dropped: true},
		{Name: "distributed components", Set: func(c *transforms.Config) { c.Components = settings.ComponentsDistributed }},
		{Name: "chunks:64", Set: familytest.Chunks},
		{Name: "chunks:64 dropped", Set: func(c *transforms.Config) {
			familytest.Chunks(c)
			c.AnchorDocs = 0
		}, Dropped: true},
		{Name: "supershingle min:100/5 verified", Set: func(c *transforms.Config) {
			c.Sketch, c.Mode, c.SuperSize, c.Verify = min100, settings.ModeSuperShingle, 5, settings.VerifySketch
		}},
		{Name: "minhash:100 bands 20", Set: func(c *transforms.Config) { c.Sketch, c.Mode, c.Bands = minhash, settings.ModeSuperShingle, 20 }},
	} {
		t.Run(c.Name, c.Check)
	}
}
