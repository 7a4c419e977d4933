package sweeps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
)

// TestUpdateSweeps: an update with a later sweep date starts a new sweep,
// whose documents carry it while the index's keep theirs; one with the
// latest sweep's date adds to it; an earlier date is refused.
func TestUpdateSweeps(t *testing.T) {
	cfg := pipelinetest.DefaultConfig()
	cfg.Sweep = "2026-10-01"
	index := pipelinetest.Run(t, "../../../testdata/crawl/part-00000.parquet", cfg)
	cfg.Sweep = "2026-11-01"
	up := pipelinetest.RunUpdate(t, index.Dir, "../../../testdata/crawl/part-00001.parquet", cfg)
	for _, d := range up.Docs {
		want := "2026-10-01"
		if strings.HasSuffix(d.SourceFile, "part-00001.parquet") {
			want = "2026-11-01"
		}
		if d.Sweep != want {
			t.Fatalf("doc %d of %s: sweep %q, want %q", d.DocID, d.SourceFile, d.Sweep, want)
		}
	}
	if got := up.Manifest.Settings["latest_sweep"]; got != "2026-11-01" {
		t.Errorf("latest_sweep = %q after the update, want 2026-11-01", got)
	}
	same := pipelinetest.RunUpdate(t, up.Dir, "../../../testdata/crawl/part-00002.parquet", cfg)
	if got := same.Manifest.Settings["latest_sweep"]; got != "2026-11-01" {
		t.Errorf("latest_sweep = %q after adding to the sweep, want 2026-11-01", got)
	}
	cfg.Sweep = "2026-10-15"
	_, err := pipelines.Update(context.Background(), pipelines.UpdateOptions{From: same.Dir, Options: pipelines.Options{Input: "../../../testdata/crawl/part-00003.parquet", Output: t.TempDir(), Config: cfg}})
	if err == nil || !strings.Contains(err.Error(), "earlier than") {
		t.Errorf("an update dated before the latest sweep: %v, want a refusal", err)
	}
}

// writeSweep writes pages (URL -> text) to a Parquet file.
func writeSweep(t *testing.T, path string, urls []string, texts []string) {
	t.Helper()
	rows := make([]pipelinetest.DatedPage, len(urls))
	for i := range urls {
		rows[i] = pipelinetest.DatedPage{ID: urls[i], URL: urls[i], Text: texts[i]}
	}
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
}

