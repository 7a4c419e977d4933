package query

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/features/shingle"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/sampletest"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/text/canon"
)

func TestMain(m *testing.M) { beamtest.Main(m) }

var (
	sampleOnce sync.Once
	sampleDir  string
	sampleErr  error
)

// sample is the sample crawl's output, run once for all the tests.
func sample(t *testing.T) (string, *Index) {
	t.Helper()
	sampleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "neardup-query-")
		if err != nil {
			sampleErr = err
			return
		}
		sampleDir = filepath.Join(dir, "out")
		_, sampleErr = pipelines.Run(context.Background(), pipelines.Options{Input: "../../testdata/crawl/*.parquet", Output: sampleDir, Config: sampletest.Config()})
	})
	if sampleErr != nil {
		t.Fatal(sampleErr)
	}
	ix, err := Open(context.Background(), sampleDir)
	if err != nil {
		t.Fatal(err)
	}
	return sampleDir, ix
}

// pairKey orders a pair of doc IDs.
func pairKey(a, b int64) [2]int64 { return [2]int64{min(a, b), max(a, b)} }

// TestURL queries the URL of a member of every cluster of three or more:
// the answer has the docs table's cluster, kept document and members,
// and each member's estimate is the one the pipeline wrote in the pairs
// table for that pair (or 1 for identical copies and the document itself).
func TestURL(t *testing.T) {
	ctx := context.Background()
	dir, ix := sample(t)
	docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := tables.ReadTable[tables.Pair](ctx, dir, tables.PairsTable)
	if err != nil {
		t.Fatal(err)
	}
	stored := map[[2]int64]tables.Pair{}
	for _, p := range pairs {
		stored[pairKey(p.DocA, p.DocB)] = p
	}
	members := map[int64][]tables.Doc{}
	urls := map[string]int{}
	for _, d := range docs {
		if d.ClusterID != nil {
			members[*d.ClusterID] = append(members[*d.ClusterID], d)
		}
		if d.URL != nil {
			urls[*d.URL]++
		}
	}
	checked, compared := 0, 0
	for cid, ms := range members {
		if len(ms) < 3 {
			continue
		}
		d := ms[len(ms)-1]
		if d.URL == nil || urls[*d.URL] != 1 {
			continue
		}
		answers, err := ix.URL(ctx, *d.URL, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(answers) != 1 {
			t.Fatalf("%s: %d answers, want 1", *d.URL, len(answers))
		}
		a := answers[0]
		if a.Doc.DocID != d.DocID || a.Cluster == nil || a.Cluster.ClusterID != cid || a.Cluster.Size != int64(len(ms)) {
			t.Fatalf("%s: doc %d in cluster %+v, want doc %d in cluster %d of %d", *d.URL, a.Doc.DocID, a.Cluster, d.DocID, cid, len(ms))
		}
		if a.Kept == nil || d.KeptDocID == nil || a.Kept.DocID != *d.KeptDocID || !a.Kept.Kept {
			t.Errorf("%s: kept %+v, want doc %v", *d.URL, a.Kept, d.KeptDocID)
		}
		if len(a.Members) != len(ms) {
			t.Fatalf("%s: %d members, want %d", *d.URL, len(a.Members), len(ms))
		}
		for i, m := range a.Members {
			if i > 0 && m.Resemblance > a.Members[i-1].Resemblance {
				t.Errorf("%s: members not most alike first", *d.URL)
			}
			self := m.DocID == d.DocID
			sameRep := repOf(m.Doc) == repOf(a.Doc)
			if p, ok := stored[pairKey(repOf(m.Doc), repOf(a.Doc))]; ok && !sameRep {
				compared++
				if m.Resemblance != p.Resemblance || m.Shared != int(p.Shared) {
					t.Errorf("%s: member %d resemblance %v (%d shared), pairs table %v (%d)", *d.URL, m.DocID, m.Resemblance, m.Shared, p.Resemblance, p.Shared)
				}
			}
			if (self || sameRep) && m.Resemblance != 1 {
				t.Errorf("%s: member %d, the document itself or its identical copy, resemblance %v", *d.URL, m.DocID, m.Resemblance)
			}
		}
		checked++
	}
	t.Logf("%d clusters checked, %d estimates compared with the pairs table", checked, compared)
	if checked == 0 || compared == 0 {
		t.Fatalf("%d clusters checked, %d estimates compared with the pairs table: the sample should give some", checked, compared)
	}
	if _, err := ix.URL(ctx, "https://nowhere.test/none", false); !errors.Is(err, ErrUnknownURL) {
		t.Errorf("unknown URL: %v, want ErrUnknownURL", err)
	}
}

func repOf(d Doc) int64 {
	if d.Identical != nil {
		return *d.Identical
	}
	return d.DocID
}

// exactSet computes a text's shingle set the long way, from its tokens.
func exactSet(text string) []uint64 {
	return shingle.Fingerprints(nil, fingerprint.New(fingerprint.DefaultSeed), canon.Tokens(text), 10)
}

// TestTextAndExact looks up a page made from an indexed document with a
// few words changed: the document is the best match, with a high
// estimate; and with exact, its full-set resemblance is the Jaccard of
// the two shingle sets computed the long way. The page's own text finds
// it at resemblance 1, and so does the page wrapped in HTML.
func TestTextAndExact(t *testing.T) {
	ctx := context.Background()
	dir, ix := sample(t)
	docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(docs, func(a, b tables.Doc) int { return cmp.Compare(a.DocID, b.DocID) })
	var d *tables.Doc
	for i := range docs {
		if docs[i].TokenCount > 300 && docs[i].ClusterID != nil && docs[i].IdenticalTo == nil {
			d = &docs[i]
			break
		}
	}
	if d == nil {
		t.Fatal("no clustered document of 300 tokens in the sample")
	}
	row, err := crawl.ReadRow(ctx, d.SourceFile, d.SourceRow, crawl.Columns{Text: "text"})
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Fields(row.Content)
	for i := 40; i < len(words); i += 60 {
		words[i] = "changed"
	}
	edited := strings.Join(words, " ")

	matches, err := ix.Text(ctx, Page{Content: edited}, 0.5, 10, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(matches) == 0 {
		t.Fatal("no match for an edited copy of an indexed page")
	}
	var self *Match
	for i := range matches {
		if matches[i].DocID == d.DocID {
			self = &matches[i]
		}
		if i > 0 && max(matches[i].Resemblance, *matches[i].OfQuery) > max(matches[i-1].Resemblance, *matches[i-1].OfQuery) {
			t.Errorf("matches not best first: %+v", matches)
		}
	}
	if self == nil {
		t.Fatalf("doc %d, which the page was made from, not among %d matches", d.DocID, len(matches))
	}
	a, b := exactSet(edited), exactSet(row.Content)
	want := sketch.Jaccard(a, b)
	if self.Exact == nil || self.Exact.Resemblance != want || want >= 1 || want < 0.5 {
		t.Errorf("exact resemblance %+v, want %v (between 0.5 and 1)", self.Exact, want)
	}
	if got := float64(sketch.IntersectCount(a, b)) / float64(len(a)); self.Exact.OfQuery != got {
		t.Errorf("exact containment of the page in doc %d: %v, want %v", d.DocID, self.Exact.OfQuery, got)
	}
	if self.Resemblance < 0.5 || self.Resemblance >= 1 {
		t.Errorf("estimated resemblance %v of a few changed words", self.Resemblance)
	}

	for _, page := range []Page{{Content: row.Content}, {Content: "<html><body><nav><a href=/>Home</a></nav><article><p>" + row.Content + "</p></article><script>var x = 1;</script></body></html>", HTML: true}} {
		matches, err := ix.Text(ctx, page, 0.99, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(matches) == 0 || matches[0].Resemblance != 1 {
			t.Fatalf("the page's own text (HTML %v): %+v", page.HTML, matches)
		}
		found := false
		for _, m := range matches {
			found = found || m.DocID == d.DocID
		}
		if !found {
			t.Errorf("the page's own text (HTML %v): doc %d not among %d matches", page.HTML, d.DocID, len(matches))
		}
	}

	// The document's first half is contained in it: found by
	// containment though its resemblance is about a half.
	half := strings.Join(strings.Fields(row.Content)[:len(strings.Fields(row.Content))/2], " ")
	matches, err = ix.Text(ctx, Page{Content: half}, 0.9, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	self = nil
	for i := range matches {
		if matches[i].DocID == d.DocID {
			self = &matches[i]
		}
	}
	if self == nil || *self.OfQuery < 0.9 || *self.InQuery > 0.7 || self.Resemblance > 0.7 || self.Exact.OfQuery != 1 {
		t.Errorf("the first half of doc %d: %+v, want it contained (estimate at least 0.9, exact 1) and resembling about half", d.DocID, self)
	}

	if _, err := ix.Text(ctx, Page{Content: "too short"}, 0.5, 0, false); !errors.Is(err, ErrNoSketch) || !strings.Contains(err.Error(), "too few") {
		t.Errorf("a two-word page: %v", err)
	}
}

// TestRefusals: a folder without _SUCCESS, an output of another
// fingerprint version, and a text query on an index with site templates
// are refused, each saying why.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	dir, _ := sample(t)
	if _, err := Open(ctx, t.TempDir()); err == nil || !strings.Contains(err.Error(), output.SuccessMarker) {
		t.Errorf("folder without %s: %v", output.SuccessMarker, err)
	}
	ix, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	m := *ix.Manifest
	m.Settings = map[string]string{}
	for k, v := range ix.Manifest.Settings {
		m.Settings[k] = v
	}
	m.Settings["fingerprint_version"] = "1"
	if _, err := configOf(&m); err == nil || !strings.Contains(err.Error(), "fingerprint version 1") {
		t.Errorf("another fingerprint version: %v", err)
	}
	m.Settings["fingerprint_version"] = ix.Manifest.Settings["fingerprint_version"]
	m.Settings["template_shingles"] = "auto"
	templ := &Index{Dir: ix.Dir, Manifest: &m, cfg: ix.cfg}
	if _, err := templ.Text(ctx, Page{Content: strings.Repeat("word ", 100)}, 0.5, 0, false); err == nil || !strings.Contains(err.Error(), "template") {
		t.Errorf("text query on an index with site templates: %v", err)
	}
}

// TestSharedSpans marks exactly the words of the shingles two texts
// share: the 15 words they begin with, punctuation and all, and nothing
// of their different ends.
func TestSharedSpans(t *testing.T) {
	_, ix := sample(t)
	var common, endA, endB []string
	for i := range 15 {
		common = append(common, fmt.Sprintf("Word%d,", i))
		endA = append(endA, fmt.Sprintf("alpha%d", i))
		endB = append(endB, fmt.Sprintf("beta%d", i))
	}
	a := strings.Join(common, " ") + "  " + strings.Join(endA, " ")
	b := strings.Join(common, "\n") + " " + strings.Join(endB, " ")
	inA, inB := ix.SharedSpans(a, b)
	wantA := []Span{{0, len(strings.Join(common, " "))}}
	wantB := []Span{{0, len(strings.Join(common, "\n"))}}
	if !slices.Equal(inA, wantA) || !slices.Equal(inB, wantB) {
		t.Errorf("shared spans %v and %v, want %v and %v", inA, inB, wantA, wantB)
	}
	if inA, _ := ix.SharedSpans(strings.Join(endA, " "), strings.Join(endB, " ")); len(inA) != 0 {
		t.Errorf("texts with no shingle in common: %v marked", inA)
	}
}

// TestRedirectChain: a query shows a redirect's chain through the output's
// documents: two hops to the page a two-hop redirect joined, with the
// documents there; a cycle back to its first URL; a dead end with no
// document and the reason.
func TestRedirectChain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	cfg := sampletest.Config()
	cfg.Columns.Redirect, cfg.Columns.URLRequired = "fetch_redirect", true
	if _, err := pipelines.Run(context.Background(), pipelines.Options{Input: "../../testdata/redirects/*.parquet", Output: dir, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	// scripts/gencrawl: old.example/0 -> moved.example/0 -> the first page.
	answers, err := ix.URL(context.Background(), "https://old.example/0", false)
	if err != nil || len(answers) != 1 {
		t.Fatalf("%v, %v", answers, err)
	}
	page, _, _ := ix.Doc(context.Background(), 0)
	d := answers[0].Doc
	if len(d.Chain) != 2 || d.Chain[0].URL != "https://moved.example/0" || d.Chain[0].Status != tables.StatusRedirect ||
		d.Chain[1].URL != page.URL || d.Chain[1].DocID == nil || *d.Chain[1].DocID != 0 || d.JoinedBy != tables.JoinedByRedirect ||
		answers[0].Cluster == nil || page.ClusterID == nil || answers[0].Cluster.ClusterID != *page.ClusterID {
		t.Errorf("two hops: %+v in cluster %+v; the page %+v", d, answers[0].Cluster, page)
	}
	answers, _ = ix.URL(context.Background(), "https://loop.example/a0", false)
	if d := answers[0].Doc; len(d.Chain) != 2 || d.Chain[1].URL != "https://loop.example/a0" || answers[0].Cluster != nil || !strings.Contains(d.Reason, "cycle") {
		t.Errorf("cycle: %+v", d)
	}
	answers, _ = ix.URL(context.Background(), "https://away.example/0", false)
	if d := answers[0].Doc; len(d.Chain) != 1 || d.Chain[0].DocID != nil || !strings.Contains(d.Reason, "not in the input") {
		t.Errorf("dead end: %+v", d)
	}
	if p, _, _ := ix.Doc(context.Background(), 0); len(p.Chain) != 0 {
		t.Errorf("a page has a chain: %+v", p)
	}
}
