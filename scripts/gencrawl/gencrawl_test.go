package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/scripts/gencrawl/synth"
	"github.com/parquet-go/parquet-go"
	"golang.org/x/net/html"
)

const testSeed = 1

var (
	genOnce sync.Once
	genRoot string
	genOut  *Output
	genErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if genRoot != "" {
		os.RemoveAll(genRoot)
	}
	os.Exit(code)
}

// generated returns the directory of one generation with the default seed
// (shared by all tests) and its in-memory output.
func generated(t *testing.T) (crawlDir, htmlDir string, out *Output) {
	t.Helper()
	genOnce.Do(func() {
		genRoot, genErr = os.MkdirTemp("", "gencrawl-test-")
		if genErr != nil {
			return
		}
		genOut, genErr = Generate(filepath.Join(genRoot, "crawl"), filepath.Join(genRoot, "html"), testSeed)
	})
	if genErr != nil {
		t.Fatal(genErr)
	}
	return filepath.Join(genRoot, "crawl"), filepath.Join(genRoot, "html"), genOut
}

func outputFiles() (crawl, htmlFiles []string) {
	for i := 0; i < DefaultCrawlConfig().Files; i++ {
		crawl = append(crawl, synth.PartName(i))
	}
	crawl = append(crawl, "truth.json")
	return crawl, []string{HTMLPages, "truth.json"}
}

func compareDirs(t *testing.T, gotDir, wantDir string, files []string, hint string) {
	t.Helper()
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(gotDir, f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(wantDir, f))
		if err != nil {
			t.Errorf("%s: %v%s", f, err, hint)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs between %s (%d bytes) and %s (%d bytes)%s", f, gotDir, len(got), wantDir, len(want), hint)
		}
	}
}

func TestDeterministic(t *testing.T) {
	crawlDir, htmlDir, _ := generated(t)
	tmp := t.TempDir()
	if _, err := Generate(filepath.Join(tmp, "crawl"), filepath.Join(tmp, "html"), testSeed); err != nil {
		t.Fatal(err)
	}
	cf, hf := outputFiles()
	compareDirs(t, filepath.Join(tmp, "crawl"), crawlDir, cf, "")
	compareDirs(t, filepath.Join(tmp, "html"), htmlDir, hf, "")
}

