package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/sampletest"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/views/query"
)

func TestMain(m *testing.M) { beamtest.Main(m) }

// app runs the pipeline over input and serves its output.
func app(t *testing.T, input string) (*httptest.Server, *query.Index) {
	t.Helper()
	dir, _ := sampletest.Run(t, input)
	ix, err := query.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(ix))
	t.Cleanup(srv.Close)
	return srv, ix
}

func get(t *testing.T, srv *httptest.Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Security-Policy") == "" {
		t.Errorf("%s: no Content-Security-Policy", path)
	}
	return resp.StatusCode, string(b)
}

func post(t *testing.T, srv *httptest.Server, form url.Values) (int, string) {
	t.Helper()
	resp, err := http.PostForm(srv.URL+"/search", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// planted is a group of near-copies the sample crawl's generator planted.
type planted struct {
	Kind    string
	Members []struct {
		URL  string
		File string
		Row  int64
	}
}

// plantedGroup is the sample crawl's first planted group of three or more
// near-copies.
func plantedGroup(t *testing.T) planted {
	t.Helper()
	var truth struct{ Groups []planted }
	b, err := os.ReadFile("../../testdata/crawl/truth.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &truth); err != nil {
		t.Fatal(err)
	}
	for _, g := range truth.Groups {
		if g.Kind == "near" && len(g.Members) >= 3 {
			return g
		}
	}
	t.Fatal("no planted near-copy group of three")
	return planted{}
}

// TestSampleApp browses the sample crawl's output as a person would: a
// planted near-copy found by its URL and by its pasted text, its cluster,
// the side-by-side view with shared text marked, and the clusters list.
func TestSampleApp(t *testing.T) {
	srv, ix := app(t, "../../testdata/crawl/*.parquet")
	g := plantedGroup(t)

	status, body := get(t, srv, "/")
	if status != 200 || !strings.Contains(body, "clusters") {
		t.Fatalf("home: %d", status)
	}
	status, body = get(t, srv, "/search?url="+url.QueryEscape(g.Members[0].URL))
	if status != 200 {
		t.Fatalf("search by URL: %d %s", status, body)
	}
	for _, m := range g.Members {
		if !strings.Contains(body, m.URL) {
			t.Errorf("search by URL %s: planted copy %s not listed", g.Members[0].URL, m.URL)
		}
	}

	row, err := crawl.ReadRow(context.Background(), filepath.Join("../../testdata/crawl", g.Members[1].File), g.Members[1].Row, crawl.Columns{Text: "text"})
	if err != nil {
		t.Fatal(err)
	}
	status, body = post(t, srv, url.Values{"text": {row.Content}, "threshold": {"0.5"}})
	if status != 200 {
		t.Fatalf("search by text: %d %s", status, body)
	}
	for _, m := range g.Members {
		if !strings.Contains(body, m.URL) {
			t.Errorf("search by the text of %s: planted copy %s not found", g.Members[1].URL, m.URL)
		}
	}

	answers, err := ix.URL(context.Background(), g.Members[0].URL, false)
	if err != nil || answers[0].Cluster == nil {
		t.Fatalf("%v %+v", err, answers)
	}
	a, other := answers[0].Doc.DocID, answers[0].Members[1].DocID
	status, body = get(t, srv, fmt.Sprintf("/cluster/%d", answers[0].Cluster.ClusterID))
	if status != 200 || !strings.Contains(body, fmt.Sprintf("/compare?a=%d&amp;b=", answers[0].Cluster.RepresentativeDocID)) {
		t.Errorf("cluster page: %d", status)
	}
	status, body = get(t, srv, fmt.Sprintf("/compare?a=%d&b=%d", a, other))
	if status != 200 || strings.Count(body, "<mark>") < 2 {
		t.Errorf("side by side of near-copies: %d, %d marks", status, strings.Count(body, "<mark>"))
	}
	top, n, _ := ix.Clusters(context.Background(), 0, 1)
	if status, body = get(t, srv, "/clusters?page=1"); status != 200 || n < 2 || !strings.Contains(body, fmt.Sprintf(`href="/cluster/%d"`, top[0].ClusterID)) {
		t.Errorf("clusters: %d; the largest of %d clusters not listed first", status, n)
	}
	if _, body = get(t, srv, fmt.Sprintf("/clusters?page=%d", (n+pageSize-1)/pageSize+1)); strings.Contains(body, `href="/cluster/`) {
		t.Errorf("clusters past the last page list some")
	}

	// Requests that are not well formed get a 400 (or 404, 405, 413),
	// never a page of something else.
	for path, want := range map[string]int{
		"/cluster/abc":       400,
		"/cluster/-1":        404,
		"/doc/1e9":           400,
		"/doc/12345678901":   404,
		"/clusters?page=x":   400,
		"/clusters?page=0":   400,
		"/compare?a=1":       400,
		"/compare?a=1&b=zz":  400,
		"/search":            400,
		"/search?url=nope":   404,
		"/nothing":           404,
		"/../../etc/passwd":  404,
		"/doc/..%2f..%2fetc": 400,
	} {
		if status, _ := get(t, srv, path); status != want {
			t.Errorf("GET %s: %d, want %d", path, status, want)
		}
	}
	for form, want := range map[string]int{
		"text=":                                400,
		"text=some+words&threshold=x":          400,
		"text=some+words&threshold=2":          400,
		"text=too+short":                       422,
		"text=" + strings.Repeat("a", MaxBody): 413,
	} {
		resp, err := http.Post(srv.URL+"/search", "application/x-www-form-urlencoded", strings.NewReader(form))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("POST /search %.40q: %d, want %d", form, resp.StatusCode, want)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /: %v %v", resp.StatusCode, err)
	}
}

// hostileRow is a crawl row whose URL and text hold markup.
type hostileRow struct {
	ID   string `parquet:"id"`
	URL  string `parquet:"url"`
	Text string `parquet:"text"`
}

// TestHostileInput: HTML and script in pages' URLs and texts show as
// text, on every page that shows them.
func TestHostileInput(t *testing.T) {
	dir := t.TempDir()
	var parts []string
	for i := range 40 {
		parts = append(parts, fmt.Sprintf(`Breaking <script>alert("x")</script> news %d <img src=x onerror=alert(1)> about the "city" & its council, item %d.`, i, i*7))
	}
	body := strings.Join(parts, " ")
	rows := []hostileRow{
		{"1", `https://evil.test/<script>alert(1)</script>`, body},
		{"2", `https://evil.test/"><img src=x onerror=alert(2)>`, body + " and one more line at the end of it all"},
		{"3", `javascript:alert(3)`, "an unrelated page about gardening and the seasons, with nothing in common with the others at all"},
	}
	if err := parquet.WriteFile(filepath.Join(dir, "hostile.parquet"), rows); err != nil {
		t.Fatal(err)
	}
	srv, ix := app(t, filepath.Join(dir, "hostile.parquet"))
	answers, err := ix.URL(context.Background(), rows[0].URL, false)
	if err != nil || answers[0].Cluster == nil {
		t.Fatalf("the two hostile pages should cluster: %v %+v", err, answers)
	}
	a, b := answers[0].Members[0].DocID, answers[0].Members[1].DocID
	for _, path := range []string{
		"/search?url=" + url.QueryEscape(rows[0].URL),
		fmt.Sprintf("/cluster/%d", answers[0].Cluster.ClusterID),
		fmt.Sprintf("/doc/%d", a),
		fmt.Sprintf("/compare?a=%d&b=%d", a, b),
		"/clusters",
		"/search?url=" + url.QueryEscape(`<script>alert(9)</script>`),
	} {
		_, page := get(t, srv, path)
		if bad := activeMarkup(t, page); bad != "" {
			t.Errorf("%s: the page holds %s", path, bad)
		}
	}
	_, page := get(t, srv, fmt.Sprintf("/doc/%d", a))
	if !strings.Contains(page, "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;") {
		t.Errorf("the doc page does not show the page's script as text")
	}
	_, page = post(t, srv, url.Values{"text": {body}})
	if strings.Contains(page, "<script") || !strings.Contains(page, "evil.test") {
		t.Errorf("search by the hostile text: unescaped, or nothing found")
	}
}

// activeMarkup parses a page and names the first thing in it that could
// run or load something: a script, img or iframe element, an on*
// attribute, or a javascript: link.
func activeMarkup(t *testing.T, page string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var found string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "img", "iframe", "object", "embed":
				found = "a " + n.Data + " element"
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") || strings.HasPrefix(strings.TrimSpace(strings.ToLower(a.Val)), "javascript:") {
					found = fmt.Sprintf("the attribute %s=%q on %s", a.Key, a.Val, n.Data)
				}
			}
		}
		for c := n.FirstChild; c != nil && found == ""; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return found
}

