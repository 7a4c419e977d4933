// Package familyruns holds families over --max-shingle-docs to the
// issue's targets beyond one clustering of one run (familytest): centered
// clusters, recluster from the stored pairs, and an update against an
// index that holds most of a family.
package familyruns

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/testing/familytest"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/transforms"
)

// TestCenteredFamilies: centered clusters (--clusters=centered) hold each
// family to the targets TestFamiliesOverTheCap holds the other modes to,
// against the exact join centered.
func TestCenteredFamilies(t *testing.T) {
	familytest.Case{Name: "centered", Set: func(c *transforms.Config) { c.Centered = true }}.Check(t)
}

// TestFamilyRecluster: the stored pairs of a run with anchored families
// are enough to cluster again. At the run's own policy as centered
// clusters, recluster gives the clusters a centered run gives; at a
// stricter threshold, those of a run at that threshold, with precision of
// at least 0.99 against the exact join. (How much of a family stays
// whole there depends on its copies' resemblance to its anchors: see
// docs/families.md.)
func TestFamilyRecluster(t *testing.T) {
	cfg := familytest.Config()
	base := pipelinetest.Run(t, familytest.Glob, cfg)
	centered := cfg
	centered.Centered = true
	direct := familytest.ClustersOf(pipelinetest.Run(t, familytest.Glob, centered))
	dir := t.TempDir()
	m, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: base.Dir, Output: dir, Policy: cfg.Policy, Centered: true})
	if err != nil {
		t.Fatal(err)
	}
	re := familytest.ClustersOf(pipelinetest.ReadResult(t, dir, m, cfg.Policy))
	if p, r := familytest.Score(direct, re); p != 1 || r != 1 {
		t.Errorf("centered recluster against a centered run: same-cluster precision %.4f, recall %.4f; want the same clusters", p, r)
	}

	strict := cfg
	strict.Policy = policy.Policy{Resemblance: 0.55}
	dir = t.TempDir()
	m, err = pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: base.Dir, Output: dir, Policy: strict.Policy})
	if err != nil {
		t.Fatal(err)
	}
	got := familytest.ClustersOf(pipelinetest.ReadResult(t, dir, m, strict.Policy))
	if p, r := familytest.Score(familytest.ClustersOf(pipelinetest.Run(t, familytest.Glob, strict)), got); p != 1 || r != 1 {
		t.Errorf("recluster at %s against a run at it: same-cluster precision %.4f, recall %.4f; want the same clusters", strict.Policy, p, r)
	}
	truth := familytest.ClustersOf(pipelinetest.Run(t, familytest.Glob, familytest.Exact(t, strict)))
	precision, recall := familytest.Score(truth, got)
	t.Logf("at %s: same-cluster precision %.4f, recall %.4f against the exact join", strict.Policy, precision, recall)
	if precision < 0.99 {
		t.Errorf("recluster at %s: same-cluster precision %.4f against the exact join, want at least 0.99", strict.Policy, precision)
	}
	for _, f := range familytest.Families {
		t.Logf("family %s: %.3f in one cluster, the exact join %.3f", f.Name, familytest.LargestShare(got, f), familytest.LargestShare(truth, f))
	}
}

// TestFamilyUpdate: new pages of a family the index holds (the last
// heldOut copies of the first family, against an index of the others)
// join its cluster, and the update's tables are those of a full run.
func TestFamilyUpdate(t *testing.T) {
	cfg := familytest.Config()
	dir := filepath.Dir(familytest.Glob)
	index := pipelinetest.Run(t, filepath.Join(dir, "part-0000[0-4]*.parquet"), cfg)
	up := pipelinetest.RunUpdate(t, index.Dir, filepath.Join(dir, familytest.HeldFile), cfg)
	full := pipelinetest.Run(t, familytest.Glob, cfg)
	pipelinetest.SameTables(t, full, up)
	got, f := familytest.ClustersOf(up), familytest.Families[0]
	if share := familytest.LargestShare(got, f); share < 0.99 {
		t.Errorf("family %s after the update: %.3f in one cluster, want at least 0.99", f.Name, share)
	}
	was := familytest.ClustersOf(index)[f.Name+"-0"]
	joined := 0
	for c := f.Size - familytest.HeldOut; c < f.Size; c++ {
		if got[fmt.Sprintf("%s-%d", f.Name, c)] == was {
			joined++
		}
	}
	t.Logf("%d of %d new copies joined the indexed family's cluster", joined, familytest.HeldOut)
	if joined < familytest.HeldOut*99/100 {
		t.Errorf("%d of %d new copies of family %s joined its cluster in the index, want at least 99%%", joined, familytest.HeldOut, f.Name)
	}
}
