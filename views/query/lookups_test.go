package query

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/sampletest"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/transforms"
)

// TestLookupsAnswerAsLoaded: an output read a few pages a query (its
// lookup tables) answers every query as the same output loaded whole, the
// way query read every output before them (its docs, clusters and
// sketches tables read with parquet-go, nothing of the lookup tables):
// every URL, every document, every cluster's page (whole, and in pages of
// two), the clusters listing, and a text query of a part of every fifth
// document's text at any resemblance (every twentieth under min:64 and on
// multilingual-docs, whose text queries cost the most: a query reads
// every candidate's sketch or long text). On the sample crawl, the redirect
// crawl, the sample under min:64 sketches (whose text estimates need the
// candidates' sketches) and, with ../shared, three real corpora.
func TestLookupsAnswerAsLoaded(t *testing.T) {
	type run struct {
		name, input string
		config      func(*transforms.Config)
		textEvery   int // a text query of every textEvery-th document
	}
	runs := []run{
		{"sample", "../../testdata/crawl/*.parquet", nil, 5},
		{"redirects", "../../testdata/redirects/*.parquet", func(c *transforms.Config) {
			c.Columns.Redirect, c.Columns.URLRequired = "fetch_redirect", true
		}, 5},
		{"sample-min", "../../testdata/crawl/*.parquet", func(c *transforms.Config) {
			var err error
			if c.Sketch, err = sketch.Parse("min:64"); err != nil {
				t.Fatal(err)
			}
		}, 20},
	}
	for _, name := range []string{"cc-main-2019-30-sample.parquet", "deb-copyright.parquet", "multilingual-docs.parquet"} {
		if p, ok := shareddata.Optional(t, name); ok {
			every := 5
			if name == "multilingual-docs.parquet" {
				every = 20
			}
			runs = append(runs, run{name, p, nil, every})
		}
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			cfg := sampletest.Config()
			if r.config != nil {
				r.config(&cfg)
			}
			dir := filepath.Join(t.TempDir(), "out")
			if _, err := pipelines.Run(context.Background(), pipelines.Options{Input: r.input, Output: dir, Config: cfg}); err != nil {
				t.Fatal(err)
			}
			// The runs one after another (two jobs at once on one
			// embedded Prism can race in its artifact staging), the
			// comparisons, which read files only, side by side once
			// every run is done.
			t.Parallel()
			compareWithLoaded(t, dir, r.textEvery)
		})
	}
}

