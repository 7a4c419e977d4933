package report

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/sampletest"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
)

func TestMain(m *testing.M) { beamtest.Main(m) }

// sampleOutput runs the pipeline on the repository's sample crawl.
func sampleOutput(tb testing.TB) (string, *output.Manifest) {
	tb.Helper()
	return sampletest.Run(tb, "../../testdata/crawl/*.parquet")
}

func render(tb testing.TB, dir string) []byte {
	tb.Helper()
	var b bytes.Buffer
	if err := Write(context.Background(), dir, &b); err != nil {
		tb.Fatalf("Write: %v", err)
	}
	return b.Bytes()
}

func TestSample(t *testing.T) {
	ctx := context.Background()
	dir, m := sampleOutput(t)
	start := time.Now()
	page := render(t, dir)
	t.Logf("Write took %v on the sample output (%d docs): %d bytes of HTML", time.Since(start), m.Counts["docs"], len(page))
	doc := parse(t, page)

	docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
	if err != nil {
		t.Fatal(err)
	}
	clusters, err := tables.ReadTable[tables.Cluster](ctx, dir, tables.ClustersTable)
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := tables.ReadTable[tables.Pair](ctx, dir, tables.PairsTable)
	if err != nil {
		t.Fatal(err)
	}
	if len(clusters) == 0 || len(pairs) == 0 {
		t.Fatalf("the sample gave %d clusters and %d pairs; the checks below need some", len(clusters), len(pairs))
	}

	t.Run("self-contained", func(t *testing.T) {
		if n := len(findAll(doc, isElement("svg"))); n != 2 {
			t.Errorf("%d <svg> elements, want the 2 plots", n)
		}
		checkSelfContained(t, doc)
		if w := findAll(doc, hasClass("warning")); len(w) > 0 {
			t.Errorf("warnings on the sample: %q", text(w[0]))
		}
	})

	t.Run("accounting", func(t *testing.T) {
		cells := keyed(doc)
		for _, key := range []string{"docs", "docs_ok", "docs_empty", "docs_too_short", "docs_rejected",
			"docs_in_clusters", "docs_alone", "docs_empty_or_rejected", "clusters", "pairs", "links", "pairs_written"} {
			want, ok := m.Counts[key]
			if !ok {
				t.Errorf("the manifest has no count %s", key)
				continue
			}
			if got := number(t, cells[key]); got != want {
				t.Errorf("%s: report shows %d, manifest %d", key, got, want)
			}
		}
		if got := number(t, cells["docs_rows"]); got != int64(len(docs)) {
			t.Errorf("docs rows: report shows %d, the table has %d", got, len(docs))
		}
		var dups int64
		for _, d := range docs {
			if d.ClusterID != nil && d.KeptDocID != nil && *d.KeptDocID != d.DocID {
				dups++
			}
		}
		if got := number(t, cells["duplicates"]); got != dups {
			t.Errorf("duplicates: report shows %d, the docs table has %d", got, dups)
		}
		if got := number(t, cells["input_files"]); got != int64(len(m.Inputs)) {
			t.Errorf("input files: report shows %d, manifest %d", got, len(m.Inputs))
		}
		if got := cells["input_bytes"].title; got != group(m.InputBytes)+" bytes" {
			t.Errorf("input bytes: report shows %q, manifest %d", got, m.InputBytes)
		}
		secs, err := strconv.ParseFloat(strings.TrimSuffix(cells["wall_seconds"].text, " s"), 64)
		if err != nil || math.Abs(secs-m.WallSeconds) > 0.0051 {
			t.Errorf("wall time: report shows %q, manifest %v", cells["wall_seconds"].text, m.WallSeconds)
		}
		settings := rows(t, doc, "settings-table")
		if len(settings) != len(m.Settings) {
			t.Errorf("%d settings shown, manifest has %d", len(settings), len(m.Settings))
		}
		for i, r := range settings {
			if m.Settings[r[0]] != r[1] {
				t.Errorf("setting %s: report shows %q, manifest %q", r[0], r[1], m.Settings[r[0]])
			}
			if i > 0 && settings[i-1][0] >= r[0] {
				t.Errorf("settings not sorted: %s before %s", settings[i-1][0], r[0])
			}
		}
	})

	t.Run("largest clusters", func(t *testing.T) {
		want := slices.MinFunc(clusters, func(a, b tables.Cluster) int {
			return cmp.Or(cmp.Compare(b.Size, a.Size), cmp.Compare(a.ClusterID, b.ClusterID))
		})
		table := rows(t, doc, "largest-table")
		if len(table) != min(topClusters, len(clusters)) {
			t.Fatalf("%d clusters listed, want %d", len(table), min(topClusters, len(clusters)))
		}
		if table[0][0] != strconv.FormatInt(want.ClusterID, 10) || table[0][1] != group(want.Size) {
			t.Errorf("first cluster listed: %s of size %s; the largest is %d of size %d", table[0][0], table[0][1], want.ClusterID, want.Size)
		}
		// Its samples: members of it, its kept document first, then by
		// doc ID.
		members := map[int64]tables.Doc{}
		for _, d := range docs {
			if d.ClusterID != nil && *d.ClusterID == want.ClusterID {
				members[d.DocID] = d
			}
		}
		firstRow := findAll(findAll(findAll(doc, hasID("largest-table"))[0], isElement("tbody"))[0], isElement("tr"))[0]
		items := findAll(firstRow, isElement("li"))
		if len(items) != min(samples, len(members)) {
			t.Fatalf("%d samples of cluster %d, want %d", len(items), want.ClusterID, min(samples, len(members)))
		}
		var ids []int64
		for _, li := range items {
			id, err := strconv.ParseInt(attr(li, "data-doc"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			d, ok := members[id]
			if !ok {
				t.Fatalf("sample doc %d is not in cluster %d", id, want.ClusterID)
			}
			if d.URL != nil && !strings.Contains(text(li), *d.URL) {
				t.Errorf("sample doc %d shows %q, not its URL %q", id, text(li), *d.URL)
			}
			ids = append(ids, id)
		}
		if ids[0] != want.RepresentativeDocID || !strings.Contains(text(items[0]), "kept") {
			t.Errorf("first sample %d (%q), want the kept doc %d", ids[0], text(items[0]), want.RepresentativeDocID)
		}
		if !slices.IsSorted(ids[1:]) {
			t.Errorf("samples after the kept one not by doc ID: %v", ids)
		}
	})

	t.Run("hosts", func(t *testing.T) {
		type count struct{ pages, dups int64 }
		hosts := map[string]*count{}
		for _, d := range docs {
			h := ""
			if d.URL != nil {
				if u, err := url.Parse(*d.URL); err == nil {
					h = strings.ToLower(u.Hostname())
				}
			}
			if hosts[h] == nil {
				hosts[h] = &count{}
			}
			hosts[h].pages++
			if d.ClusterID != nil && d.KeptDocID != nil && *d.KeptDocID != d.DocID {
				hosts[h].dups++
			}
		}
		var best string
		for h, c := range hosts {
			if b := hosts[best]; b == nil || c.dups > b.dups || c.dups == b.dups && h < best {
				best = h
			}
		}
		if hosts[best].dups == 0 {
			t.Fatal("no duplicates in the sample")
		}
		table := rows(t, doc, "hosts-table")
		if len(table) != topHosts {
			t.Errorf("%d hosts listed, want %d", len(table), topHosts)
		}
		want := []string{best, group(hosts[best].pages), group(hosts[best].dups),
			strconv.FormatFloat(100*float64(hosts[best].dups)/float64(hosts[best].pages), 'f', 1, 64) + "%"}
		if !slices.Equal(table[0], want) {
			t.Errorf("first host row %q, want %q", table[0], want)
		}
	})

	t.Run("pairs", func(t *testing.T) {
		var linked int
		for _, p := range pairs {
			if p.Linked {
				linked++
			}
		}
		caption := text(findAll(doc, hasID("pairs-caption"))[0])
		want := fmt.Sprintf("%s pairs in the pairs table, %s of them linked", group(int64(len(pairs))), group(int64(linked)))
		if !strings.Contains(caption, want) {
			t.Errorf("caption %q, want it to say %q", caption, want)
		}
		if !strings.Contains(string(page), "threshold: resemblance 0.5") {
			t.Error("no threshold line for the policy resemblance:0.5 in the histogram")
		}
	})

	t.Run("deterministic", func(t *testing.T) {
		if again := render(t, dir); !bytes.Equal(page, again) {
			t.Error("two reports of the same folder differ")
		}
	})
}

// TestHostileStrings checks that the output's strings (URLs, settings,
// file names, errors) render as text: a crawl's URL can hold anything.
func TestHostileStrings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	m := tinyManifest()
	m.Counts = map[string]int64{"docs": 6, "docs_ok": 6, "docs_in_clusters": 5, "docs_alone": 1, "docs_written": 6, "clusters": 1}
	m.Settings["policy"] = "resemblance:0.5,containment:0.8"
	m.Settings["sketch"] = "<script>alert('setting')</script>"
	m.Flags = map[string]string{"input": `"><script>alert('flag')</script>`}
	m.Inputs = []output.Input{{Path: "/data/<script>alert('input')</script>.parquet", Bytes: 10}}
	m.BadFiles = []output.BadFile{{Path: "/data/<SCRIPT>bad</SCRIPT>.parquet", RowGroup: -1, Error: "<script>alert('error')</script>"}}
	urls := []string{
		"https://EVIL.example/a",
		"https://evil.example/<script>alert('url')</script>", // the kept one
		`https://x.example/"><img/src=x/onerror=alert('attr')>`,
		"javascript:alert('scheme')",
		"",                     // doc 4, alone, has no URL
		"https://<b>.example/", // net/url takes <b> for a host
	}
	var docs []tables.Doc
	for i, u := range urls {
		d := tables.Doc{DocID: int64(i), Status: tables.StatusOK, ClusterID: ptr[int64](0), KeptDocID: ptr[int64](1)}
		if u != "" {
			d.URL = ptr(u)
		}
		if i == 4 {
			d.ClusterID, d.KeptDocID = nil, ptr[int64](4)
		}
		docs = append(docs, d)
	}
	clusters := []tables.Cluster{{ClusterID: 0, Size: 5, RepresentativeDocID: 1, RepresentativeURL: ptr(urls[1]), LinkedPairs: 4}}
	pairs := []tables.Pair{{DocA: 0, DocB: 1, Resemblance: 0.9, Linked: true}, {DocA: 0, DocB: 2, Resemblance: 0.3}}
	writeOutput(t, dir, m, docs, clusters, pairs, 2)

	page := render(t, dir)
	if i := bytes.Index(bytes.ToLower(page), []byte("<script")); i >= 0 {
		t.Errorf("raw <script in the page: %q", page[max(0, i-80):min(len(page), i+80)])
	}
	doc := parse(t, page)
	checkSelfContained(t, doc)
	all := text(doc)
	for _, s := range append(slices.Clone(urls), m.Settings["sketch"], m.Flags["input"], m.Inputs[0].Path, m.BadFiles[0].Error) {
		if !strings.Contains(all, s) {
			t.Errorf("the page's text lacks %q", s)
		}
	}
	if b := findAll(doc, isElement("b")); len(b) > 0 {
		t.Error("a <b> element: the host <b>.example was not escaped")
	}
	// Hosts are lower-cased: EVIL.example and evil.example are one.
	want := [][]string{{"evil.example", "2", "1", "50.0%"}, {"x.example", "1", "1", "100.0%"},
		{"<b>.example", "1", "1", "100.0%"}, {"no URL or no host", "2", "1", "50.0%"}}
	got := rows(t, doc, "hosts-table")
	slices.SortFunc(got, func(a, b []string) int { return strings.Compare(b[0], a[0]) })
	slices.SortFunc(want, func(a, b []string) int { return strings.Compare(b[0], a[0]) })
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("hosts %q, want %q", got, want)
	}
	// The kept document first, then by doc ID.
	var ids []string
	for _, li := range findAll(findAll(doc, hasID("largest-table"))[0], isElement("li")) {
		ids = append(ids, attr(li, "data-doc"))
	}
	if want := []string{"1", "0", "2", "3", "5"}; !slices.Equal(ids, want) {
		t.Errorf("samples %v, want %v", ids, want)
	}
	for _, s := range []string{"threshold: resemblance 0.5", "threshold: containment 0.8"} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("no %q in the histogram", s)
		}
	}
}

