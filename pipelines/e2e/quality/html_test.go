package quality

import (
	"testing"

	"github.com/neardup/neardup/features/sitetemplate"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/settings"
)

// TestHTMLInput runs the sample HTML pages with both --extract modes: the
// planted near copies link, pages sharing only markup do not, and the docs
// table says which extraction made each document's tokens.
func TestHTMLInput(t *testing.T) {
	for _, mode := range []string{settings.ExtractVisible, settings.ExtractMain} {
		t.Run(mode, func(t *testing.T) { testHTMLInput(t, mode) })
	}
}

func testHTMLInput(t *testing.T, mode string) {
	tr := readTruth(t, "../../../testdata/html/truth.json")
	cfg := pipelinetest.DefaultConfig()
	cfg.Columns.Text, cfg.Columns.HTML = "", "html"
	cfg.Extract = mode
	r := pipelinetest.Run(t, "../../../testdata/html/pages.parquet", cfg)
	pipelinetest.CheckInvariants(t, r, len(pipelinetest.InputRows(t, "../../../testdata/html/pages.parquet", cfg.Columns)))
	for _, d := range r.Docs {
		if d.Extraction != mode {
			t.Fatalf("doc %d: extraction %q, want %q", d.DocID, d.Extraction, mode)
		}
	}
	if got := r.Manifest.Settings["extract"]; got != mode {
		t.Errorf("manifest setting extract = %q, want %q", got, mode)
	}
	nearLinked, near := 0, 0
	for _, g := range tr.Groups {
		a, b := r.ByID[g.Members[0].ID], r.ByID[g.Members[1].ID]
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
				if d := r.ByID[m.ID]; d.ClusterID != nil {
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

// TestPythonDocsTemplates runs the raw HTML of the Python documentation,
// where every page carries the same navigation and almost no two pages
// are near-duplicates: all visible text links pages through their shared
// template; the main content (the default) and, on all visible text, the
// site-template shingles each leave at most a handful of links.
func TestPythonDocsTemplates(t *testing.T) {
	file := shareddata.Path(t, "python-3.11-docs-html.parquet")
	links := func(extract string, templates bool) int {
		cfg := pipelinetest.DefaultConfig()
		cfg.Columns.Text, cfg.Columns.HTML = "", "html"
		cfg.Extract = extract
		if templates {
			cfg.Templates = sitetemplate.Spec{Share: sitetemplate.DefaultShare, MinPages: sitetemplate.DefaultMinPages}
		}
		r := pipelinetest.Run(t, file, cfg)
		pipelinetest.CheckInvariants(t, r, 530)
		n := 0
		for _, p := range r.Pairs {
			if p.Linked {
				n++
			}
		}
		t.Logf("--extract=%s, templates %v: %d pairs reach phase 4, %d linked; %d template shingles", extract, templates, len(r.Pairs), n, r.Manifest.Counts["template_shingles"])
		return n
	}
	const handful = 3
	if n := links(settings.ExtractVisible, false); n <= handful {
		t.Errorf("all visible text links only %d pairs: the template problem this test guards against is gone from the data", n)
	}
	if n := links("", false); n > handful {
		t.Errorf("the main content (the default for HTML) links %d pairs of Python docs pages, want at most %d", n, handful)
	}
	if n := links(settings.ExtractVisible, true); n > handful {
		t.Errorf("all visible text less the site's template shingles links %d pairs, want at most %d", n, handful)
	}
}

// TestLexicalEquivalence runs the sample crawl with --equivalence=lexical:
// pages that differ only in case, spacing and punctuation become identical
// copies and skip phases 2-4.
func TestLexicalEquivalence(t *testing.T) {
	tr := readTruth(t, "../../../testdata/crawl/truth.json")
	cfg := pipelinetest.DefaultConfig()
	cfg.Equivalence = settings.Lexical
	r := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", cfg)
	pipelinetest.CheckInvariants(t, r, tr.Totals.TotalRows)
	var lexical int
	for _, g := range tr.Groups {
		if g.Kind != "lexical" {
			continue
		}
		lexical++
		a, b := r.ByID[g.Members[0].ID], r.ByID[g.Members[1].ID]
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
	if got, min := r.Manifest.Counts["identical_skipped"], int64(130+lexical); got < min {
		t.Errorf("%d copies skipped with lexical equivalence, want at least %d", got, min)
	}
}

// TestEquivalenceLevels: Broder's identical, lexically equivalent and
// shingle-equivalent documents nest, each level's counts are in every
// manifest, and the shortcut skips exactly the chosen level's copies.
func TestEquivalenceLevels(t *testing.T) {
	var counts []map[string]int64
	for _, level := range settings.Equivalences {
		cfg := pipelinetest.DefaultConfig()
		cfg.Equivalence = level
		r := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", cfg)
		c := r.Manifest.Counts
		if c["identical_skipped"] != c["equivalent_"+level+"_copies"] {
			t.Errorf("%s: skipped %d copies, the %s level has %d", level, c["identical_skipped"], level, c["equivalent_"+level+"_copies"])
		}
		for _, d := range r.Docs {
			if d.IdenticalTo == nil {
				continue
			}
			rep := r.ByDocID[*d.IdenticalTo]
			switch level {
			case settings.IdenticalContent:
				if rep.ContentFingerprint != d.ContentFingerprint {
					t.Errorf("%s: doc %d marked identical to %d with other content", level, d.DocID, rep.DocID)
				}
			case settings.Lexical:
				if rep.LexicalFingerprint != d.LexicalFingerprint {
					t.Errorf("%s: doc %d marked lexically equivalent to %d with other tokens", level, d.DocID, rep.DocID)
				}
			case settings.ShingleEquivalent:
				if rep.SketchSize != d.SketchSize {
					t.Errorf("%s: doc %d marked shingle-equivalent to %d with another sketch size", level, d.DocID, rep.DocID)
				}
			}
		}
		counts = append(counts, c)
	}
	for _, level := range settings.Equivalences {
		for _, kind := range []string{"groups", "copies"} {
			name := "equivalent_" + level + "_" + kind
			if counts[0][name] != counts[1][name] || counts[1][name] != counts[2][name] {
				t.Errorf("%s differs between runs: %d %d %d", name, counts[0][name], counts[1][name], counts[2][name])
			}
		}
	}
	id, lex, sh := counts[0]["equivalent_identical_copies"], counts[0]["equivalent_lexical_copies"], counts[0]["equivalent_shingle_copies"]
	if !(0 < id && id < lex && lex <= sh) {
		t.Errorf("copies per level: identical %d, lexical %d, shingle %d; want 0 < identical < lexical <= shingle on the sample", id, lex, sh)
	}
}
