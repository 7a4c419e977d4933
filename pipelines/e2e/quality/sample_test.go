package quality

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/neardup/neardup/features/chunk"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/text/canon"
	"github.com/neardup/neardup/transforms"
)

// truth is the part of testdata/crawl/truth.json (written by
// scripts/gencrawl) that the end-to-end tests check against.
type truth struct {
	Totals struct {
		TotalRows         int `json:"total_rows"`
		MaxShingleDocFreq int `json:"max_shingle_doc_freq"`
	} `json:"totals"`
	Groups []struct {
		Group   string  `json:"group"`
		Kind    string  `json:"kind"`
		Target  float64 `json:"target"`
		Members []struct {
			ID   string `json:"id"`
			Role string `json:"role"`
		} `json:"members"`
		Pairs []struct {
			A, B        string
			Resemblance float64 `json:"resemblance"`
			CBInA       float64 `json:"containment_b_in_a"`
			Targeted    bool    `json:"targeted"`
		} `json:"pairs"`
	} `json:"groups"`
	EdgeRows []struct {
		ID   string `json:"id"`
		What string `json:"what"`
	} `json:"edge_rows"`
	Unrelated []struct {
		ID string `json:"id"`
	} `json:"unrelated_sample"`
}

func readTruth(t *testing.T, path string) *truth {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (regenerate with: go run ./scripts/gencrawl)", err)
	}
	var tr truth
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	return &tr
}

func sameCluster(a, b *tables.Doc) bool {
	return a.ClusterID != nil && b.ClusterID != nil && *a.ClusterID == *b.ClusterID
}

func TestSampleCrawl(t *testing.T) {
	tr := readTruth(t, "../../../testdata/crawl/truth.json")
	r := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", pipelinetest.DefaultConfig())
	checkSample(t, tr, r, map[float64][2]float64{0.95: {1, 1}, 0.8: {0.9, 1}, 0.6: {0.5, 1}, 0.3: {0, 0.1}})
}

// TestSampleCrawlModes runs the sample with the other sketches and with
// super-shingles instead of phases 2 and 3.
func TestSampleCrawlModes(t *testing.T) {
	tr := readTruth(t, "../../../testdata/crawl/truth.json")
	min100 := sketch.Spec{Kind: sketch.Min, N: 100}
	minhash := sketch.Spec{Kind: sketch.MinHash, N: 100}
	for _, c := range []struct {
		name   string
		set    func(*transforms.Config)
		levels map[float64][2]float64
	}{
		{"min:100", func(c *transforms.Config) { c.Sketch = min100 },
			map[float64][2]float64{0.95: {1, 1}, 0.8: {0.9, 1}, 0.6: {0.5, 1}, 0.3: {0, 0.1}}},
		{"minhash:100", func(c *transforms.Config) { c.Sketch = minhash },
			map[float64][2]float64{0.95: {1, 1}, 0.8: {0.9, 1}, 0.6: {0.5, 1}, 0.3: {0, 0.1}}},
		// Unverified super-shingles link on one shared run of 5 sketch
		// values: at resemblance 0.3 that happens for about a fifth of
		// pairs (supershingle package tests), more once clusters chain.
		{"supershingle min:100/5", func(c *transforms.Config) { c.Sketch, c.Mode, c.SuperSize = min100, settings.ModeSuperShingle, 5 },
			map[float64][2]float64{0.95: {1, 1}, 0.8: {0.9, 1}, 0.6: {0.5, 1}, 0.3: {0, 0.5}}},
		{"supershingle min:100/5 verified", func(c *transforms.Config) {
			c.Sketch, c.Mode, c.SuperSize, c.Verify = min100, settings.ModeSuperShingle, 5, settings.VerifySketch
		},
			map[float64][2]float64{0.95: {1, 1}, 0.8: {0.9, 1}, 0.6: {0.5, 1}, 0.3: {0, 0.1}}},
		// 20 bands of 5 rows: P(link) = 1-(1-J^5)^20 is 0.05 at J = 0.3
		// and 0.84 at J = 0.6 (supershingle.LinkProbability); groups of
		// three add links through their third member.
		{"minhash:100 bands 20", func(c *transforms.Config) { c.Sketch, c.Mode, c.Bands = minhash, settings.ModeSuperShingle, 20 },
			map[float64][2]float64{0.95: {1, 1}, 0.8: {0.9, 1}, 0.6: {0.5, 1}, 0.3: {0, 0.3}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := pipelinetest.DefaultConfig()
			c.set(&cfg)
			r := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", cfg)
			checkSample(t, tr, r, c.levels)
			if n := excerptPairs(tr, r); cfg.Mode == settings.ModeSuperShingle && n > 2 {
				t.Errorf("%d planted excerpt-container pairs share a super-shingle; super-shingles should not see containment", n)
			}
		})
	}
}