// TestLostAndFound crawls a site twice: of 30 pages, 10 come back as they
// were, 10 come back with other text, 5 moved to new URLs with a word
// changed, 5 are gone. The update's urls table has every URL's first and
// last sweep; its lost table lists the 10 URLs absent from the second
// sweep, the moved ones with the page that holds their text now, the gone
// ones with none; and Lost answers for one URL.
func TestLostAndFound(t *testing.T) {
	dir := t.TempDir()
	var urls1, texts1, urls2, texts2 []string
	for i := 0; i < 30; i++ {
		u := fmt.Sprintf("https://example.test/page/%d", i)
		urls1, texts1 = append(urls1, u), append(texts1, pipelinetest.Words(i, 120))
		switch {
		case i < 10:
			urls2, texts2 = append(urls2, u), append(texts2, pipelinetest.Words(i, 120))
		case i < 15:
			moved := fmt.Sprintf("https://example.test/moved/%d", i)
			urls2, texts2 = append(urls2, moved), append(texts2, strings.Replace(pipelinetest.Words(i, 120), "w", "changed w", 1))
		case i < 20:
			// gone
		default:
			urls2, texts2 = append(urls2, u), append(texts2, pipelinetest.Words(i+1000, 120))
		}
	}
	writeSweep(t, filepath.Join(dir, "sweep-1.parquet"), urls1, texts1)
	writeSweep(t, filepath.Join(dir, "sweep-2.parquet"), urls2, texts2)
	cfg := pipelinetest.DefaultConfig()
	cfg.Sweep = "2026-10-01"
	index := pipelinetest.Run(t, filepath.Join(dir, "sweep-1.parquet"), cfg)
	if n := len(lostRows(t, index)); n != 0 {
		t.Errorf("one sweep has %d lost rows", n)
	}
	cfg.Sweep = "2026-11-01"
	up := pipelinetest.RunUpdate(t, index.Dir, filepath.Join(dir, "sweep-2.parquet"), cfg)

	urls, err := tables.ReadTable[tables.URL](context.Background(), up.Dir, tables.URLsTable)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]tables.URL{}
	for _, u := range urls {
		seen[u.URL] = u
	}
	if len(urls) != 35 {
		t.Errorf("urls table has %d rows, want 30 + 5 moved", len(urls))
	}
	for i, want := range map[int][2]string{0: {"2026-10-01", "2026-11-01"}, 12: {"2026-10-01", "2026-10-01"}, 17: {"2026-10-01", "2026-10-01"}, 25: {"2026-10-01", "2026-11-01"}} {
		u := seen[fmt.Sprintf("https://example.test/page/%d", i)]
		if u.FirstSweep != want[0] || u.LastSweep != want[1] {
			t.Errorf("page %d: sweeps %s..%s, want %s..%s", i, u.FirstSweep, u.LastSweep, want[0], want[1])
		}
	}
	// A URL of both sweeps: its two documents, the index's and the
	// update's (doc IDs of the second input file).
	if u := seen["https://example.test/page/0"]; u.Docs != 2 || len(u.DocIDs) != 2 || u.DocIDs[0] != 0 || u.DocIDs[1] != int64(crawl.DocID(1, 0)) {
		t.Errorf("page/0: %+v, want docs 0 and %d", u, crawl.DocID(1, 0))
	}
	if u := seen["https://example.test/moved/12"]; u.FirstSweep != "2026-11-01" || u.Docs != 1 {
		t.Errorf("moved/12: %+v, want first seen in the second sweep", u)
	}

	lost := lostRows(t, up)
	byURL := map[string][]tables.Lost{}
	for _, l := range lost {
		byURL[l.URL] = append(byURL[l.URL], l)
	}
	if len(byURL) != 10 {
		t.Errorf("%d lost URLs, want 10: %v", len(byURL), byURL)
	}
	for i := 10; i < 20; i++ {
		rows := byURL[fmt.Sprintf("https://example.test/page/%d", i)]
		if len(rows) != 1 {
			t.Errorf("page %d: %d lost rows, want 1", i, len(rows))
			continue
		}
		r := rows[0]
		if i < 15 {
			want := fmt.Sprintf("https://example.test/moved/%d", i)
			if r.FoundURL == nil || *r.FoundURL != want || r.Resemblance == nil || *r.Resemblance < 0.5 {
				t.Errorf("page %d: found %v at %v, want %s at resemblance 0.5 or more", i, pipelinetest.Deref(r.FoundURL), r.Resemblance, want)
			}
		} else if r.ClusterID != nil || r.FoundDocID != nil {
			t.Errorf("page %d, gone: cluster %v, found %v; want none", i, r.ClusterID, r.FoundDocID)
		}
	}

	got, u, err := pipelines.Lost(context.Background(), up.Dir, "https://example.test/page/11")
	if err != nil || u == nil || len(got) != 1 || pipelinetest.Deref(got[0].FoundURL) != "https://example.test/moved/11" {
		t.Errorf("Lost(page/11) = %v, %v, %v", got, u, err)
	}
	if got, u, err := pipelines.Lost(context.Background(), up.Dir, "https://example.test/page/3"); err != nil || len(got) != 0 || u == nil || u.LastSweep != "2026-11-01" {
		t.Errorf("Lost(page/3), seen in the latest sweep = %v, %v, %v", got, u, err)
	}
	if _, u, err := pipelines.Lost(context.Background(), up.Dir, "https://example.test/never"); err != nil || u != nil {
		t.Errorf("Lost of a URL never seen = %v, %v", u, err)
	}

	// An update adding an unrelated page to the latest sweep finds the
	// lost pages where the index's documents of that sweep hold them.
	writeSweep(t, filepath.Join(dir, "sweep-2-more.parquet"), []string{"https://example.test/extra"}, []string{pipelinetest.Words(5000, 120)})
	more := pipelinetest.RunUpdate(t, up.Dir, filepath.Join(dir, "sweep-2-more.parquet"), cfg)
	if err := tables.Diff(context.Background(), up.Dir, more.Dir, tables.LostTable); err != nil {
		t.Errorf("adding to the latest sweep: %v", err)
	}

	// An update that writes the lost table alone finds the same rows.
	lostOnly := cfg
	lostOnly.Tables = tables.Selection{tables.LostTable}
	lostDir, work := t.TempDir(), t.TempDir()
	t.Run("lost only", func(t *testing.T) {
		t.Chdir(work) // a table left out must not be written anywhere, here included
		if _, err := pipelines.Update(context.Background(), pipelines.UpdateOptions{From: index.Dir, Options: pipelines.Options{Input: filepath.Join(dir, "sweep-2.parquet"), Output: lostDir, Config: lostOnly}}); err != nil {
			t.Fatal(err)
		}
	})
	if stray, _ := os.ReadDir(work); len(stray) > 0 {
		t.Errorf("--tables=lost wrote %s in the working folder", stray[0].Name())
	}
	if err := tables.Diff(context.Background(), up.Dir, lostDir, tables.LostTable); err != nil {
		t.Errorf("--tables=lost: %v", err)
	}
	if _, err := os.Stat(filepath.Join(lostDir, tables.URLsTable)); !os.IsNotExist(err) {
		t.Errorf("--tables=lost wrote a urls folder (%v)", err)
	}

	// Recluster keeps the sweeps: the same urls and lost tables.
	again := t.TempDir()
	if _, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: up.Dir, Output: again, Policy: cfg.Policy}); err != nil {
		t.Fatal(err)
	}
	if err := tables.Diff(context.Background(), up.Dir, again, tables.URLsTable, tables.LostTable); err != nil {
		t.Error(err)
	}
}

