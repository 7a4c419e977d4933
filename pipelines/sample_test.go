package pipelines

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/neardup/neardup/io/tables"
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
	tr := readTruth(t, "../testdata/crawl/truth.json")
	cfg := defaultConfig()
	r := run(t, "../testdata/crawl/*.parquet", cfg)
	checkInvariants(t, r, tr.Totals.TotalRows)
	doc := func(id string) *tables.Doc {
		d := r.byID[id]
		if d == nil {
			t.Fatalf("input id %s missing from docs", id)
		}
		return d
	}

	contained := map[[2]int64]bool{}
	for _, c := range r.contained {
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
	if excerpts == 0 || float64(excerptsFound) < 0.6*float64(excerpts) {
		t.Errorf("only %d of %d planted excerpts are in the contained table", excerptsFound, excerpts)
	}
	for level, c := range linked {
		t.Logf("near copies at resemblance %.2f: %d of %d pairs clustered", level, c[0], c[1])
	}
	wantAtLeast := map[float64]float64{0.95: 1.0, 0.8: 0.9, 0.6: 0.5, 0.3: 0}
	wantAtMost := map[float64]float64{0.95: 1, 0.8: 1, 0.6: 1, 0.3: 0.1}
	for level, c := range linked {
		frac := float64(c[0]) / float64(c[1])
		if frac < wantAtLeast[level] || frac > wantAtMost[level] {
			t.Errorf("near copies at %.2f: %d of %d pairs clustered, want a fraction in [%.2f, %.2f]",
				level, c[0], c[1], wantAtLeast[level], wantAtMost[level])
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
	if tr.Totals.MaxShingleDocFreq > 1000 && r.manifest.Counts["common_shingles_dropped"] == 0 {
		t.Errorf("a template is on %d pages, yet no common shingle was dropped", tr.Totals.MaxShingleDocFreq)
	}
}