// excerptPairs counts the planted excerpt-container pairs that reached
// phase 4.
func excerptPairs(tr *truth, r *pipelinetest.Result) int {
	inPairs := map[[2]int64]bool{}
	for _, p := range r.Pairs {
		inPairs[[2]int64{p.DocA, p.DocB}] = true
	}
	var n int
	for _, g := range tr.Groups {
		if g.Kind == "contained" {
			a, b := r.ByID[g.Members[0].ID].DocID, r.ByID[g.Members[1].ID].DocID
			if inPairs[[2]int64{min(a, b), max(a, b)}] {
				n++
			}
		}
	}
	return n
}

// checkSample checks an output of the sample crawl against the planted
// truth; levels bounds the fraction of near-copy pairs clustered at each
// planted resemblance.
func checkSample(t *testing.T, tr *truth, r *pipelinetest.Result, levels map[float64][2]float64) {
	t.Helper()
	pipelinetest.CheckInvariants(t, r, tr.Totals.TotalRows)
	doc := func(id string) *tables.Doc {
		d := r.ByID[id]
		if d == nil {
			t.Fatalf("input id %s missing from docs", id)
		}
		return d
	}

	contained := map[[2]int64]bool{}
	for _, c := range r.Contained {
		contained[[2]int64{c.Contained, c.Container}] = true
	}
	var excerpts, excerptsFound int
	// Linked pair fraction per near-copy level.
	linked := map[float64][2]int{}
	for _, g := range tr.Groups {
		switch g.Kind {
		case "exact":
			rep := doc(g.Members[0].ID)
			for _, m := range g.Members[1:] {
				if d := doc(m.ID); d.DocID < rep.DocID {
					rep = d
				}
			}
			if rep.ClusterID == nil || rep.IdenticalTo != nil || !rep.IsRepresentative {
				t.Errorf("%s: lowest doc %d should represent the group", g.Group, rep.DocID)
			}
			for _, m := range g.Members {
				d := doc(m.ID)
				if d != rep && (d.IdenticalTo == nil || *d.IdenticalTo != rep.DocID || !sameCluster(d, rep)) {
					t.Errorf("%s: doc %d should be an identical copy of %d", g.Group, d.DocID, rep.DocID)
				}
			}
		case "lexical":
			// Different bytes, same tokens: not identical, but resemblance 1.
			a, b := doc(g.Members[0].ID), doc(g.Members[1].ID)
			if !sameCluster(a, b) || a.IdenticalTo != nil || b.IdenticalTo != nil {
				t.Errorf("%s: lexically equivalent docs %d, %d should be clustered, not marked identical", g.Group, a.DocID, b.DocID)
			}
		case "near":
			for _, p := range g.Pairs {
				if !p.Targeted {
					continue
				}
				c := linked[g.Target]
				c[1]++
				if sameCluster(doc(p.A), doc(p.B)) {
					c[0]++
				}
				linked[g.Target] = c
			}
		case "contained":
			// Resemblance is low, so they are not clustered; the pair
			// still reaches phase 4 with the excerpt's containment high.
			container, excerpt := doc(g.Members[0].ID), doc(g.Members[1].ID)
			if sameCluster(container, excerpt) {
				t.Errorf("%s: excerpt %d clustered with its container %d at resemblance %.2f", g.Group, excerpt.DocID, container.DocID, g.Pairs[0].Resemblance)
			}
			excerpts++
			if contained[[2]int64{excerpt.DocID, container.DocID}] {
				excerptsFound++
			}
		case "boilerplate":
			seen := map[int64]string{}
			for _, m := range g.Members {
				if d := doc(m.ID); d.ClusterID != nil {
					if other, ok := seen[*d.ClusterID]; ok {
						t.Errorf("%s: pages %s and %s share only boilerplate but were clustered", g.Group, other, m.ID)
					}
					seen[*d.ClusterID] = m.ID
				}
			}
		}
	}
	// Excerpts of 60 to 200 words keep 2 to 8 values in a MOD_25 sketch:
	// most, not all, estimate at containment 0.8 or more.
	t.Logf("excerpts found contained in their container: %d of %d", excerptsFound, excerpts)
	if r.Manifest.Settings["sketch"] == "mod:25" && (excerpts == 0 || float64(excerptsFound) < 0.6*float64(excerpts)) {
		t.Errorf("only %d of %d planted excerpts are in the contained table", excerptsFound, excerpts)
	}
	for level, c := range linked {
		t.Logf("near copies at resemblance %.2f: %d of %d pairs clustered", level, c[0], c[1])
	}
	for level, c := range linked {
		frac, want := float64(c[0])/float64(c[1]), levels[level]
		if frac < want[0] || frac > want[1] {
			t.Errorf("near copies at %.2f: %d of %d pairs clustered, want a fraction in [%.2f, %.2f]",
				level, c[0], c[1], want[0], want[1])
		}
	}
	for _, u := range tr.Unrelated {
		if d := doc(u.ID); d.ClusterID != nil {
			t.Errorf("unrelated page %s (doc %d) was clustered into %d", u.ID, d.DocID, *d.ClusterID)
		}
	}
	wantStatus := map[string]string{"empty": tables.StatusEmpty, "whitespace_only": tables.StatusEmpty,
		"punctuation_only": tables.StatusEmpty, "five_words": tables.StatusTooShort}
	for _, e := range tr.EdgeRows {
		if d := doc(e.ID); d.Status != wantStatus[e.What] {
			t.Errorf("edge row %s (%s): status %q, want %q", e.ID, e.What, d.Status, wantStatus[e.What])
		}
	}
}

