package pipelines

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/policy"
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
	const shared = "../../shared/data/deb-copyright.parquet"
	if _, err := os.Stat(shared); err == nil {
		dir := t.TempDir()
		a, b := splitCorpus(t, shared, dir, 0.6)
		splits = append(splits, split{"deb-copyright", a, b, filepath.Join(dir, "*.parquet")})
	} else {
		t.Logf("the shared corpora are absent (%v): the sample crawl only", err)
	}
	for _, c := range []struct {
		name string
		set  func(*transforms.Config)
	}{
		{"defaults", func(*transforms.Config) {}},
		{"containment", func(c *transforms.Config) { c.Policy = policy.Policy{Containment: 0.5} }},
		// A low cap: shingles the new documents push over it must leave
		// the index's pairs as a full run would count them.
		{"common shingles", func(c *transforms.Config) { c.MaxShingleDocs = 6 }},
	} {
		for _, sp := range splits {
			t.Run(c.name+"/"+sp.name, func(t *testing.T) {
				cfg := defaultConfig()
				cfg.Partitions = 5
				c.set(&cfg)
				index := run(t, sp.old, cfg)
				cfg.Partitions = 7 // the update need not match the index's
				up := runUpdate(t, index.dir, sp.new, cfg)
				full := run(t, sp.all, cfg)
				checkInvariants(t, up, len(full.docs))
				if err := tables.Diff(context.Background(), full.dir, up.dir); err != nil {
					t.Fatal(err)
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