func TestCommittedTestdataUpToDate(t *testing.T) {
	committed := filepath.Join("..", "..", "testdata")
	if _, err := os.Stat(filepath.Join(committed, "crawl")); errors.Is(err, os.ErrNotExist) {
		t.Fatal("testdata/crawl is absent, though the repository holds it; generate it with `go run ./scripts/gencrawl` from the module root")
	}
	crawlDir, htmlDir, _ := generated(t)
	hint := "; regenerate with `go run ./scripts/gencrawl` from the module root"
	cf, hf := outputFiles()
	compareDirs(t, crawlDir, filepath.Join(committed, "crawl"), cf, hint)
	compareDirs(t, htmlDir, filepath.Join(committed, "html"), hf, hint)
	_, _, out := generated(t)
	redirects := filepath.Join(t.TempDir(), "redirects")
	if err := os.MkdirAll(redirects, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := out.WriteRedirects(redirects); err != nil {
		t.Fatal(err)
	}
	compareDirs(t, redirects, filepath.Join(committed, "redirects"), []string{"part-00000.parquet", RedirectsPart}, hint)
	recrawl := filepath.Join(t.TempDir(), "redirects-recrawl")
	if err := os.MkdirAll(recrawl, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := out.WriteRecrawl(recrawl); err != nil {
		t.Fatal(err)
	}
	compareDirs(t, recrawl, filepath.Join(committed, "redirects-recrawl"), []string{RecrawlPart}, hint)
}

func readParquet[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := parquet.NewGenericReader[T](f)
	defer r.Close()
	var rows []T
	buf := make([]T, 100)
	for {
		n, err := r.Read(buf)
		rows = append(rows, buf[:n]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

type crawlData struct {
	truth  Truth
	files  map[string][]Row
	byID   map[string]Row
	rows   []Row // all rows, file by file
	sizeOf map[string]int64
}

func loadCrawl(t *testing.T) *crawlData {
	t.Helper()
	crawlDir, _, _ := generated(t)
	d := &crawlData{files: map[string][]Row{}, byID: map[string]Row{}, sizeOf: map[string]int64{}}
	b, err := os.ReadFile(filepath.Join(crawlDir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &d.truth); err != nil {
		t.Fatal(err)
	}
	for _, ft := range d.truth.Totals.Files {
		rows := readParquet[Row](t, filepath.Join(crawlDir, ft.File))
		d.files[ft.File] = rows
		d.rows = append(d.rows, rows...)
		for _, r := range rows {
			d.byID[r.ID] = r
		}
	}
	return d
}

func (d *crawlData) text(t *testing.T, m Member) string {
	t.Helper()
	rows := d.files[m.File]
	if m.Row < 0 || m.Row >= len(rows) || rows[m.Row].ID != m.ID || rows[m.Row].URL != m.URL {
		t.Fatalf("member %+v does not match its file/row", m)
	}
	return rows[m.Row].Text
}

func TestUniqueIDs(t *testing.T) {
	d := loadCrawl(t)
	ids, urls := map[string]bool{}, map[string]bool{}
	for _, r := range d.rows {
		if ids[r.ID] {
			t.Errorf("duplicate id %s", r.ID)
		}
		if urls[r.URL] {
			t.Errorf("duplicate url %s", r.URL)
		}
		ids[r.ID], urls[r.URL] = true, true
		for i := 0; i < len(r.Text); i++ {
			if r.Text[i] >= 0x80 {
				t.Fatalf("row %s: crawl text is not ASCII", r.ID)
			}
		}
		if !strings.HasPrefix(r.ID, "<urn:uuid:") || len(r.ID) != len("<urn:uuid:00000000-0000-0000-0000-000000000000>") {
			t.Errorf("bad id %q", r.ID)
		}
	}
	if len(ids) != d.truth.Totals.TotalRows || len(d.rows) != 3000 {
		t.Errorf("%d unique ids, %d rows, truth says %d", len(ids), len(d.rows), d.truth.Totals.TotalRows)
	}
	_, htmlDir, _ := generated(t)
	hids := map[string]bool{}
	for _, r := range readParquet[HTMLRow](t, filepath.Join(htmlDir, HTMLPages)) {
		if hids[r.ID] || ids[r.ID] {
			t.Errorf("duplicate html id %s", r.ID)
		}
		hids[r.ID] = true
	}
}

func TestSchemaAndRowGroups(t *testing.T) {
	crawlDir, _, _ := generated(t)
	want := []string{"text", "id", "dump", "url", "date", "file_path", "language", "language_score", "token_count"}
	for i := 0; i < DefaultCrawlConfig().Files; i++ {
		path := filepath.Join(crawlDir, synth.PartName(i))
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, fld := range pf.Schema().Fields() {
			names = append(names, fld.Name())
			if fld.Optional() || fld.Repeated() {
				t.Errorf("%s: column %s is not required", path, fld.Name())
			}
		}
		if !slices.Equal(names, want) {
			t.Errorf("%s: columns %v, want %v", path, names, want)
		}
		if n := len(pf.RowGroups()); n < 3 {
			t.Errorf("%s: %d row groups, want several", path, n)
		}
		for _, c := range pf.Metadata().RowGroups[0].Columns {
			if c.MetaData.Codec.String() != "ZSTD" {
				t.Errorf("%s: column %v codec %v", path, c.MetaData.PathInSchema, c.MetaData.Codec)
			}
		}
		f.Close()
	}
	d := loadCrawl(t)
	for _, r := range d.rows {
		if r.Dump != Dump || r.Language != "en" || !strings.HasPrefix(r.URL, "http") || len(r.Date) != len("2025-12-01T00:00:00Z") {
			t.Fatalf("bad row metadata %+v", r)
		}
	}
}

func TestSizes(t *testing.T) {
	crawlDir, htmlDir, _ := generated(t)
	var total int64
	for _, dir := range []string{crawlDir, htmlDir} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			total += fi.Size()
		}
	}
	t.Logf("total size %d bytes", total)
	if total >= 5<<20 {
		t.Errorf("testdata is %d bytes, want < 5 MB", total)
	}
	d := loadCrawl(t)
	var lens []int
	for _, r := range d.rows {
		lens = append(lens, len(Tokens(r.Text)))
	}
	slices.Sort(lens)
	med := lens[len(lens)/2]
	if med < 220 || med > 400 || lens[len(lens)-1] > 3300 || lens[len(lens)-1] < 2000 {
		t.Errorf("page length median %d max %d", med, lens[len(lens)-1])
	}
}

func metricsOf(a, b string) Metrics {
	return Compare(ShingleSet(Tokens(a)), ShingleSet(Tokens(b)))
}

func near(x, y float64) bool { return math.Abs(x-y) <= 2e-6 }

func TestPlantedGroups(t *testing.T) {
	d := loadCrawl(t)
	count := map[string]int{}
	seen := map[string]string{}
	for _, g := range d.truth.Groups {
		count[g.Kind]++
		texts := map[string]string{}
		for _, m := range g.Members {
			if prev, ok := seen[m.ID]; ok {
				t.Errorf("%s member %s also in %s", g.Group, m.ID, prev)
			}
			seen[m.ID] = g.Group
			texts[m.ID] = d.text(t, m)
			if n := len(Tokens(texts[m.ID])); n != m.Tokens {
				t.Errorf("%s: %s has %d tokens, truth says %d", g.Group, m.ID, n, m.Tokens)
			}
		}
		switch g.Kind {
		case KindExact:
			if len(g.Members) < 2 || len(g.Members) > 5 {
				t.Errorf("%s has %d members", g.Group, len(g.Members))
			}
			for _, m := range g.Members[1:] {
				if texts[m.ID] != texts[g.Members[0].ID] {
					t.Errorf("%s: texts differ", g.Group)
				}
			}
		case KindLexical:
			a, b := texts[g.Members[0].ID], texts[g.Members[1].ID]
			if a == b || !slices.Equal(Tokens(a), Tokens(b)) {
				t.Errorf("%s: not a lexical copy", g.Group)
			}
		case KindContained:
			long, short := g.Members[0], g.Members[1]
			if long.Tokens < 800 || short.Tokens < 60 || short.Tokens > 210 {
				t.Errorf("%s: lengths %d / %d", g.Group, long.Tokens, short.Tokens)
			}
			m := metricsOf(texts[short.ID], texts[long.ID])
			if m.ContAInB < 0.9 || m.Resemblance > 0.25 {
				t.Errorf("%s: containment %.3f resemblance %.3f", g.Group, m.ContAInB, m.Resemblance)
			}
		case KindBoilerplate:
			for _, m := range g.Members {
				if !strings.HasPrefix(texts[m.ID], g.Header+"\n") || !strings.HasSuffix(texts[m.ID], "\n"+g.Footer) {
					t.Fatalf("%s: %s lacks the site header/footer", g.Group, m.ID)
				}
			}
			if *g.MaxPairResemblance > 0.15 {
				t.Errorf("%s: boilerplate pages resemble each other too much: %v", g.Group, *g.MaxPairResemblance)
			}
		}
		// every recorded pair matches a recomputation from the parquet rows
		for _, p := range g.Pairs {
			m := metricsOf(texts[p.A], texts[p.B])
			if !near(m.Resemblance, p.Resemblance) || !near(m.ContAInB, p.ContainmentAInB) || !near(m.ContBInA, p.ContainmentBInA) {
				t.Errorf("%s: pair %s %s: recomputed %+v, truth %+v", g.Group, p.A, p.B, m, p)
			}
			if g.Kind == KindNear && p.Targeted && math.Abs(m.Resemblance-g.Target) > NearTolerance {
				t.Errorf("%s: resemblance %.4f, target %.2f", g.Group, m.Resemblance, g.Target)
			}
			if g.Kind == KindLexical && m.Resemblance != 1 {
				t.Errorf("%s: lexical resemblance %v", g.Group, m.Resemblance)
			}
		}
		if g.Kind == KindNear || g.Kind == KindLexical || g.Kind == KindContained {
			n := len(g.Members)
			if len(g.Pairs) != n*(n-1)/2 {
				t.Errorf("%s: %d pairs for %d members", g.Group, len(g.Pairs), n)
			}
		}
	}
	perLevel := map[float64]int{}
	for _, g := range d.truth.Groups {
		if g.Kind == KindNear {
			perLevel[g.Target]++
		}
	}
	for _, l := range NearLevels {
		if perLevel[l] < 20 {
			t.Errorf("only %d near groups at %.2f", perLevel[l], l)
		}
	}
	if count[KindExact] < 50 || count[KindLexical] < 10 || count[KindContained] < 20 || count[KindBoilerplate] < 2 {
		t.Errorf("group counts %v", count)
	}
	whats := map[string]bool{}
	for _, e := range d.truth.EdgeRows {
		r := d.byID[e.ID]
		if r.Text != e.Text || len(Tokens(r.Text)) != e.Tokens || e.Tokens >= ShingleSize {
			t.Errorf("edge row %+v does not match", e)
		}
		whats[e.What] = true
	}
	for _, w := range []string{"empty", "whitespace_only", "five_words"} {
		if !whats[w] {
			t.Errorf("missing edge row %s", w)
		}
	}
	if len(d.truth.UnrelatedSample) < 40 {
		t.Errorf("unrelated sample has %d ids", len(d.truth.UnrelatedSample))
	}
	for _, m := range d.truth.UnrelatedSample {
		d.text(t, m)
		if _, ok := seen[m.ID]; ok {
			t.Errorf("unrelated %s is in group %s", m.ID, seen[m.ID])
		}
	}
	if d.truth.Totals.MaxUnplantedResemblance > 0.1 {
		t.Errorf("unplanted pages resemble each other: %v", d.truth.Totals.MaxUnplantedResemblance)
	}
}

// TestNoDuplicatesAdjacent checks that planted copies were shuffled apart.
func TestNoDuplicatesAdjacent(t *testing.T) {
	d := loadCrawl(t)
	pos := map[string]int{}
	for i, r := range d.rows {
		pos[r.ID] = i
	}
	for _, g := range d.truth.Groups {
		if g.Kind == KindBoilerplate {
			continue
		}
		for _, a := range g.Members {
			for _, b := range g.Members {
				if diff := pos[a.ID] - pos[b.ID]; diff == 1 {
					t.Errorf("%s: members %s and %s are adjacent", g.Group, a.ID, b.ID)
				}
			}
		}
	}
}

func TestVeryCommonTemplate(t *testing.T) {
	d := loadCrawl(t)
	df := map[uint64]int{}
	for _, r := range d.rows {
		for h := range hashShingles(Tokens(r.Text)) {
			df[h]++
		}
	}
	common := 0
	for _, n := range df {
		if n > 1000 {
			common++
		}
	}
	if common < 10 {
		t.Errorf("%d shingles occur in more than 1000 documents, want the header/footer of a big site", common)
	}
	big := 0
	for _, g := range d.truth.Groups {
		if g.Kind == KindBoilerplate {
			big = max(big, len(g.Members))
		}
	}
	if big <= 1000 || d.truth.Totals.MaxShingleDocFreq <= 1000 {
		t.Errorf("largest site has %d pages, max df %d", big, d.truth.Totals.MaxShingleDocFreq)
	}
}

// visibleTokens extracts the visible text of an html page with x/net/html;
// sep is written between text nodes.
func visibleTokens(t *testing.T, doc string, sep string) []string {
	t.Helper()
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var walk func(n *html.Node, inBody bool)
	walk = func(n *html.Node, inBody bool) {
		switch n.Type {
		case html.CommentNode:
			return
		case html.TextNode:
			if inBody {
				b.WriteString(n.Data)
				b.WriteString(sep)
			}
			return
		case html.ElementNode:
			switch n.Data {
			case "script", "style", "head":
				return
			case "body":
				inBody = true
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBody)
		}
	}
	walk(root, false)
	return Tokens(b.String())
}

func TestHTML(t *testing.T) {
	_, htmlDir, out := generated(t)
	rows := readParquet[HTMLRow](t, filepath.Join(htmlDir, HTMLPages))
	var tr HTMLTruth
	b, err := os.ReadFile(filepath.Join(htmlDir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &tr); err != nil {
		t.Fatal(err)
	}
	if len(rows) != tr.TotalRows || len(rows) != len(out.HTMLVisible) || len(rows) < 50 {
		t.Fatalf("%d rows, truth %d", len(rows), tr.TotalRows)
	}
	hidden := map[string]bool{}
	for _, w := range tr.HiddenWords {
		hidden[w] = true
	}
	toks := make([][]string, len(rows))
	for i, r := range rows {
		toks[i] = visibleTokens(t, r.HTML, " ")
		if !slices.Equal(toks[i], out.HTMLVisible[i]) {
			t.Errorf("row %d: extracted visible tokens differ from the generator's", i)
		}
		if !slices.Equal(visibleTokens(t, r.HTML, ""), toks[i]) {
			t.Errorf("row %d: tokens depend on text node separation", i)
		}
		for _, w := range toks[i] {
			if hidden[w] {
				t.Errorf("row %d: hidden word %q is visible", i, w)
			}
		}
		allToks := Tokens(r.HTML)
		nHidden := 0
		for _, w := range allToks {
			if hidden[w] {
				nHidden++
			}
		}
		if nHidden < 20 {
			t.Errorf("row %d: only %d hidden words in the markup", i, nHidden)
		}
		if !strings.Contains(r.HTML, "<script") || !strings.Contains(r.HTML, "<style") || !strings.Contains(r.HTML, "<!--") ||
			!strings.Contains(strings.ToLower(r.HTML), "<!doctype html>") || !strings.Contains(r.HTML, "<title>") {
			t.Errorf("row %d lacks some html feature", i)
		}
		if !(strings.Contains(r.HTML, "&amp;") || strings.Contains(r.HTML, "&#38;")) ||
			!(strings.Contains(r.HTML, "&nbsp;") || strings.Contains(r.HTML, "&#160;")) {
			t.Errorf("row %d lacks entities", i)
		}
	}
	kinds := map[string]int{}
	for _, g := range tr.Groups {
		kinds[g.Kind]++
		for _, p := range g.Pairs {
			var a, b int = -1, -1
			for i, r := range rows {
				if r.ID == p.A {
					a = i
				}
				if r.ID == p.B {
					b = i
				}
			}
			m := Compare(ShingleSet(toks[a]), ShingleSet(toks[b]))
			if !near(m.Resemblance, p.Resemblance) {
				t.Errorf("%s: resemblance %v, truth %v", g.Group, m.Resemblance, p.Resemblance)
			}
			switch g.Kind {
			case KindLexical:
				if m.Resemblance != 1 || rows[a].HTML == rows[b].HTML {
					t.Errorf("%s: not a markup variant", g.Group)
				}
			case KindNear:
				if math.Abs(m.Resemblance-g.Target) > NearTolerance {
					t.Errorf("%s: resemblance %v", g.Group, m.Resemblance)
				}
			}
		}
		if g.Kind == KindSharedMark && (*g.MaxPairResemblance > 0.1 || len(g.Members) < 5) {
			t.Errorf("%s: max resemblance %v", g.Group, *g.MaxPairResemblance)
		}
	}
	if kinds[KindLexical] < 5 || kinds[KindNear] < 5 || kinds[KindSharedMark] < 1 {
		t.Errorf("html groups %v", kinds)
	}
}