// TestLostMatches: a page copied many times across two sweeps lists, per
// lost URL, --lost-matches documents of the latest sweep, the most
// resembling first and then by doc ID (by hand: the exact copies, at
// resemblance 1, before the edited one, the first of them in its file),
// or all of them with 0.
func TestLostMatches(t *testing.T) {
	dir := t.TempDir()
	text := pipelinetest.Words(7, 120)
	var urls1, texts1, urls2, texts2 []string
	for i := range 5 {
		urls1, texts1 = append(urls1, fmt.Sprintf("https://example.test/old/%d", i)), append(texts1, text)
	}
	// The edited copy first: by doc ID alone it would be listed first.
	edited := strings.Fields(text)
	for i := 40; i < len(edited); i += 40 {
		edited[i] = "changed"
	}
	urls2, texts2 = append(urls2, "https://example.test/new/edited"), append(texts2, strings.Join(edited, " "))
	for i := range 12 {
		urls2, texts2 = append(urls2, fmt.Sprintf("https://example.test/new/%d", i)), append(texts2, text)
	}
	writeSweep(t, filepath.Join(dir, "sweep-1.parquet"), urls1, texts1)
	writeSweep(t, filepath.Join(dir, "sweep-2.parquet"), urls2, texts2)
	cfg := pipelinetest.DefaultConfig()
	cfg.Sweep = "2026-10-01"
	index := pipelinetest.Run(t, filepath.Join(dir, "sweep-1.parquet"), cfg)
	cfg.Sweep = "2026-11-01"
	for _, c := range []struct {
		matches int
		want    []string // per lost URL
	}{
		{3, []string{"new/0", "new/1", "new/2"}},
		{0, append([]string{"new/edited"}, func() (all []string) {
			for i := range 12 {
				all = append(all, fmt.Sprintf("new/%d", i))
			}
			return all
		}()...)},
	} {
		cfg.LostMatches = c.matches
		up := pipelinetest.RunUpdate(t, index.Dir, filepath.Join(dir, "sweep-2.parquet"), cfg)
		byURL := map[string][]string{}
		for _, l := range lostRows(t, up) {
			byURL[l.URL] = append(byURL[l.URL], strings.TrimPrefix(pipelinetest.Deref(l.FoundURL), "https://example.test/"))
		}
		if len(byURL) != 5 {
			t.Errorf("--lost-matches=%d: %d lost URLs, want 5", c.matches, len(byURL))
		}
		for u, got := range byURL {
			slices.Sort(got)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("--lost-matches=%d: %s found at %v, want %v", c.matches, u, got, want)
			}
		}
		if got := up.Manifest.Settings["lost_matches"]; got != fmt.Sprint(c.matches) {
			t.Errorf("manifest lost_matches %q, want %d", got, c.matches)
		}
	}
}

// lostRows reads an output's lost table.
func lostRows(t *testing.T, r *pipelinetest.Result) []tables.Lost {
	t.Helper()
	rows, err := tables.ReadTable[tables.Lost](context.Background(), r.Dir, tables.LostTable)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
