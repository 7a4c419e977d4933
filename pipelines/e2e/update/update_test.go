package update

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/transforms"
)

// splitCorpus writes the rows of file into two files of dir, the first
// holding the first share of the rows, and returns their paths.
func splitCorpus(t *testing.T, file, dir string, share float64) (first, second string) {
	t.Helper()
	cols := crawl.Columns{Text: "text", URL: "url", ID: "id", Date: "date"}
	var rows []pipelinetest.DatedPage
	splits, err := crawl.Splits(context.Background(), 0, file, cols)
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range splits {
		err := crawl.ReadSplit(context.Background(), sp, cols, func(r crawl.Row) error {
			rows = append(rows, pipelinetest.DatedPage{ID: r.ID, URL: r.URL, Date: r.Date, Text: r.Content})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	n := int(share * float64(len(rows)))
	write := func(name string, rows []pipelinetest.DatedPage) string {
		path := filepath.Join(dir, name)
		if err := parquet.WriteFile(path, rows, parquet.MaxRowsPerRowGroup(200)); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return write("a.parquet", rows[:n]), write("b.parquet", rows[n:])
}

// TestUpdateEqualsFullRun splits the sample crawl and a shared corpus in
// two, runs the first part, updates it with the second, and checks that
// every table equals that of a full run over both parts: same doc IDs,
// clusters, pairs with their estimates, contained pairs and sketches.
func TestUpdateEqualsFullRun(t *testing.T) {
	type split struct {
		name, old, new, all string
	}
	splits := []split{{"sample", "../../../testdata/crawl/part-0000[01].parquet", "../../../testdata/crawl/part-0000[23].parquet", "../../../testdata/crawl/*.parquet"}}
	if shared, ok := shareddata.Optional(t, "deb-copyright.parquet"); ok {
		dir := t.TempDir()
		a, b := splitCorpus(t, shared, dir, 0.6)
		splits = append(splits, split{"deb-copyright", a, b, filepath.Join(dir, "*.parquet")})
	}
	for _, c := range []struct {
		name string
		set  func(*transforms.Config)
		// On the sample alone: the split shared corpus has no other
		// columns, or the case is the combination of two that run on
		// it each (a sketch and the cap, a policy and verification).
		sampleOnly bool
		index      func(*transforms.Config) // the index's settings beside set's, if other
	}{
		{"defaults", func(*transforms.Config) {}, false, nil},
		{"containment", func(c *transforms.Config) { c.Policy = policy.Policy{Containment: 0.5} }, false, nil},
		// A low cap: shingles the new documents push over it must leave
		// the index's pairs as a full run would count them.
		{"common shingles", func(c *transforms.Config) { c.MaxShingleDocs, c.AnchorDocs = 3, 0 }, false, nil},
		// Anchored instead of dropped (--anchor-docs): a list the new
		// documents push over the cap pairs through its first document
		// only, and the index's other pairs lose its count.
		{"anchored common shingles", func(c *transforms.Config) { c.MaxShingleDocs, c.AnchorDocs = 4, 1 }, false, nil},
		{"min:N anchored common shingles", func(c *transforms.Config) {
			c.Sketch, c.MaxShingleDocs, c.AnchorDocs = sketch.Spec{Kind: sketch.Min, N: 100}, 4, 1
		}, true, nil},
		{"minhash anchored common shingles", func(c *transforms.Config) {
			c.Sketch, c.MaxShingleDocs, c.AnchorDocs = sketch.Spec{Kind: sketch.MinHash, N: 64}, 4, 1
		}, true, nil},
		// MIN_s: the index's pairs that lose a shingle are counted again.
		{"min:N", func(c *transforms.Config) { c.Sketch = sketch.Spec{Kind: sketch.Min, N: 100} }, false, nil},
		{"min:N common shingles", func(c *transforms.Config) {
			c.Sketch, c.MaxShingleDocs, c.AnchorDocs = sketch.Spec{Kind: sketch.Min, N: 100}, 3, 0
		}, true, nil},
		{"minhash common shingles", func(c *transforms.Config) {
			c.Sketch, c.MaxShingleDocs, c.AnchorDocs = sketch.Spec{Kind: sketch.MinHash, N: 64}, 3, 0
		}, true, nil},
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
		{"verify uncertain", func(c *transforms.Config) { c.Verify = settings.VerifyUncertain }, true, nil},
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
				cfg := pipelinetest.DefaultConfig()
				cfg.Partitions = 5
				c.set(&cfg)
				ixCfg := cfg
				if c.index != nil {
					c.index(&ixCfg)
				}
				index := pipelinetest.Run(t, sp.old, ixCfg)
				// A multiple of the index's: each update partition reads
				// part of one index shard (the sample); or the index's
				// own count, where its pairs shards may be carried.
				cfg.Partitions = 10
				if sp.name != "sample" {
					cfg.Partitions = 5
				}
				up := pipelinetest.RunUpdate(t, index.Dir, sp.new, cfg)
				full := pipelinetest.Run(t, sp.all, cfg)
				pipelinetest.CheckInvariants(t, up, len(full.Docs))
				if err := tables.Diff(context.Background(), full.Dir, up.Dir); err != nil {
					t.Fatal(err)
				}
				if cfg.MaxShingleDocs < 10 && up.Manifest.Counts["recapped_shingles"] == 0 {
					t.Error("no shingle of the index became too common: the case tests nothing")
				}
				t.Logf("index %d docs, update %d docs: %d clusters, %d pairs, %d linked; %d common shingles dropped",
					len(index.Docs), len(up.Docs), len(up.Clusters), len(up.Pairs), up.Manifest.Counts["links"], full.Manifest.Counts["common_shingles_dropped"])
			})
		}
	}
}

// TestUpdateRefuses checks the indexes an update cannot take.
func TestUpdateRefuses(t *testing.T) {
	cfg := pipelinetest.DefaultConfig()
	index := pipelinetest.Run(t, "../../../testdata/crawl/part-00000.parquet", cfg)
	for _, c := range []struct {
		name, from, input, want string
		set                     func(*transforms.Config)
	}{
		{"other shingle size", index.Dir, "../../../testdata/crawl/part-00001.parquet", "shingle_words", func(c *transforms.Config) { c.ShingleWords = 5 }},
		{"other seed", index.Dir, "../../../testdata/crawl/part-00001.parquet", "seed", func(c *transforms.Config) { c.Seed++ }},
		{"other sketch", index.Dir, "../../../testdata/crawl/part-00001.parquet", "sketch", func(c *transforms.Config) { c.Sketch.N = 20 }},
		{"a file of the index", index.Dir, "../../../testdata/crawl/part-0000[01].parquet", "already in the index", func(*transforms.Config) {}},
		{"no _SUCCESS", t.TempDir(), "../../../testdata/crawl/part-00001.parquet", "not a finished neardup output", func(*transforms.Config) {}},
		{"partitions", index.Dir, "../../../testdata/crawl/part-00001.parquet", "multiple of its index's", func(c *transforms.Config) { c.Partitions = index.Manifest.Partitions + 1 }},
		{"urls without doc_ids", withoutDocIDs(t, index.Dir), "../../../testdata/crawl/part-00001.parquet", "recluster it first", func(*transforms.Config) {}},
		{"verify exact", index.Dir, "../../../testdata/crawl/part-00001.parquet", "--verify=uncertain or not at all", func(c *transforms.Config) { c.Verify = settings.VerifyExact }},
		{"verify uncertain, other text column", index.Dir, "../../../testdata/crawl/part-00001.parquet", "reads the index's documents again", func(c *transforms.Config) {
			c.Verify, c.Columns.Text = settings.VerifyUncertain, "body"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := pipelinetest.DefaultConfig()
			c.set(&cfg)
			abs, _ := filepath.Abs(c.input)
			_, err := pipelines.Update(context.Background(), pipelines.UpdateOptions{From: c.from, Options: pipelines.Options{Input: abs, Output: t.TempDir(), Config: cfg}})
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

// TestUpdateChain: updates of updates, each with more partitions than the
// last (so each reads part of an index shard), and an update of a
// reclustered output, give a full run's tables.
func TestUpdateChain(t *testing.T) {
	ctx := context.Background()
	cfg := pipelinetest.DefaultConfig()
	cfg.Partitions = 3
	index := pipelinetest.Run(t, "../../../testdata/crawl/part-00000.parquet", cfg)
	cfg.Partitions = 6
	first := pipelinetest.RunUpdate(t, index.Dir, "../../../testdata/crawl/part-00001.parquet", cfg)
	cfg.Partitions = 0 // a multiple of 6 by default
	second := pipelinetest.RunUpdate(t, first.Dir, "../../../testdata/crawl/part-0000[23].parquet", cfg)
	if p := second.Manifest.Partitions; p%6 != 0 {
		t.Errorf("the second update took %d partitions, not a multiple of its index's 6", p)
	}
	// The postings, sketches and pairs of the first run, carried through
	// both updates under their names (the pairs only from the second, cut
	// by its partition count), beside each update's own.
	if names := strings.Join(second.Manifest.Tables[tables.PairsTable], " "); !strings.Contains(names, "-of-00006-n000002.parquet") {
		t.Errorf("pairs of the second update: %s; want the index's shards carried", names)
	}
	for _, table := range []string{tables.PostingsTable, tables.SketchesTable} {
		names := strings.Join(second.Manifest.Tables[table], " ")
		if !strings.Contains(names, "-of-00003-n000001.parquet") || !strings.Contains(names, "-of-00006-n000002.parquet") {
			t.Errorf("%s of the second update: %s; want the index's shards carried", table, names)
		}
	}
	cfg.Partitions = 5
	full := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", cfg)
	if err := tables.Diff(ctx, full.Dir, second.Dir); err != nil {
		t.Fatal(err)
	}

	pol := policy.Policy{Resemblance: 0.8}
	dir := t.TempDir()
	if _, err := pipelines.Recluster(ctx, pipelines.ReclusterOptions{From: index.Dir, Output: dir, Policy: pol}); err != nil {
		t.Fatal(err)
	}
	cfg.Policy, cfg.Partitions = pol, 0
	up := pipelinetest.RunUpdate(t, dir, "../../../testdata/crawl/part-0000[123].parquet", cfg)
	full = pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", cfg)
	if err := tables.Diff(ctx, full.Dir, up.Dir); err != nil {
		t.Fatalf("an update of a reclustered output: %v", err)
	}
	// Another policy than the index's: its pairs rows change (linked),
	// so none is carried.
	cfg.Partitions = 3
	other := pipelinetest.RunUpdate(t, index.Dir, "../../../testdata/crawl/part-0000[123].parquet", cfg)
	if err := tables.Diff(ctx, full.Dir, other.Dir); err != nil {
		t.Fatalf("an update under another policy than its index's: %v", err)
	}
}

// An update verifies the index's documents on the features its run kept
// beside its tables (output.Features), reading none of its input again,
// and keeps them with its own for the next update. Without them (an
// index whose manifest lists none, or of another kind) it reads the
// index's documents again and writes the same tables.
func TestUpdateVerifiesOnTheIndexFeatures(t *testing.T) {
	old, recent := "../../../testdata/crawl/part-0000[01].parquet", "../../../testdata/crawl/part-0000[23].parquet"
	cfg := pipelinetest.DefaultConfig()
	cfg.Verify, cfg.Partitions = settings.VerifyDense, 5
	index := pipelinetest.Run(t, old, cfg)
	f := index.Manifest.Features
	if f == nil || f.Kind != "dense:512" || len(f.Files) == 0 {
		t.Fatalf("the index keeps features %+v; want dense:512 files", f)
	}
	var bytes int64
	for _, name := range f.Files {
		st, err := os.Stat(filepath.Join(index.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		bytes += st.Size()
	}
	if bytes != f.Bytes {
		t.Errorf("the features files hold %d bytes, the manifest says %d", bytes, f.Bytes)
	}
	full := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", cfg)

	up := pipelinetest.RunUpdate(t, index.Dir, recent, cfg)
	if err := tables.Diff(context.Background(), full.Dir, up.Dir); err != nil {
		t.Fatal(err)
	}
	if n := up.Manifest.Counts["pairs_verified"]; n == 0 {
		t.Fatal("the update verified no pair: the test tests nothing")
	}
	if n := up.Manifest.Counts["verify_docs_reread"]; n != 0 {
		t.Errorf("the update read %d of the index's documents again; want them all from its features", n)
	}
	kept := map[string]bool{}
	for _, name := range up.Manifest.Features.Files {
		kept[name] = true
	}
	for _, name := range f.Files {
		if !kept[name] {
			t.Errorf("the update's output lacks the index's features file %s", name)
		}
	}
	if len(kept) <= len(f.Files) {
		t.Errorf("the update keeps %d features files, the index %d: none of its own", len(kept), len(f.Files))
	}

	// A recluster keeps them whole, for the updates of its output.
	rc, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: index.Dir, Output: t.TempDir(), Policy: policy.Policy{Containment: 0.8}})
	if err != nil {
		t.Fatal(err)
	}
	if g := rc.Features; g == nil || g.Kind != f.Kind || !slices.Equal(g.Files, f.Files) || g.Bytes != f.Bytes {
		t.Errorf("the recluster keeps features %+v; want the index's %+v", g, f)
	}

	// The same index with no features listed, then with another kind's.
	for _, c := range []struct {
		name string
		edit func(m map[string]any)
	}{
		{"none listed", func(m map[string]any) { delete(m, "features") }},
		{"another kind", func(m map[string]any) { m["features"].(map[string]any)["kind"] = "bloom:10" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			if err := os.CopyFS(dir, os.DirFS(index.Dir)); err != nil {
				t.Fatal(err)
			}
			editManifest(t, dir, c.edit)
			up := pipelinetest.RunUpdate(t, dir, recent, cfg)
			if err := tables.Diff(context.Background(), full.Dir, up.Dir); err != nil {
				t.Fatal(err)
			}
			if n := up.Manifest.Counts["verify_docs_reread"]; n == 0 {
				t.Error("the update read none of the index's documents again: it verified them on features it should not have used")
			}
		})
	}
}

// editManifest rewrites the manifest of the output dir through edit.
func editManifest(t *testing.T, dir string, edit func(map[string]any)) {
	t.Helper()
	name := filepath.Join(dir, "manifest.json")
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
