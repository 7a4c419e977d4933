package quality

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/features/sitetemplate"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/transforms"
)

// TestSiteTemplates runs the sample crawl with --template-shingles=auto:
// the distributed template step must drop exactly what the rule applied in
// memory (sitetemplate.Find over phase 1's own sketches) drops; the pages
// of the planted boilerplate sites, which share only their site's header
// and footer, must no longer meet in phase 3; and every planted near copy
// and excerpt found without templates must still be found.
func TestSiteTemplates(t *testing.T) {
	tr := readTruth(t, "../../../testdata/crawl/truth.json")
	const glob = "../../../testdata/crawl/*.parquet"
	base := pipelinetest.Run(t, glob, pipelinetest.DefaultConfig())
	cfg := pipelinetest.DefaultConfig()
	cfg.Templates = sitetemplate.Spec{Share: sitetemplate.DefaultShare, MinPages: sitetemplate.DefaultMinPages}
	cfg.Partitions = 5
	r := pipelinetest.Run(t, glob, cfg)
	checkSample(t, tr, r, map[float64][2]float64{0.95: {1, 1}, 0.8: {0.9, 1}, 0.6: {0.5, 1}, 0.3: {0, 0.1}})

	// The reference: every page's phase-1 sketch, and the rule in memory.
	want := referenceTemplates(t, glob, cfg)
	sketches, err := tables.ReadTable[tables.Sketch](context.Background(), r.Dir, tables.SketchesTable)
	if err != nil {
		t.Fatal(err)
	}
	if len(sketches) == 0 {
		t.Fatal("no sketches table rows")
	}
	for _, s := range sketches {
		w, ok := want.sketches[s.DocID]
		if !ok {
			t.Fatalf("doc %d in the sketches table has no phase-1 sketch", s.DocID)
		}
		got := make([]uint64, len(s.Sketch))
		for i, v := range s.Sketch {
			got[i] = uint64(v)
		}
		if !slices.Equal(got, w) {
			t.Fatalf("doc %d: sketch after templates %x, the rule in memory gives %x", s.DocID, got, w)
		}
	}
	c := r.Manifest.Counts
	if c["template_shingles"] != want.shingles || c["template_sites"] != want.sites || c["template_pages"] != want.pages {
		t.Errorf("manifest: %d template shingles of %d sites, %d pages lost some; the rule in memory: %d, %d, %d",
			c["template_shingles"], c["template_sites"], c["template_pages"], want.shingles, want.sites, want.pages)
	}
	if want.shingles == 0 || want.pages == 0 {
		t.Errorf("the sample crawl's boilerplate sites have no template shingles (%d) or pages (%d)", want.shingles, want.pages)
	}
	if got := r.Manifest.Settings["template_shingles"]; got != cfg.Templates.String() {
		t.Errorf("manifest setting template_shingles = %q, want %q", got, cfg.Templates.String())
	}

	// Pages of a boilerplate site meet in phase 3 through their template:
	// before, many pairs share nothing else; after, none. (A few pairs of
	// one site also share a rare shingle where the header meets a body
	// starting with the same word, which is no template.)
	site := map[int64]string{}
	for _, g := range tr.Groups {
		if g.Kind == "boilerplate" {
			for _, m := range g.Members {
				site[base.ByID[m.ID].DocID] = g.Group
			}
		}
	}
	templateOnly := func(r *pipelinetest.Result) (sameSite, only int) {
		for _, p := range r.Pairs {
			if s := site[p.DocA]; s == "" || s != site[p.DocB] {
				continue
			}
			sameSite++
			if !sharesBeyond(want.unfiltered[p.DocA], want.unfiltered[p.DocB], want.template) {
				only++
			}
		}
		return sameSite, only
	}
	sameBefore, before := templateOnly(base)
	sameAfter, after := templateOnly(r)
	t.Logf("pairs of pages of one boilerplate site: %d (%d sharing only template values) without templates, %d (%d) with; pairs table %d -> %d rows",
		sameBefore, before, sameAfter, after, len(base.Pairs), len(r.Pairs))
	if before == 0 {
		t.Error("without templates no two pages of a boilerplate site share only template values: the test proves nothing")
	}
	if after != 0 {
		t.Errorf("%d pairs of pages that share only their site's template still reach phase 3", after)
	}

	// Nothing planted is lost: the same near copies clustered, the same
	// excerpts contained.
	for _, g := range tr.Groups {
		if g.Kind != "near" && g.Kind != "lexical" {
			continue
		}
		for _, p := range g.Pairs {
			a, b := base.ByID[p.A], base.ByID[p.B]
			if sameCluster(a, b) && !sameCluster(r.ByID[p.A], r.ByID[p.B]) {
				t.Errorf("%s: %s and %s are clustered without templates, not with", g.Group, p.A, p.B)
			}
		}
	}
	if x, y := len(base.Contained), len(r.Contained); x != y {
		t.Errorf("contained pairs: %d without templates, %d with", x, y)
	}
}

// sharesBeyond reports whether sorted sketches a and b share a value not
// in template.
func sharesBeyond(a, b []uint64, template map[uint64]bool) bool {
	for _, v := range a {
		if _, ok := slices.BinarySearch(b, v); ok && !template[v] {
			return true
		}
	}
	return false
}

