package families

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/text/canon"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/transforms"
)

// clustersOf is each document's cluster in r, by its input id; a
// document in no cluster is a cluster of its own.
func clustersOf(r *pipelinetest.Result) map[string]int64 {
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

// score is the same-cluster precision and recall of got against truth:
// of the pairs of documents got puts in one cluster, the share truth puts
// in one too, and of truth's such pairs, the share got has. Both count
// pairs from the sizes of the clusters and of their overlaps, never pair
// by pair.
func score(truth, got map[string]int64) (precision, recall float64) {
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

// largestShare is the share of f's copies that are in its largest cluster
// in got.
func largestShare(got map[string]int64, f family) float64 {
	count, largest := map[int64]int{}, 0
	for id, c := range got {
		if name, _, ok := strings.Cut(id, "-"); ok && name == f.name {
			count[c]++
			largest = max(largest, count[c])
		}
	}
	return float64(largest) / float64(f.size)
}

// medianResemblance is the median exact resemblance of 200 pairs of f's
// copies drawn at random, on cfg's features (words or chunks): the issue's
// measure of a family of near-duplicates, whose target is for families
// of 0.6 or more.
func medianResemblance(t *testing.T, cfg transforms.Config, f family) float64 {
	t.Helper()
	rs, err := rowsketch.New(cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	h := fingerprint.New(cfg.Seed)
	texts := copies[f.name]
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

// testConfig is the defaults, anchors included, with the tests' cap.
func testConfig() transforms.Config {
	cfg := pipelinetest.DefaultConfig()
	cfg.MaxShingleDocs = capDocs
	return cfg
}

// truthOf is the exact join's clusters under cfg's features and policy:
// it drops no shingle, however common.
func truthOf(t *testing.T, cfg transforms.Config) map[string]int64 {
	// Each family is one component of the exact join (chunks, which an
	// edit cuts whole, aside): its copies are near-duplicates, with a
	// median resemblance of 0.6 or more. Centered, the copies that
	// resemble the centre too little are left out even there.
	t.Helper()
	truth := clustersOf(pipelinetest.Run(t, corpusGlob, exactOf(t, cfg)))
	for _, f := range families {
		if s := largestShare(truth, f); s != 1 && cfg.Features() == settings.Default().Features() && !cfg.Centered {
			t.Fatalf("features %s: the exact join puts %.3f of family %s in one cluster; the corpus's families are not near-duplicates throughout", cfg.Features(), s, f.name)
		}
	}
	return truth
}

// chunks sets --features=chunks:64, with the sketch that then defaults
// (mod:1, every chunk).
func chunks(c *transforms.Config) {
	if err := c.SetFeatures("chunks:64"); err != nil {
		panic(err)
	}
	c.Sketch = sketch.Spec{Kind: sketch.Mod, N: 1}
}

// exactOf is the exact join under cfg's features, policy and kind of
// clusters (components or centered).
func exactOf(t *testing.T, cfg transforms.Config) transforms.Config {
	t.Helper()
	exact := pipelinetest.DefaultConfig()
	exact.Mode, exact.Policy, exact.Centered = settings.ModeExact, cfg.Policy, cfg.Centered
	if err := exact.SetFeatures(cfg.Features()); err != nil {
		t.Fatal(err)
	}
	exact.Sketch = settings.Default().Sketch
	return exact
}

// TestFamiliesOverTheCap: families of 2.5 and 6 times --max-shingle-docs
// are each found whole, in one cluster, in every mode and way of
// clustering, with same-cluster precision of at least 0.99 against the
// exact join; the boilerplate pages that share shingles over the cap stay
// apart. With --anchor-docs 0 (Broder's drop) the families are not found,
// which is what makes the others' figures mean something (super-shingles
// aside: their lists are shorter, and most of them stay under the cap;
// TestSuperCandidatesAnchorListsOverTheCap checks those that do not).
func TestFamiliesOverTheCap(t *testing.T) {
	min100 := sketch.Spec{Kind: sketch.Min, N: 100}
	minhash := sketch.Spec{Kind: sketch.MinHash, N: 100}
	for _, c := range []struct {
		name    string
		set     func(*transforms.Config)
		dropped bool // --anchor-docs 0: the families are not found
	}{
		{"pairs", func(*transforms.Config) {}, false},
		{"pairs verified", func(c *transforms.Config) { c.Verify = settings.VerifyAuto }, false},
		{"pairs dropped", func(c *transforms.Config) { c.AnchorDocs = 0 }, true},
		{"centered", func(c *transforms.Config) { c.Centered = true }, false},
		{"distributed components", func(c *transforms.Config) { c.Components = settings.ComponentsDistributed }, false},
		{"chunks:64", chunks, false},
		{"chunks:64 dropped", func(c *transforms.Config) {
			chunks(c)
			c.AnchorDocs = 0
		}, true},
		{"supershingle min:100/5 verified", func(c *transforms.Config) {
			c.Sketch, c.Mode, c.SuperSize, c.Verify = min100, settings.ModeSuperShingle, 5, settings.VerifySketch
		}, false},
		{"minhash:100 bands 20", func(c *transforms.Config) { c.Sketch, c.Mode, c.Bands = minhash, settings.ModeSuperShingle, 20 }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			c.set(&cfg)
			truth := truthOf(t, cfg)
			r := pipelinetest.Run(t, corpusGlob, cfg)
			got := clustersOf(r)
			if n := r.Manifest.Counts["common_shingles_anchored"]; (n > 0) == c.dropped {
				t.Errorf("%d shingles anchored over the cap of %d", n, capDocs)
			}
			precision, recall := score(truth, got)
			t.Logf("same-cluster precision %.4f, recall %.4f", precision, recall)
			for _, f := range families {
				share, whole, median := largestShare(got, f), largestShare(truth, f), medianResemblance(t, cfg, f)
				t.Logf("family %s (%d copies, median resemblance %.3f): %.3f in one cluster, the exact join %.3f", f.name, f.size, median, share, whole)
				switch {
				case c.dropped && share >= 0.5:
					t.Errorf("family %s: %.3f in one cluster with its shingles over the cap dropped; want under half (is the cap not biting?)", f.name, share)
				case !c.dropped && median >= 0.6 && share < 0.99*whole:
					t.Errorf("family %s (median resemblance %.3f): %.3f of %d copies in one cluster, want at least 0.99 of the exact join's %.3f", f.name, median, share, f.size, whole)
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
		})
	}
}

// TestFamilyRecluster: the stored pairs of a run with anchored families
// are enough to cluster again. At the run's own policy as centered
// clusters, recluster gives the clusters a centered run gives; at a
// stricter threshold, those of a run at that threshold, with precision of
// at least 0.99 against the exact join. (How much of a family stays
// whole there depends on its copies' resemblance to its anchors: see
// docs/families.md.)
func TestFamilyRecluster(t *testing.T) {
	cfg := testConfig()
	base := pipelinetest.Run(t, corpusGlob, cfg)
	centered := cfg
	centered.Centered = true
	direct := clustersOf(pipelinetest.Run(t, corpusGlob, centered))
	dir := t.TempDir()
	m, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: base.Dir, Output: dir, Policy: cfg.Policy, Centered: true})
	if err != nil {
		t.Fatal(err)
	}
	re := clustersOf(pipelinetest.ReadResult(t, dir, m, cfg.Policy))
	if p, r := score(direct, re); p != 1 || r != 1 {
		t.Errorf("centered recluster against a centered run: same-cluster precision %.4f, recall %.4f; want the same clusters", p, r)
	}

	strict := cfg
	strict.Policy = policy.Policy{Resemblance: 0.55}
	dir = t.TempDir()
	m, err = pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: base.Dir, Output: dir, Policy: strict.Policy})
	if err != nil {
		t.Fatal(err)
	}
	got := clustersOf(pipelinetest.ReadResult(t, dir, m, strict.Policy))
	if p, r := score(clustersOf(pipelinetest.Run(t, corpusGlob, strict)), got); p != 1 || r != 1 {
		t.Errorf("recluster at %s against a run at it: same-cluster precision %.4f, recall %.4f; want the same clusters", strict.Policy, p, r)
	}
	truth := clustersOf(pipelinetest.Run(t, corpusGlob, exactOf(t, strict)))
	precision, recall := score(truth, got)
	t.Logf("at %s: same-cluster precision %.4f, recall %.4f against the exact join", strict.Policy, precision, recall)
	if precision < 0.99 {
		t.Errorf("recluster at %s: same-cluster precision %.4f against the exact join, want at least 0.99", strict.Policy, precision)
	}
	for _, f := range families {
		t.Logf("family %s: %.3f in one cluster, the exact join %.3f", f.name, largestShare(got, f), largestShare(truth, f))
	}
}

// TestFamilyUpdate: new pages of a family the index holds (the last
// heldOut copies of the first family, against an index of the others)
// join its cluster, and the update's tables are those of a full run.
func TestFamilyUpdate(t *testing.T) {
	cfg := testConfig()
	dir := filepath.Dir(corpusGlob)
	index := pipelinetest.Run(t, filepath.Join(dir, "part-0000[0-4]*.parquet"), cfg)
	up := pipelinetest.RunUpdate(t, index.Dir, filepath.Join(dir, heldFile), cfg)
	full := pipelinetest.Run(t, corpusGlob, cfg)
	pipelinetest.SameTables(t, full, up)
	got, f := clustersOf(up), families[0]
	if share := largestShare(got, f); share < 0.99 {
		t.Errorf("family %s after the update: %.3f in one cluster, want at least 0.99", f.name, share)
	}
	was := clustersOf(index)[f.name+"-0"]
	joined := 0
	for c := f.size - heldOut; c < f.size; c++ {
		if got[fmt.Sprintf("%s-%d", f.name, c)] == was {
			joined++
		}
	}
	t.Logf("%d of %d new copies joined the indexed family's cluster", joined, heldOut)
	if joined < heldOut*99/100 {
		t.Errorf("%d of %d new copies of family %s joined its cluster in the index, want at least 99%%", joined, heldOut, f.name)
	}
}
