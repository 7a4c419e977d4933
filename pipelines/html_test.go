package pipelines

import (
	"testing"
)

func TestHTMLInput(t *testing.T) {
	tr := readTruth(t, "../testdata/html/truth.json")
	cfg := defaultConfig()
	cfg.Columns.Text, cfg.Columns.HTML = "", "html"
	r := run(t, "../testdata/html/pages.parquet", cfg)
	if len(r.docs) == 0 {
		t.Fatal("no docs")
	}
	checkInvariants(t, r, len(r.docs))
	nearLinked, near := 0, 0
	for _, g := range tr.Groups {
		a, b := r.byID[g.Members[0].ID], r.byID[g.Members[1].ID]
		if a == nil || b == nil {
			t.Fatalf("%s: members missing from docs", g.Group)
		}
		switch g.Kind {
		case "lexical":
			// Same visible text under different markup: different bytes,
			// resemblance about 1.
			if !sameCluster(a, b) || a.IdenticalTo != nil || b.IdenticalTo != nil {
				t.Errorf("%s: same visible text, docs %d and %d should be clustered (not as identical bytes)", g.Group, a.DocID, b.DocID)
			}
		case "near":
			near++
			if sameCluster(a, b) {
				nearLinked++
			}
		case "shared_markup":
			seen := map[int64]bool{}
			for _, m := range g.Members {
				if d := r.byID[m.ID]; d.ClusterID != nil {
					if seen[*d.ClusterID] {
						t.Errorf("%s: pages sharing only scripts and styles were clustered (cluster %d)", g.Group, *d.ClusterID)
					}
					seen[*d.ClusterID] = true
				}
			}
		}
	}
	if near == 0 || nearLinked < near-1 {
		t.Errorf("%d of %d near-copy HTML pairs (resemblance ~0.8) clustered, want at least %d", nearLinked, near, near-1)
	}
}

// TestLexicalEquivalence runs the sample crawl with --equivalence=lexical:
// pages that differ only in case, spacing and punctuation become identical
// copies and skip phases 2-4.
func TestLexicalEquivalence(t *testing.T) {
	tr := readTruth(t, "../testdata/crawl/truth.json")
	cfg := defaultConfig()
	cfg.Lexical = true
	r := run(t, "../testdata/crawl/*.parquet", cfg)
	checkInvariants(t, r, tr.Totals.TotalRows)
	var lexical int
	for _, g := range tr.Groups {
		if g.Kind != "lexical" {
			continue
		}
		lexical++
		a, b := r.byID[g.Members[0].ID], r.byID[g.Members[1].ID]
		if a.DocID > b.DocID {
			a, b = b, a
		}
		if b.IdenticalTo == nil || *b.IdenticalTo != a.DocID {
			t.Errorf("%s: doc %d should be a lexical copy of %d", g.Group, b.DocID, a.DocID)
		}
	}
	if lexical == 0 {
		t.Fatal("truth has no lexical groups")
	}
	if got, min := r.manifest.Counts["identical_skipped"], int64(130+lexical); got < min {
		t.Errorf("%d copies skipped with lexical equivalence, want at least %d", got, min)
	}
}