// templateReference is what the template rule applied in memory gives.
type templateReference struct {
	sketches, unfiltered   map[int64][]uint64 // doc ID -> sketch after and before templates
	template               map[uint64]bool    // every site's template values
	shingles, sites, pages int64
}

// referenceTemplates sketches every row of glob with phase 1's own code,
// applies sitetemplate.Find to the pages of status ok, and drops each
// site's template from its pages' sketches.
func referenceTemplates(t *testing.T, glob string, cfg transforms.Config) templateReference {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("glob %s: %v", glob, err)
	}
	slices.Sort(files)
	type page struct {
		doc    int64
		site   string
		ok     bool
		values []uint64
	}
	var pages []page
	rs, err := rowsketch.New(cfg.Config)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		splits, err := crawl.Splits(context.Background(), i, f, cfg.Columns)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range splits {
			err := crawl.ReadSplit(context.Background(), sp, cfg.Columns, func(row crawl.Row) error {
				doc, rec, _ := rs.Sketch(sp, row)
				if rec != nil {
					pages = append(pages, page{doc.DocID, sitetemplate.Site(row.URL), doc.Status == tables.StatusOK, slices.Clone(rec.Values)})
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var in []sitetemplate.Page
	for _, p := range pages {
		if p.ok {
			in = append(in, sitetemplate.Page{Site: p.site, Values: p.values})
		}
	}
	found := cfg.Templates.Find(in)
	ref := templateReference{sketches: map[int64][]uint64{}, unfiltered: map[int64][]uint64{}, template: map[uint64]bool{}, sites: int64(len(found))}
	for _, vs := range found {
		ref.shingles += int64(len(vs))
		for _, v := range vs {
			ref.template[v] = true
		}
	}
	for _, p := range pages {
		tmpl := found[p.site]
		ref.unfiltered[p.doc] = slices.Clone(p.values)
		vs, n := sitetemplate.Drop(p.values, func(v uint64) bool { _, ok := slices.BinarySearch(tmpl, v); return ok })
		if n > 0 {
			ref.pages++
		}
		ref.sketches[p.doc] = vs
	}
	return ref
}

// TestTemplateOnlyPages runs one site of 40 pages whose template (400
// words of navigation around the body) is most of every page: without
// --template-shingles the pages with distinct bodies all link; with it they
// stand alone, while pages that are only the template still merge as
// identical copies, a near copy still links, and the manifest counts the
// pages left with an empty sketch.
func TestTemplateOnlyPages(t *testing.T) {
	nav := func(prefix string, n int) string {
		var b strings.Builder
		for j := 0; j < n; j++ {
			fmt.Fprintf(&b, "%s%d ", prefix, j)
		}
		return b.String()
	}
	header, footer := nav("menu", 250), nav("legal", 150)
	edited := func(i int) string { // the body of page 37, one word changed on page 38
		s := pipelinetest.Words(100, 150)
		if i == 38 {
			s = strings.Replace(s, "w", "changed w", 1)
		}
		return s
	}
	file := pipelinetest.WritePages(t, t.TempDir(), "site.parquet", 39, 16, func(i int) string {
		switch {
		case i < 30:
			return header + pipelinetest.Words(i, 100) + footer
		case i < 35:
			return header + footer // only the template, byte for byte
		case i < 37:
			return header + pipelinetest.Words(i, 3) + footer // the template and three words of its own
		default:
			return header + edited(i) + footer
		}
	})
	byRow := func(r *pipelinetest.Result, i int) *tables.Doc { return r.ByID[fmt.Sprintf("site.parquet-%d", i)] }

	base := pipelinetest.Run(t, file, pipelinetest.DefaultConfig())
	if d0 := byRow(base, 0); d0.ClusterID == nil || !sameCluster(d0, byRow(base, 29)) {
		t.Fatal("without templates the pages sharing only the template do not link: the test proves nothing")
	}

	cfg := pipelinetest.DefaultConfig()
	cfg.Templates = sitetemplate.Spec{Share: sitetemplate.DefaultShare, MinPages: sitetemplate.DefaultMinPages}
	r := pipelinetest.Run(t, file, cfg)
	pipelinetest.CheckInvariants(t, r, 39)
	for i := 0; i < 30; i++ {
		if d := byRow(r, i); d.ClusterID != nil {
			t.Errorf("page %d, distinct body in the site's template, is clustered into %d", i, *d.ClusterID)
		}
	}
	rep := byRow(r, 30)
	for i := 31; i < 35; i++ {
		if d := byRow(r, i); d.IdenticalTo == nil || *d.IdenticalTo != rep.DocID || !sameCluster(d, rep) {
			t.Errorf("page %d, the bare template, is not an identical copy of page 30", i)
		}
	}
	for i := 35; i < 37; i++ {
		if d := byRow(r, i); d.ClusterID != nil {
			t.Errorf("page %d, the template and a few words, is clustered into %d", i, *d.ClusterID)
		}
	}
	if a, b := byRow(r, 37), byRow(r, 38); !sameCluster(a, b) {
		t.Error("pages 37 and 38, one body a word apart in the same template, are not clustered")
	}
	if n := r.Manifest.Counts["template_only_pages"]; n < 5 {
		t.Errorf("template_only_pages = %d, want at least the 5 bare-template pages", n)
	}
	if n := r.Manifest.Counts["template_pages"]; n != 39 {
		t.Errorf("template_pages = %d, want all 39 pages", n)
	}
}