// TestChunkFeatures runs the sample with content-defined chunks as the
// features (--features=chunks:256, every chunk in the sketch): the
// manifest says so, documents too
// short for a shingle are sketched, and the planted copies whose
// canonical text is the same (exact and lexical groups) are clustered;
// the spread edits of the near-copies break most 300-byte chunks, so
// those are found far less than with shingles (the quality table
// measures by how much).
func TestChunkFeatures(t *testing.T) {
	tr := readTruth(t, "../../../testdata/crawl/truth.json")
	cfg := pipelinetest.DefaultConfig()
	// A 3 KB page has about ten chunks: the sketch keeps them all (the
	// runner's default with chunks), as Jain's Bloom filters do.
	cfg.Chunks, cfg.Sketch = 256, sketch.Spec{Kind: sketch.Mod, N: 1}
	r := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", cfg)
	if f := r.Manifest.Settings["features"]; f != "chunks:256" {
		t.Errorf("features setting %q", f)
	}
	if n := r.Manifest.Counts["docs_too_short"]; n != 0 {
		t.Errorf("%d documents too short: any token makes a chunk", n)
	}
	// Each document's sketch is the chunks of its canonical text, as
	// package chunk cuts them.
	c, err := chunk.New(256)
	if err != nil {
		t.Fatal(err)
	}
	h := fingerprint.New(cfg.Seed)
	for _, d := range r.Docs[:50] {
		row, err := crawl.ReadRow(context.Background(), d.SourceFile, d.SourceRow, cfg.Columns)
		if err != nil {
			t.Fatal(err)
		}
		want := c.Features(nil, []byte(strings.Join(canon.Tokens(row.Content), " ")), h.Bytes)
		if int(d.SketchSize) != len(want) {
			t.Fatalf("doc %d: sketch of %d values, want its %d chunks", d.DocID, d.SketchSize, len(want))
		}
	}
	checked := 0
	for _, g := range tr.Groups {
		if g.Kind != "exact" && g.Kind != "lexical" {
			continue
		}
		first := r.ByID[g.Members[0].ID]
		for _, m := range g.Members[1:] {
			if d := r.ByID[m.ID]; !sameCluster(first, d) {
				t.Errorf("%s group %s: %s and %s not clustered", g.Kind, g.Group, g.Members[0].ID, m.ID)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no exact or lexical group in the sample")
	}
}