// TestNoClustersNoPairs checks that an output with nothing to plot
// still gives both plots.
func TestNoClustersNoPairs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	docs := []tables.Doc{{DocID: 1, URL: ptr("https://a.example/"), Status: tables.StatusOK, KeptDocID: ptr[int64](1)}}
	m := tinyManifest()
	m.Counts = map[string]int64{"docs": 1, "docs_ok": 1, "docs_alone": 1, "docs_written": 1}
	writeOutput(t, dir, m, docs, nil, nil, 1)
	doc := parse(t, render(t, dir))
	if n := len(findAll(doc, isElement("svg"))); n != 2 {
		t.Errorf("%d <svg> elements, want 2", n)
	}
	if w := findAll(doc, hasClass("warning")); len(w) > 0 {
		t.Errorf("warning: %q", text(w[0]))
	}
	if all := text(doc); !strings.Contains(all, "No clusters.") || !strings.Contains(all, "No duplicates.") {
		t.Error("the page does not say there are no clusters and no duplicates")
	}
}

// TestAccountingWarning checks that tables that disagree with their
// manifest are called out.
func TestAccountingWarning(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	docs := []tables.Doc{{DocID: 1, Status: tables.StatusOK, KeptDocID: ptr[int64](1)}}
	m := tinyManifest()
	m.Counts = map[string]int64{"docs": 2, "docs_alone": 1, "docs_written": 2}
	writeOutput(t, dir, m, docs, nil, nil, 1)
	w := findAll(parse(t, render(t, dir)), hasClass("warning"))
	if len(w) != 2 {
		t.Fatalf("%d warnings, want 2 (docs rows, accounting identity)", len(w))
	}
	if !strings.Contains(text(w[0]), "holds 1 rows") {
		t.Errorf("warning %q", text(w[0]))
	}
}

func TestUnfinishedOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	writeOutput(t, dir, tinyManifest(), []tables.Doc{{DocID: 1, Status: tables.StatusOK}}, nil, nil, 1)
	if err := os.Remove(filepath.Join(dir, output.SuccessMarker)); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	err := Write(context.Background(), dir, &b)
	if err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("Write of a folder without _SUCCESS: %v, want an error naming %s", err, dir)
	}
	if b.Len() > 0 {
		t.Errorf("Write failed but wrote %d bytes", b.Len())
	}
}

func TestThresholds(t *testing.T) {
	for _, c := range []struct {
		policy string
		want   []threshold
	}{
		{"resemblance:0.5", []threshold{{"resemblance", 0.5}}},
		{"containment:0.8", []threshold{{"containment", 0.8}}},
		{"resemblance:0.9,containment:0.8", []threshold{{"resemblance", 0.9}, {"containment", 0.8}}},
		{"containment:0.8,resemblance:0.9", []threshold{{"resemblance", 0.9}, {"containment", 0.8}}},
		{"", nil},
		{"jaccard:0.5", nil},
	} {
		if got := thresholds(c.policy); !slices.Equal(got, c.want) {
			t.Errorf("thresholds(%q) = %v, want %v", c.policy, got, c.want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Value < lo || tk.Value > hi {
				t.Errorf("tick %v outside [%v, %v]", tk.Value, lo, hi)
			}
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	if got, want := labels(1, 13), []string{"1", "2", "5", "10"}; !slices.Equal(got, want) {
		t.Errorf("labels over [1, 13]: %q, want %q", got, want)
	}
	if got, want := labels(0.8, 3e6), []string{"1", "10", "100", "1000", "10000", "100000", "1e6"}; !slices.Equal(got, want) {
		t.Errorf("labels over [0.8, 3e6]: %q, want %q", got, want)
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -12345: "-12,345"} {
		if got := group(n); got != want {
			t.Errorf("group(%d) = %q, want %q", n, got, want)
		}
	}
}

// BenchmarkWriteSample reports on the sample crawl's output.
func BenchmarkWriteSample(b *testing.B) {
	dir, _ := sampleOutput(b)
	for b.Loop() {
		if err := Write(context.Background(), dir, &bytes.Buffer{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteMillion reports on a synthetic output of a million
// documents in 32 docs shards: 5,000 hosts, 120,000 clusters holding
// about a third of the documents, 500,000 pairs.
func BenchmarkWriteMillion(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "out")
	const n = 1_000_000
	rng := rand.New(rand.NewPCG(1, 2))
	docs := make([]tables.Doc, n)
	for i := range docs {
		docs[i] = tables.Doc{DocID: int64(i), Status: tables.StatusOK, KeptDocID: ptr(int64(i)),
			URL: ptr(fmt.Sprintf("https://www.host%d.example/2024/%d/some-page-title-%d.html", rng.IntN(5000), i%12, i))}
	}
	var clusters []tables.Cluster
	for i := 0; i < n; {
		size := 2 + int(math.Pow(rng.Float64(), -1.2)) // a heavy tail
		if i+size > n || len(clusters) == 120_000 {
			break
		}
		clusters = append(clusters, tables.Cluster{ClusterID: int64(i), Size: int64(size), RepresentativeDocID: int64(i)})
		for j := i; j < i+size; j++ {
			docs[j].ClusterID, docs[j].KeptDocID = ptr(int64(i)), ptr(int64(i))
		}
		i += size + rng.IntN(5)
	}
	pairs := make([]tables.Pair, 500_000)
	for i := range pairs {
		pairs[i].Resemblance = rng.Float64()
		pairs[i].Linked = pairs[i].Resemblance >= 0.5
	}
	m := tinyManifest()
	m.Counts = map[string]int64{"docs": n, "docs_written": n}
	writeOutput(b, dir, m, docs, clusters, pairs, 32)
	for b.Loop() {
		if err := Write(context.Background(), dir, &bytes.Buffer{}); err != nil {
			b.Fatal(err)
		}
	}
}

// tinyManifest is the manifest of a hand-written output of few documents.
func tinyManifest() *output.Manifest {
	m := output.NewManifest(nil)
	m.StartedAt = "2026-11-01T00:00:00Z"
	m.Settings = map[string]string{"policy": "resemblance:0.5"}
	m.Counts = map[string]int64{"docs": 5, "docs_ok": 5, "docs_in_clusters": 4, "docs_alone": 1, "docs_written": 5, "clusters": 1}
	return m
}

// writeOutput writes a finished output folder by hand: the docs,
// clusters and pairs tables (docs in the given number of shards), the
// manifest and _SUCCESS.
func writeOutput(tb testing.TB, dir string, m *output.Manifest, docs []tables.Doc, clusters []tables.Cluster, pairs []tables.Pair, shards int) {
	tb.Helper()
	ctx := context.Background()
	for _, t := range tables.Tables {
		if err := os.MkdirAll(filepath.Join(dir, t), 0o755); err != nil {
			tb.Fatal(err)
		}
	}
	check := func(err error) {
		if err != nil {
			tb.Fatal(err)
		}
	}
	m.Tables = map[string][]string{} // as Publish lists them
	shard := func(table string, i int) string {
		m.Tables[table] = append(m.Tables[table], table+"/"+tables.ShardName(i))
		return filepath.Join(dir, table, tables.ShardName(i))
	}
	for i := range shards {
		lo, hi := i*len(docs)/shards, (i+1)*len(docs)/shards
		check(tables.Write(ctx, shard(tables.DocsTable, i), docs[lo:hi]))
	}
	check(tables.Write(ctx, shard(tables.ClustersTable, 0), clusters))
	check(tables.Write(ctx, shard(tables.PairsTable, 0), pairs))
	j, err := json.Marshal(m)
	check(err)
	check(os.WriteFile(filepath.Join(dir, output.ManifestFile), j, 0o644))
	check(os.WriteFile(filepath.Join(dir, output.SuccessMarker), nil, 0o644))
}

func ptr[T any](v T) *T { return &v }

// checkSelfContained fails if the page would load anything: no element
// that fetches, no attribute that points elsewhere, no url() in a style.
func checkSelfContained(t *testing.T, doc *html.Node) {
	t.Helper()
	fetching := map[string]bool{"script": true, "link": true, "img": true, "iframe": true, "object": true,
		"embed": true, "audio": true, "video": true, "source": true, "image": true, "use": true, "base": true}
	for _, n := range findAll(doc, func(n *html.Node) bool { return n.Type == html.ElementNode }) {
		if fetching[n.Data] {
			t.Errorf("a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			key := strings.ToLower(a.Key)
			if key == "src" || key == "href" || key == "srcset" || key == "action" || strings.HasPrefix(key, "on") ||
				key == "style" && strings.Contains(a.Val, "url(") {
				t.Errorf("<%s %s=%q>", n.Data, a.Key, a.Val)
			}
		}
		if n.Data == "style" {
			if css := text(n); strings.Contains(css, "url(") || strings.Contains(css, "@import") {
				t.Error("the style sheet loads something")
			}
		}
	}
}

func parse(t *testing.T, page []byte) *html.Node {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("the page does not parse: %v", err)
	}
	return doc
}

func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	if match(n) {
		out = append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = append(out, findAll(c, match)...)
	}
	return out
}

func isElement(name string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Type == html.ElementNode && n.Data == name }
}

func hasID(id string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Type == html.ElementNode && attr(n, "id") == id }
}

func hasClass(class string) func(*html.Node) bool {
	return func(n *html.Node) bool {
		return n.Type == html.ElementNode && slices.Contains(strings.Fields(attr(n, "class")), class)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// text is the text of n and its descendants.
func text(n *html.Node) string {
	var b strings.Builder
	for _, t := range findAll(n, func(n *html.Node) bool { return n.Type == html.TextNode }) {
		b.WriteString(t.Data)
	}
	return b.String()
}

type cell struct{ text, title string }

// keyed are the cells with a data-key attribute, by key.
func keyed(doc *html.Node) map[string]cell {
	out := map[string]cell{}
	for _, n := range findAll(doc, func(n *html.Node) bool { return n.Type == html.ElementNode && attr(n, "data-key") != "" }) {
		out[attr(n, "data-key")] = cell{strings.TrimSpace(text(n)), attr(n, "title")}
	}
	return out
}

// number reads a count as the page writes it, with thousands separators.
func number(t *testing.T, c cell) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.ReplaceAll(c.text, ",", ""), 10, 64)
	if err != nil {
		t.Errorf("not a count: %q", c.text)
	}
	return n
}

// rows are the texts of the cells of the body rows of the table with
// the given ID.
func rows(t *testing.T, doc *html.Node, id string) [][]string {
	t.Helper()
	tables := findAll(doc, hasID(id))
	if len(tables) != 1 {
		t.Fatalf("%d tables with ID %s", len(tables), id)
	}
	var out [][]string
	for _, body := range findAll(tables[0], isElement("tbody")) {
		for _, tr := range findAll(body, isElement("tr")) {
			var r []string
			for _, td := range findAll(tr, isElement("td")) {
				r = append(r, strings.TrimSpace(text(td)))
			}
			out = append(out, r)
		}
	}
	return out
}
