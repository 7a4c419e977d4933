package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/sampletest"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/views/query"
)

func TestMain(m *testing.M) {
	asCommand() // when runCommand started this binary as the command
	beamtest.Main(m)
}

// TestQueryCommand runs "runner query" as users do over the sample
// crawl's output: a URL's answer and a page's matches as JSON, and the
// usage errors.
func TestQueryCommand(t *testing.T) {
	ctx := context.Background()
	dir, _ := sampletest.Run(t, "../../testdata/crawl/*.parquet")
	docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
	if err != nil {
		t.Fatal(err)
	}
	var d tables.Doc
	for _, x := range docs {
		if x.ClusterID != nil && x.URL != nil && x.TokenCount > 200 && x.IdenticalTo == nil {
			d = x
			break
		}
	}
	var out bytes.Buffer
	if err := queryMain(ctx, []string{"--from", dir, "--url", *d.URL, "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var answers []query.URLAnswer
	if err := json.Unmarshal(out.Bytes(), &answers); err != nil {
		t.Fatalf("--json printed %q: %v", out.String(), err)
	}
	if len(answers) != 1 || answers[0].Doc.DocID != d.DocID || answers[0].Cluster == nil || *d.ClusterID != answers[0].Cluster.ClusterID || len(answers[0].Members) < 2 {
		t.Fatalf("--url %s: %s", *d.URL, out.String())
	}
	snakeCaseKeys(t, "--url --json", out.Bytes())

	row, err := crawl.ReadRow(ctx, d.SourceFile, d.SourceRow, crawl.Columns{Text: "text"})
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "page.txt")
	os.WriteFile(page, []byte(row.Content), 0o644)
	out.Reset()
	if err := queryMain(ctx, []string{"--from", dir, "--text-file", page, "--exact"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), *d.URL) || !strings.Contains(out.String(), "exact resemblance") {
		t.Errorf("--text-file --exact: %s", out.String())
	}
	out.Reset()
	if err := queryMain(ctx, []string{"--from", dir, "--text-file", page, "--exact", "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	snakeCaseKeys(t, "--text-file --exact --json", out.Bytes())

	for _, args := range [][]string{
		{"--url", *d.URL},
		{"--from", dir},
		{"--from", dir, "--url", *d.URL, "--text-file", page},
		{"--from", dir, "--text-file", page, "--threshold", "2"},
	} {
		if err := queryMain(ctx, args, &out); !errors.Is(err, errUsage) {
			t.Errorf("query %q: %v, want a usage error", args, err)
		}
	}
	if err := queryMain(ctx, []string{"--from", dir, "--url", "https://nowhere.test/"}, &out); !errors.Is(err, query.ErrUnknownURL) {
		t.Errorf("an unknown URL: %v", err)
	}
}

// snakeCaseKeys fails t unless every key of every object in the JSON
// document b is snake_case, as the tables' columns are (issue 41: a
// cluster's keys were Go field names beside a document's column names).
func snakeCaseKeys(t *testing.T, what string, b []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s printed %q: %v", what, b, err)
	}
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	n := 0
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				n++
				if !snake.MatchString(k) {
					t.Errorf("%s: key %q is not snake_case", what, k)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	if n == 0 {
		t.Errorf("%s printed no keys: %s", what, b)
	}
}

// TestQueryRedirect: "runner query" of a redirect prints its chain and its
// cluster's members without resemblances (its body is not compared), and
// of its page, the redirect among the members with none.
func TestQueryRedirect(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "out")
	cfg := sampletest.Config()
	cfg.Columns.Redirect, cfg.Columns.URLRequired = "fetch_redirect", true
	if _, err := pipelines.Run(ctx, pipelines.Options{Input: "../../testdata/redirects/*.parquet", Output: dir, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	ix, err := query.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	page, _, _ := ix.Doc(ctx, 0) // scripts/gencrawl: moved.example/0 redirects to it
	var out bytes.Buffer
	if err := queryMain(ctx, []string{"--from", dir, "--url", "https://moved.example/0"}, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"redirects: https://moved.example/0 -> " + page.URL + " (doc 0, ok)", "in it by redirect", "(a redirect's body is not compared)", "doc 0, by content, kept"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := queryMain(ctx, []string{"--from", dir, "--url", page.URL}, &out); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		// doc, resemblance, contained, contains, url (not kept).
		if f := strings.Fields(line); strings.Contains(line, `"https://moved.example/0"`) && (len(f) != 5 || f[1] != "-") {
			t.Errorf("the redirect's row has a resemblance: %q", line)
		}
	}
}

// TestLostRedirect: runner lost of a redirect of the first sweep, absent
// from the second (testdata/redirects-recrawl), names the page it leads to
// now, without a resemblance (its body is not compared); of a page that
// redirects in the second sweep, where it leads.
func TestLostRedirect(t *testing.T) {
	ctx := context.Background()
	first, second := filepath.Join(t.TempDir(), "first"), filepath.Join(t.TempDir(), "second")
	cfg := sampletest.Config()
	cfg.Columns.Redirect, cfg.Columns.URLRequired = "fetch_redirect", true
	cfg.Sweep = "2026-10-01"
	if _, err := pipelines.Run(ctx, pipelines.Options{Input: "../../testdata/redirects/*.parquet", Output: first, Config: cfg}); err != nil {
		t.Fatal(err)
	}
	cfg.Sweep = "2026-11-01"
	if _, err := pipelines.Update(ctx, pipelines.UpdateOptions{From: first, Options: pipelines.Options{Input: "../../testdata/redirects-recrawl/*.parquet", Output: second, Config: cfg}}); err != nil {
		t.Fatal(err)
	}
	// scripts/gencrawl: moved.example/100 leads to the 800th sample page,
	// crawled again in the second sweep with another page's text.
	ix, err := query.Open(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	page, _, _ := ix.Doc(ctx, 800)
	saved := run
	defer func() { run = saved }()
	run.From, run.URL = second, "https://moved.example/100"
	var out bytes.Buffer
	if err := lost(ctx, &out); err != nil {
		t.Fatal(err)
	}
	want := "neardup: found at " + page.URL + " (doc 2199023255552), where its redirects lead"
	if !strings.Contains(out.String(), "is absent from the latest") || !strings.Contains(out.String(), want) {
		t.Errorf("runner lost of a redirect:\n%s\nwant %q", out.String(), want)
	}
	// The 840th sample page redirects to the 845th in the second sweep:
	// not lost, and where it leads now.
	from, _, _ := ix.Doc(ctx, 840)
	to, _, _ := ix.Doc(ctx, 845)
	run.URL = from.URL
	out.Reset()
	if err := lost(ctx, &out); err != nil {
		t.Fatal(err)
	}
	want = "neardup: it redirects now: " + from.URL + " -> " + to.URL + " (doc 845, ok)"
	if !strings.Contains(out.String(), "is not lost") || !strings.Contains(out.String(), want) {
		t.Errorf("runner lost of a page that now redirects:\n%s\nwant %q", out.String(), want)
	}
}
