package familytest

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/text/canon"
	"github.com/neardup/neardup/transforms"
)

// ClustersOf is each document's cluster in r, by its input id; a
// document in no cluster is a cluster of its own.
func ClustersOf(r *pipelinetest.Result) map[string]int64 {
	out := make(map[string]int64, len(r.Docs))
	for _, d := range r.Docs {
		c := -1 - d.DocID
		if d.ClusterID != nil {
			c = *d.ClusterID
		}
		out[*d.ID] = c
	}
	return out
}

// Score is the same-cluster precision and recall of got against truth:
// of the pairs of documents got puts in one cluster, the share truth puts
// in one too, and of truth's such pairs, the share got has. Both count
// pairs from the sizes of the clusters and of their overlaps, never pair
// by pair.
func Score(truth, got map[string]int64) (precision, recall float64) {
	pairs := func(n int) float64 { return float64(n) * float64(n-1) / 2 }
	inGot, inTruth, inBoth := map[int64]int{}, map[int64]int{}, map[[2]int64]int{}
	for id, g := range got {
		k := truth[id]
		inGot[g]++
		inTruth[k]++
		inBoth[[2]int64{g, k}]++
	}
	var g, k, both float64
	for _, n := range inGot {
		g += pairs(n)
	}
	for _, n := range inTruth {
		k += pairs(n)
	}
	for _, n := range inBoth {
		both += pairs(n)
	}
	return both / max(g, 1), both / max(k, 1)
}

// LargestShare is the share of f's copies that are in its largest cluster
// in got.
func LargestShare(got map[string]int64, f Family) float64 {
	count, largest := map[int64]int{}, 0
	for id, c := range got {
		if name, _, ok := strings.Cut(id, "-"); ok && name == f.Name {
			count[c]++
			largest = max(largest, count[c])
		}
	}
	return float64(largest) / float64(f.Size)
}

// MedianResemblance is the median exact resemblance of 200 pairs of f's
// copies drawn at random, on cfg's features (words or chunks): the issue's
// measure of a family of near-duplicates, whose target is for families
// of 0.6 or more.
func MedianResemblance(t *testing.T, cfg transforms.Config, f Family) float64 {
	t.Helper()
	rs, err := rowsketch.New(cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	h := fingerprint.New(cfg.Seed)
	texts := Copies[f.Name]
	r := rand.New(rand.NewPCG(2, uint64(len(texts))))
	var res []float64
	for range 200 {
		a, b := r.IntN(len(texts)), r.IntN(len(texts)-1)
		if b >= a {
			b++
		}
		fa := rs.Features(nil, texts[a], canon.AppendHashes(nil, h, texts[a]))
		fb := rs.Features(nil, texts[b], canon.AppendHashes(nil, h, texts[b]))
		res = append(res, sketch.Jaccard(fa, fb))
	}
	slices.Sort(res)
	return res[len(res)/2]
}

// Config is the defaults, anchors included, with the tests' cap.
func Config() transforms.Config {
	cfg := pipelinetest.DefaultConfig()
	cfg.MaxShingleDocs = CapDocs
	return cfg
}

// Truth is the exact join's clusters under cfg's features and policy:
// it drops no shingle, however common.
func Truth(t *testing.T, cfg transforms.Config) map[string]int64 {
	// Each family is one component of the exact join (chunks, which an
	// edit cuts whole, aside): its copies are near-duplicates, with a
	// median resemblance of 0.6 or more. Centered, the copies that
	// resemble the centre too little are left out even there.
	t.Helper()
	truth := ClustersOf(pipelinetest.Run(t, Glob, Exact(t, cfg)))
	for _, f := range Families {
		if s := LargestShare(truth, f); s != 1 && cfg.Features() == settings.Default().Features() && !cfg.Centered {
			t.Fatalf("features %s: the exact join puts %.3f of family %s in one cluster; the corpus's families are not near-duplicates throughout", cfg.Features(), s, f.Name)
		}
	}
	return truth
}

// Chunks sets --features=chunks:64, with the sketch that then defaults
// (mod:1, every chunk).
func Chunks(c *transforms.Config) {
	if err := c.SetFeatures("chunks:64"); err != nil {
		panic(err)
	}
	c.Sketch = sketch.Spec{Kind: sketch.Mod, N: 1}
}

// Exact is the exact join under cfg's features, policy and kind of
// clusters (components or centered).
func Exact(t *testing.T, cfg transforms.Config) transforms.Config {
	t.Helper()
	exact := pipelinetest.DefaultConfig()
	exact.Mode, exact.Policy, exact.Centered = settings.ModeExact, cfg.Policy, cfg.Centered
	if err := exact.SetFeatures(cfg.Features()); err != nil {
		t.Fatal(err)
	}
	exact.Sketch = settings.Default().Sketch
	return exact
}

// Case is a way of running the pipeline over the corpus: Set changes the
// tests' defaults (Config); Dropped is a case with the families' shingles
// over the cap dropped (--anchor-docs 0), whose families are not found.
type Case struct {
	Name    string
	Set     func(*transforms.Config)
	Dropped bool
}

// Check runs c over the corpus and holds it to the targets: each
// family of median resemblance 0.6 or more has at least 0.99 of the exact
// join's share of it in one cluster (under half of it when c drops
// them), same-cluster precision against the exact join is at least
// 0.99, shingles are anchored over the cap unless c drops them, and no
// two of the boilerplate pages share a cluster.
func (c Case) Check(t *testing.T) {
	t.Helper()
	cfg := Config()
	c.Set(&cfg)
	truth := Truth(t, cfg)
	r := pipelinetest.Run(t, Glob, cfg)
	got := ClustersOf(r)
	if n := r.Manifest.Counts["common_shingles_anchored"]; (n > 0) == c.Dropped {
		t.Errorf("%d shingles anchored over the cap of %d", n, CapDocs)
	}
	precision, recall := Score(truth, got)
	t.Logf("same-cluster precision %.4f, recall %.4f", precision, recall)
	for _, f := range Families {
		share, whole, median := LargestShare(got, f), LargestShare(truth, f), MedianResemblance(t, cfg, f)
		t.Logf("family %s (%d copies, median resemblance %.3f): %.3f in one cluster, the exact join %.3f", f.Name, f.Size, median, share, whole)
		switch {
		case c.Dropped && share >= 0.5:
			t.Errorf("family %s: %.3f in one cluster with its shingles over the cap dropped; want under half (is the cap not biting?)", f.Name, share)
		case !c.Dropped && median >= 0.6 && share < 0.99*whole:
			t.Errorf("family %s (median resemblance %.3f): %.3f of %d copies in one cluster, want at least 0.99 of the exact join's %.3f", f.Name, median, share, f.Size, whole)
		}
	}
	if precision < 0.99 {
		t.Errorf("same-cluster precision %.4f against the exact join, want at least 0.99", precision)
	}
	pages := map[int64]int{}
	for id, cl := range got {
		if strings.HasPrefix(id, "page-") {
			if pages[cl]++; pages[cl] == 2 {
				t.Errorf("boilerplate pages share a cluster (%s among them): a footer over the cap linked unrelated pages", id)
			}
		}
	}
}
