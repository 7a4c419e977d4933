package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/sampletest"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
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