// compareWithLoaded compares the answers of the output in dir opened for
// lookups with those of the same output loaded whole, a text query of
// every textEvery-th document among them.
func compareWithLoaded(t *testing.T, dir string, textEvery int) {
	ctx := context.Background()
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ix.src.(*lookups); !ok || ix.Note != "" {
		t.Fatalf("the output is not read by lookups: %T, %q", ix.src, ix.Note)
	}
	ref := *ix
	if ref.src, err = load(ctx, dir, ix.Manifest); err != nil {
		t.Fatal(err)
	}
	docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
	if err != nil {
		t.Fatal(err)
	}
	if ix.NumDocs() != len(docs) || ref.NumDocs() != len(docs) {
		t.Errorf("%d docs by lookups, %d loaded, %d rows", ix.NumDocs(), ref.NumDocs(), len(docs))
	}
	same := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			i := 0
			for i < min(len(g), len(w)) && g[i] == w[i] {
				i++
			}
			from := max(0, i-300)
			t.Fatalf("%s: lookups answer\n...%s\nloaded\n...%s", what, g[from:min(len(g), i+300)], w[from:min(len(w), i+300)])
		}
	}
	urls := map[string]bool{}
	clusters := map[int64]bool{}
	for i, d := range docs {
		got, ok, err := ix.Doc(ctx, d.DocID)
		want, wok, werr := ref.Doc(ctx, d.DocID)
		if err != nil || werr != nil || !ok || !wok {
			t.Fatalf("doc %d: %v %v %v %v", d.DocID, ok, wok, err, werr)
		}
		same("doc", got, want)
		if d.URL != nil && !urls[*d.URL] {
			urls[*d.URL] = true
			got, err := ix.URL(ctx, *d.URL, false)
			want, werr := ref.URL(ctx, *d.URL, false)
			if err != nil || werr != nil {
				t.Fatalf("%s: %v, %v", *d.URL, err, werr)
			}
			same("url "+*d.URL, got, want)
		}
		if d.ClusterID != nil && !clusters[*d.ClusterID] {
			clusters[*d.ClusterID] = true
			c, members, n, ok, err := ix.ClusterPage(ctx, *d.ClusterID, 0, 1<<30)
			wc, wmembers, wn, wok, werr := ref.ClusterPage(ctx, *d.ClusterID, 0, 1<<30)
			if err != nil || werr != nil || !ok || !wok || n != len(members) {
				t.Fatalf("cluster %d: %v %v %v %v, %d members of %d", *d.ClusterID, ok, wok, err, werr, len(members), n)
			}
			same("cluster", []any{c, members, n}, []any{wc, wmembers, wn})
			// As a cluster page lists them: the kept document first,
			// then by doc ID.
			for i, m := range members {
				if i == 0 && (!m.Kept || m.DocID != c.RepresentativeDocID) || i > 0 && (m.Kept || i > 1 && m.DocID < members[i-1].DocID) {
					t.Fatalf("cluster %d: member %d is doc %d (kept %v): not the kept document first, then by doc ID", c.ClusterID, i, m.DocID, m.Kept)
				}
			}
			var paged []Member
			for off := 0; off < n; off += 2 {
				_, page, _, _, err := ix.ClusterPage(ctx, *d.ClusterID, off, 2)
				if err != nil {
					t.Fatal(err)
				}
				paged = append(paged, page...)
			}
			same("cluster in pages of two", paged, members)
		}
		if i%textEvery == 0 && d.Status == tables.StatusOK {
			row, err := crawl.ReadRow(ctx, d.SourceFile, d.SourceRow, ix.cfg.Columns)
			if err != nil {
				t.Fatal(err)
			}
			page := Page{Content: row.Content[:len(row.Content)*3/4], HTML: ix.cfg.Columns.HTML != ""}
			got, err := ix.Text(ctx, page, 0, 0, false)
			want, werr := ref.Text(ctx, page, 0, 0, false)
			if (err == nil) != (werr == nil) {
				t.Fatalf("text of doc %d: %v, loaded %v", d.DocID, err, werr)
			}
			same("text", got, want)
		}
	}
	// The members table against the docs and sketches tables: every
	// clustered document once, a representative with its sketch.
	members, err := tables.ReadTable[tables.Member](ctx, dir, tables.MembersTable)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := tables.ReadTable[tables.Sketch](ctx, dir, tables.SketchesTable)
	if err != nil {
		t.Fatal(err)
	}
	sketchOf := map[int64][]int64{}
	for _, r := range reps {
		sketchOf[r.DocID] = r.Sketch
	}
	clustered := 0
	for _, d := range docs {
		if d.ClusterID != nil {
			clustered++
		}
	}
	withSketch := 0
	for _, m := range members {
		if want := sketchOf[m.DocID]; !slices.Equal(m.Sketch, want) {
			t.Fatalf("members row of doc %d: sketch %v, the sketches table %v", m.DocID, m.Sketch, want)
		}
		if len(m.Sketch) > 0 {
			withSketch++
		}
	}
	if len(members) != clustered || withSketch == 0 {
		t.Errorf("%d members rows (%d with a sketch), %d clustered docs", len(members), withSketch, clustered)
	}
	got, n, err := ix.Clusters(ctx, 0, 1<<30)
	want, wn, werr := ref.Clusters(ctx, 0, 1<<30)
	if err != nil || werr != nil || n != wn || n != len(clusters) {
		t.Fatalf("clusters: %d, loaded %d, in docs %d; %v %v", n, wn, len(clusters), err, werr)
	}
	same("largest clusters", got, want[:min(len(want), tables.LargestClusters)])
	if len(urls) == 0 || len(clusters) == 0 || !slices.ContainsFunc(docs, func(d tables.Doc) bool { return d.IdenticalTo != nil }) {
		t.Errorf("%d URLs, %d clusters: nothing much compared", len(urls), len(clusters))
	}
}

// TestOutputWithoutLookupTables: an output without the lookup tables
// (written before them, or with --tables leaving them out) is loaded
// whole, with a note naming the missing tables and what to run, and
// answers every URL query as the same output with them.
func TestOutputWithoutLookupTables(t *testing.T) {
	ctx := context.Background()
	_, ix := sample(t)
	cfg := sampletest.Config()
	cfg.Tables = tables.Selection{tables.DocsTable, tables.ClustersTable, tables.SketchesTable}
	dir := filepath.Join(t.TempDir(), "out")
	if _, err := pipelines.Run(ctx, pipelines.Options{Input: "../../testdata/crawl/*.parquet", Output: dir, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	old, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := old.src.(*loaded); !ok || !strings.Contains(old.Note, "urls, members, largest") || !strings.Contains(old.Note, "runner recluster --from "+dir) {
		t.Errorf("an output without the lookup tables: %T, note %q", old.src, old.Note)
	}
	docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range docs {
		if d.URL == nil || d.ClusterID == nil {
			continue
		}
		got, err := old.URL(ctx, *d.URL, false)
		want, werr := ix.URL(ctx, *d.URL, false)
		if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: loaded %+v (%v), with lookups %+v (%v)", *d.URL, got, err, want, werr)
		}
		n++
	}
	if n < 100 {
		t.Errorf("%d clustered URLs compared", n)
	}
}