// TestRedirectPage: a redirect's page shows its chain, each URL escaped
// and linked to the document there, how it is in its cluster, and for one
// that found no page, the reason.
func TestRedirectPage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	cfg := sampletest.Config()
	cfg.Columns.Redirect, cfg.Columns.URLRequired = "fetch_redirect", true
	if _, err := pipelines.Run(context.Background(), pipelines.Options{Input: "../../testdata/redirects/*.parquet", Output: dir, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	ix, err := query.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(ix))
	t.Cleanup(srv.Close)
	answers, err := ix.URL(context.Background(), "https://old.example/0", false)
	if err != nil {
		t.Fatal(err)
	}
	d := answers[0].Doc
	code, page := get(t, srv, fmt.Sprintf("/doc/%d", d.DocID))
	for _, want := range []string{"&rarr; https://moved.example/0", `<a href="/doc/0">doc 0</a>, ok`, ", by redirect"} {
		if code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("doc page of %s (%d): no %q in\n%s", d.URL, code, want, page)
		}
	}
	answers, _ = ix.URL(context.Background(), "https://away.example/0", false)
	if _, page := get(t, srv, fmt.Sprintf("/doc/%d", answers[0].Doc.DocID)); !strings.Contains(page, "(no document)") || !strings.Contains(page, "redirect target not in the input") {
		t.Errorf("dead end's page:\n%s", page)
	}
}
