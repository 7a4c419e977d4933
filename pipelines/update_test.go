package pipelines

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/transforms"
)

// datedPage is a crawl row with its date, for splitting a corpus.
type datedPage struct {
	ID   string `parquet:"id"`
	URL  string `parquet:"url"`
	Date string `parquet:"date"`
	Text string `parquet:"text"`
}

// splitCorpus writes the rows of file into two files of dir, the first
// holding the first share of the rows, and returns their paths.
func splitCorpus(t *testing.T, file, dir string, share float64) (first, second string) {
	t.Helper()
	cols := crawl.Columns{Text: "text", URL: "url", ID: "id", Date: "date"}
	var rows []datedPage
	splits, err := crawl.Splits(context.Background(), 0, file, cols)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range splits {
		err := crawl.ReadSplit(context.Background(), sp, cols, func(r crawl.Row) error {
			rows = append(rows, datedPage{r.ID, r.URL, r.Date, r.Content})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	n := int(share * float64(len(rows)))
	write := func(name string, rows []datedPage) string {
		path := filepath.Join(dir, name)
		if err := parquet.WriteFile(path, rows, parquet.MaxRowsPerRowGroup(200)); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return write("a.parquet", rows[:n]), write("b.parquet", rows[n:])
}

// runUpdate runs an update of index with input into a new folder.
func runUpdate(t *testing.T, index, input string, cfg transforms.Config) *result {
	t.Helper()
	dir := t.TempDir()
	m, err := Update(context.Background(), UpdateOptions{From: index, Options: Options{Input: input, Output: dir, Config: cfg}})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	return readResult(t, dir, m, cfg.Policy)
}

// TestUpdateEqualsFullRun splits the sample crawl and a shared corpus in
// two, runs the first part, updates it with the second, and checks that
// every table equals that of a full run over both parts: same doc IDs,
// clusters, pairs with their estimates, contained pairs and sketches.
func TestUpdateEqualsFullRun(t *testing.T) {
	type split struct {
		name, old, new, all string
	}
	splits := []split{{"sample", "../testdata/crawl/part-0000[01].parquet", "../testdata/crawl/part-0000[23].parquet", "../testdata/crawl/*.parquet"}}
	if shared, ok := shareddata.Optional(t, "deb-copyright.parquet"); ok {
		dir := t.TempDir()
		a, b := splitCorpus(t, shared, dir, 0.6)
		splits = append(splits, split{"deb-copyright", a, b, filepath.Join(dir, "*.parquet")})
	}
	for _, c := range []struct {
		name       string
		set        func(*transforms.Config)
		sampleOnly bool                     // the split shared corpus has no other columns
		index      func(*transforms.Config) // the index's settings beside set's, if other
	}{
		{"defaults", func(*transforms.Config) {}, false, nil},
		{"containment", func(c *transforms.Config) { c.Policy = policy.Policy{Containment: 0.5} }, false, nil},
		// A low cap: shingles the new documents push over it must leave
		// the index's pairs as a full run would count them.
		{"common shingles", func(c *transforms.Config) { c.MaxShingleDocs = 3 }, false, nil},
		// MIN_s: the index's pairs that lose a shingle are counted again.
		{"min:N", func(c *transforms.Config) { c.Sketch = sketch.Spec{Kind: sketch.Min, N: 100} }, false, nil},
		{"min:N common shingles", func(c *transforms.Config) {
			c.Sketch, c.MaxShingleDocs = sketch.Spec{Kind: sketch.Min, N: 100}, 3
		}, false, nil},
		{"minhash common shingles", func(c *transforms.Config) {
			c.Sketch, c.MaxShingleDocs = sketch.Spec{Kind: sketch.MinHash, N: 64}, 3
		}, false, nil},
		// The kept document by the docs table's columns, read from the
		// index's docs table.
		{"keep shortest URL", func(c *transforms.Config) { c.Keep, _ = keep.Parse("shortest-url") }, false, nil},
		// The kept document by an input column, read from the index's
		// inputs for its documents.
		{"keep by column", func(c *transforms.Config) {
			c.Keep, _ = keep.Parse("max:language_score")
			c.Columns.Score = c.Keep.NeedsColumn()
		}, true, nil},
		// A list of rules: the docs table's and the inputs' joined.
		{"keep by a list", func(c *transforms.Config) {
			c.Keep, _ = keep.Parse("host-suffix:.uk,max:language_score,shortest-url")
			c.Columns.Score = c.Keep.NeedsColumn()
		}, true, nil},
		// The uncertain pairs verified: the index's documents are read
		// again from its inputs for the new pairs and the index's own
		// pairs not carried.
		{"verify uncertain", func(c *transforms.Config) { c.Verify = settings.VerifyUncertain }, false, nil},
		{"verify uncertain containment", func(c *transforms.Config) {
			c.Verify, c.Policy = settings.VerifyUncertain, policy.Policy{Containment: 0.5}
		}, false, nil},
		// An index written unverified: none of its pairs are carried,
		// and its uncertain ones are verified now.
		{"verify uncertain, index unverified", func(c *transforms.Config) { c.Verify = settings.VerifyUncertain }, false,
			func(c *transforms.Config) { c.Verify = settings.VerifyNone }},
	} {
		for _, sp := range splits {
			if c.sampleOnly && sp.name != "sample" {
				continue
			}
			t.Run(c.name+"/"+sp.name, func(t *testing.T) {
				cfg := defaultConfig()
				cfg.Partitions = 5
				c.set(&cfg)
				ixCfg := cfg
				if c.index != nil {
					c.index(&ixCfg)
				}
				index := run(t, sp.old, ixCfg)
				// A multiple of the index's: each update partition reads
				// part of one index shard (the sample); or the index's
				// own count, where its pairs shards may be carried.
				cfg.Partitions = 10
				if sp.name != "sample" {
					cfg.Partitions = 5
				}
				up := runUpdate(t, index.dir, sp.new, cfg)
				full := run(t, sp.all, cfg)
				checkInvariants(t, up, len(full.docs))
				if err := tables.Diff(context.Background(), full.dir, up.dir); err != nil {
					t.Fatal(err)
				}
				if cfg.MaxShingleDocs < 10 && up.manifest.Counts["recapped_shingles"] == 0 {
					t.Error("no shingle of the index became too common: the case tests nothing")
				}
				t.Logf("index %d docs, update %d docs: %d clusters, %d pairs, %d linked; %d common shingles dropped",
					len(index.docs), len(up.docs), len(up.clusters), len(up.pairs), up.manifest.Counts["links"], full.manifest.Counts["common_shingles_dropped"])
			})
		}
	}
}

// TestUpdateRefuses checks the indexes an update cannot take.
func TestUpdateRefuses(t *testing.T) {
	cfg := defaultConfig()
	index := run(t, "../testdata/crawl/part-00000.parquet", cfg)
	for _, c := range []struct {
		name, from, input, want string
		set                     func(*transforms.Config)
	}{
		{"other shingle size", index.dir, "../testdata/crawl/part-00001.parquet", "shingle_words", func(c *transforms.Config) { c.ShingleWords = 5 }},
		{"other seed", index.dir, "../testdata/crawl/part-00001.parquet", "seed", func(c *transforms.Config) { c.Seed++ }},
		{"other sketch", index.dir, "../testdata/crawl/part-00001.parquet", "sketch", func(c *transforms.Config) { c.Sketch.N = 20 }},
		{"a file of the index", index.dir, "../testdata/crawl/part-0000[01].parquet", "already in the index", func(*transforms.Config) {}},
		{"no _SUCCESS", t.TempDir(), "../testdata/crawl/part-00001.parquet", "not a finished neardup output", func(*transforms.Config) {}},
		{"partitions", index.dir, "../testdata/crawl/part-00001.parquet", "multiple of its index's", func(c *transforms.Config) { c.Partitions = index.manifest.Partitions + 1 }},
		{"urls without doc_ids", withoutDocIDs(t, index.dir), "../testdata/crawl/part-00001.parquet", "recluster it first", func(*transforms.Config) {}},
		{"verify exact", index.dir, "../testdata/crawl/part-00001.parquet", "--verify=uncertain or not at all", func(c *transforms.Config) { c.Verify = settings.VerifyExact }},
		{"verify uncertain, other text column", index.dir, "../testdata/crawl/part-00001.parquet", "reads the index's documents again", func(c *transforms.Config) {
			c.Verify, c.Columns.Text = settings.VerifyUncertain, "body"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := defaultConfig()
			c.set(&cfg)
			abs, _ := filepath.Abs(c.input)
			_, err := Update(context.Background(), UpdateOptions{From: c.from, Options: Options{Input: abs, Output: t.TempDir(), Config: cfg}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Update: %v, want an error about %q", err, c.want)
			}
		})
	}
}

// withoutDocIDs is a copy of the output dir as an earlier neardup wrote
// it: its urls shards without the doc_ids column.
func withoutDocIDs(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "old")
	if err := os.CopyFS(out, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	type oldURL struct {
		URL        string `parquet:"url"`
		FirstSweep string `parquet:"first_sweep"`
		LastSweep  string `parquet:"last_sweep"`
		Docs       int64  `parquet:"docs"`
		LastDocID  int64  `parquet:"last_doc_id"`
	}
	shards, err := filepath.Glob(filepath.Join(out, tables.URLsTable, "*.parquet"))
	if err != nil || len(shards) == 0 {
		t.Fatalf("no urls shards: %v", err)
	}
	for _, sh := range shards {
		rows, err := tables.ReadURLs(ctx, sh)
		if err != nil {
			t.Fatal(err)
		}
		var old []oldURL
		for _, r := range rows {
			old = append(old, oldURL{r.URL, r.FirstSweep, r.LastSweep, r.Docs, r.LastDocID})
		}
		if err := tables.Write(ctx, sh, old); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestUpdateSweeps: an update with a later sweep date starts a new sweep,
// whose documents carry it while the index's keep theirs; one with the
// latest sweep's date adds to it; an earlier date is refused.
func TestUpdateSweeps(t *testing.T) {
	cfg := defaultConfig()
	cfg.Sweep = "2026-10-01"
	index := run(t, "../testdata/crawl/part-00000.parquet", cfg)
	cfg.Sweep = "2026-11-01"
	up := runUpdate(t, index.dir, "../testdata/crawl/part-00001.parquet", cfg)
	for _, d := range up.docs {
		want := "2026-10-01"
		if strings.HasSuffix(d.SourceFile, "part-00001.parquet") {
			want = "2026-11-01"
		}
		if d.Sweep != want {
			t.Fatalf("doc %d of %s: sweep %q, want %q", d.DocID, d.SourceFile, d.Sweep, want)
		}
	}
	if got := up.manifest.Settings["latest_sweep"]; got != "2026-11-01" {
		t.Errorf("latest_sweep = %q after the update, want 2026-11-01", got)
	}
	same := runUpdate(t, up.dir, "../testdata/crawl/part-00002.parquet", cfg)
	if got := same.manifest.Settings["latest_sweep"]; got != "2026-11-01" {
		t.Errorf("latest_sweep = %q after adding to the sweep, want 2026-11-01", got)
	}
	cfg.Sweep = "2026-10-15"
	_, err := Update(context.Background(), UpdateOptions{From: same.dir, Options: Options{Input: "../testdata/crawl/part-00003.parquet", Output: t.TempDir(), Config: cfg}})
	if err == nil || !strings.Contains(err.Error(), "earlier than") {
		t.Errorf("an update dated before the latest sweep: %v, want a refusal", err)
	}
}

// writeSweep writes pages (URL -> text) to a Parquet file.
func writeSweep(t *testing.T, path string, urls []string, texts []string) {
	t.Helper()
	rows := make([]datedPage, len(urls))
	for i := range urls {
		rows[i] = datedPage{ID: urls[i], URL: urls[i], Text: texts[i]}
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
		urls1, texts1 = append(urls1, u), append(texts1, words(i, 120))
		switch {
		case i < 10:
			urls2, texts2 = append(urls2, u), append(texts2, words(i, 120))
		case i < 15:
			moved := fmt.Sprintf("https://example.test/moved/%d", i)
			urls2, texts2 = append(urls2, moved), append(texts2, strings.Replace(words(i, 120), "w", "changed w", 1))
		case i < 20:
			// gone
		default:
			urls2, texts2 = append(urls2, u), append(texts2, words(i+1000, 120))
		}
	}
	writeSweep(t, filepath.Join(dir, "sweep-1.parquet"), urls1, texts1)
	writeSweep(t, filepath.Join(dir, "sweep-2.parquet"), urls2, texts2)
	cfg := defaultConfig()
	cfg.Sweep = "2026-10-01"
	index := run(t, filepath.Join(dir, "sweep-1.parquet"), cfg)
	if n := len(index.lostRows(t)); n != 0 {
		t.Errorf("one sweep has %d lost rows", n)
	}
	cfg.Sweep = "2026-11-01"
	up := runUpdate(t, index.dir, filepath.Join(dir, "sweep-2.parquet"), cfg)

	urls, err := tables.ReadTable[tables.URL](context.Background(), up.dir, tables.URLsTable)
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

	lost := up.lostRows(t)
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
				t.Errorf("page %d: found %v at %v, want %s at resemblance 0.5 or more", i, deref(r.FoundURL), r.Resemblance, want)
			}
		} else if r.ClusterID != nil || r.FoundDocID != nil {
			t.Errorf("page %d, gone: cluster %v, found %v; want none", i, r.ClusterID, r.FoundDocID)
		}
	}

	got, u, err := Lost(context.Background(), up.dir, "https://example.test/page/11")
	if err != nil || u == nil || len(got) != 1 || deref(got[0].FoundURL) != "https://example.test/moved/11" {
		t.Errorf("Lost(page/11) = %v, %v, %v", got, u, err)
	}
	if got, u, err := Lost(context.Background(), up.dir, "https://example.test/page/3"); err != nil || len(got) != 0 || u == nil || u.LastSweep != "2026-11-01" {
		t.Errorf("Lost(page/3), seen in the latest sweep = %v, %v, %v", got, u, err)
	}
	if _, u, err := Lost(context.Background(), up.dir, "https://example.test/never"); err != nil || u != nil {
		t.Errorf("Lost of a URL never seen = %v, %v", u, err)
	}

	// An update adding an unrelated page to the latest sweep finds the
	// lost pages where the index's documents of that sweep hold them.
	writeSweep(t, filepath.Join(dir, "sweep-2-more.parquet"), []string{"https://example.test/extra"}, []string{words(5000, 120)})
	more := runUpdate(t, up.dir, filepath.Join(dir, "sweep-2-more.parquet"), cfg)
	if err := tables.Diff(context.Background(), up.dir, more.dir, tables.LostTable); err != nil {
		t.Errorf("adding to the latest sweep: %v", err)
	}

	// An update that writes the lost table alone finds the same rows.
	lostOnly := cfg
	lostOnly.Tables = tables.Selection{tables.LostTable}
	lostDir, work := t.TempDir(), t.TempDir()
	t.Run("lost only", func(t *testing.T) {
		t.Chdir(work) // a table left out must not be written anywhere, here included
		if _, err := Update(context.Background(), UpdateOptions{From: index.dir, Options: Options{Input: filepath.Join(dir, "sweep-2.parquet"), Output: lostDir, Config: lostOnly}}); err != nil {
			t.Fatal(err)
		}
	})
	if stray, _ := os.ReadDir(work); len(stray) > 0 {
		t.Errorf("--tables=lost wrote %s in the working folder", stray[0].Name())
	}
	if err := tables.Diff(context.Background(), up.dir, lostDir, tables.LostTable); err != nil {
		t.Errorf("--tables=lost: %v", err)
	}
	if _, err := os.Stat(filepath.Join(lostDir, tables.URLsTable)); !os.IsNotExist(err) {
		t.Errorf("--tables=lost wrote a urls folder (%v)", err)
	}

	// Recluster keeps the sweeps: the same urls and lost tables.
	again := t.TempDir()
	if _, err := Recluster(context.Background(), ReclusterOptions{From: up.dir, Output: again, Policy: cfg.Policy}); err != nil {
		t.Fatal(err)
	}
	if err := tables.Diff(context.Background(), up.dir, again, tables.URLsTable, tables.LostTable); err != nil {
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
	text := words(7, 120)
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
	cfg := defaultConfig()
	cfg.Sweep = "2026-10-01"
	index := run(t, filepath.Join(dir, "sweep-1.parquet"), cfg)
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
		up := runUpdate(t, index.dir, filepath.Join(dir, "sweep-2.parquet"), cfg)
		byURL := map[string][]string{}
		for _, l := range up.lostRows(t) {
			byURL[l.URL] = append(byURL[l.URL], strings.TrimPrefix(deref(l.FoundURL), "https://example.test/"))
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
		if got := up.manifest.Settings["lost_matches"]; got != fmt.Sprint(c.matches) {
			t.Errorf("manifest lost_matches %q, want %d", got, c.matches)
		}
	}
}

func (r *result) lostRows(t *testing.T) []tables.Lost {
	t.Helper()
	rows, err := tables.ReadTable[tables.Lost](context.Background(), r.dir, tables.LostTable)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// deref is *p, or T's zero value for a null.
func deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// TestUpdateChain: updates of updates, each with more partitions than the
// last (so each reads part of an index shard), and an update of a
// reclustered output, give a full run's tables.
func TestUpdateChain(t *testing.T) {
	ctx := context.Background()
	cfg := defaultConfig()
	cfg.Partitions = 3
	index := run(t, "../testdata/crawl/part-00000.parquet", cfg)
	cfg.Partitions = 6
	first := runUpdate(t, index.dir, "../testdata/crawl/part-00001.parquet", cfg)
	cfg.Partitions = 0 // a multiple of 6 by default
	second := runUpdate(t, first.dir, "../testdata/crawl/part-0000[23].parquet", cfg)
	if p := second.manifest.Partitions; p%6 != 0 {
		t.Errorf("the second update took %d partitions, not a multiple of its index's 6", p)
	}
	// The postings, sketches and pairs of the first run, carried through
	// both updates under their names (the pairs only from the second, cut
	// by its partition count), beside each update's own.
	if names := strings.Join(second.manifest.Tables[tables.PairsTable], " "); !strings.Contains(names, "-of-00006-n000002.parquet") {
		t.Errorf("pairs of the second update: %s; want the index's shards carried", names)
	}
	for _, table := range []string{tables.PostingsTable, tables.SketchesTable} {
		names := strings.Join(second.manifest.Tables[table], " ")
		if !strings.Contains(names, "-of-00003-n000001.parquet") || !strings.Contains(names, "-of-00006-n000002.parquet") {
			t.Errorf("%s of the second update: %s; want the index's shards carried", table, names)
		}
	}
	cfg.Partitions = 5
	full := run(t, "../testdata/crawl/*.parquet", cfg)
	if err := tables.Diff(ctx, full.dir, second.dir); err != nil {
		t.Fatal(err)
	}

	pol := policy.Policy{Resemblance: 0.8}
	dir := t.TempDir()
	if _, err := Recluster(ctx, ReclusterOptions{From: index.dir, Output: dir, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	cfg.Policy, cfg.Partitions = pol, 0
	up := runUpdate(t, dir, "../testdata/crawl/part-0000[123].parquet", cfg)
	full = run(t, "../testdata/crawl/*.parquet", cfg)
	if err := tables.Diff(ctx, full.dir, up.dir); err != nil {
		t.Fatalf("an update of a reclustered output: %v", err)
	}
	// Another policy than the index's: its pairs rows change (linked),
	// so none is carried.
	cfg.Partitions = 3
	other := runUpdate(t, index.dir, "../testdata/crawl/part-0000[123].parquet", cfg)
	if err := tables.Diff(ctx, full.dir, other.dir); err != nil {
		t.Fatalf("an update under another policy than its index's: %v", err)
	}
}
