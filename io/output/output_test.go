package output

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/io/tables"
)

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

func TestPublishReplacesOldOutput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// A previous run's output, with a shard this run will not write.
	old := filepath.Join(dir, "docs", "part-00007.parquet")
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte("old"), 0o644)
	os.WriteFile(filepath.Join(dir, SuccessMarker), nil, 0o644)
	// And the leftovers of a killed run.
	stale := filepath.Join(dir, TempRoot, "killed", "docs", "part-00000.parquet")
	os.MkdirAll(filepath.Dir(stale), 0o755)
	os.WriteFile(stale, []byte("partial"), 0o644)

	d, err := Prepare(ctx, dir, "run", []string{"/elsewhere/in.parquet"}, false)
	if err != nil {
		t.Fatal(err)
	}
	d.Expect.DocsRows = 1
	if exists(filepath.Join(dir, SuccessMarker)) {
		t.Error("Prepare left the old _SUCCESS: a killed run would look complete")
	}
	if exists(stale) {
		t.Error("Prepare left a killed run's temporary files")
	}
	one := int64(1)
	if err := writeShard(ctx, d.TempDir, "docs", 3, []tables.Doc{{DocID: 5, ClusterID: &one}}); err != nil {
		t.Fatal(err)
	}
	m := NewManifest(map[string]string{"input": "x"})
	m.Counts["docs"] = 1
	if err := d.Publish(ctx, m); err != nil {
		t.Fatal(err)
	}
	if exists(old) {
		t.Error("the old run's shard survived the rerun")
	}
	docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
	if err != nil || len(docs) != 1 || docs[0].DocID != 5 || *docs[0].ClusterID != 1 {
		t.Errorf("docs = %+v, %v", docs, err)
	}
	// Tables with no rows still get a readable, empty shard.
	for _, table := range []string{tables.ClustersTable, tables.PairsTable} {
		if _, err := tables.ReadTable[tables.Pair](ctx, dir, table); table == tables.PairsTable && err != nil {
			t.Errorf("%s: %v", table, err)
		}
		if !exists(filepath.Join(dir, table, tables.ShardName(0))) {
			t.Errorf("empty table %s has no shard", table)
		}
	}
	if !exists(filepath.Join(dir, SuccessMarker)) {
		t.Error("no _SUCCESS after Publish")
	}
	if exists(filepath.Join(dir, TempRoot)) {
		t.Error("temporary folder left behind")
	}
	var back Manifest
	b, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err := json.Unmarshal(b, &back); err != nil || back.Counts["docs"] != 1 || len(back.Tables["docs"]) != 1 {
		t.Errorf("manifest = %s, %v", b, err)
	}
}

func TestPrepareRefusesOutputHoldingInput(t *testing.T) {
	dir := t.TempDir()
	if _, err := Prepare(context.Background(), dir, "run", []string{filepath.Join(dir, "crawl.parquet")}, true); err == nil {
		t.Error("Prepare accepted an output folder that holds an input file")
	}
	t.Chdir(dir)
	if _, err := Prepare(context.Background(), ".", "run", []string{"crawl/a.parquet"}, true); err == nil {
		t.Error("Prepare accepted a relative output folder that holds a relative input file")
	}
}

func TestPrepareRefusesForeignFolders(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "thesis.tex"), []byte("years of work"), 0o644)
	if _, err := Prepare(ctx, dir, "run", nil, false); err == nil || !strings.Contains(err.Error(), "thesis.tex") {
		t.Errorf("Prepare accepted a folder holding someone's files: %v", err)
	}
	if _, err := Prepare(ctx, dir, "run", nil, true); err != nil {
		t.Errorf("--overwrite: %v", err)
	}
	// A neardup output, even a killed run's leftovers, is ours to replace.
	out := t.TempDir()
	os.MkdirAll(filepath.Join(out, TempRoot, "killed", "docs"), 0o755)
	os.MkdirAll(filepath.Join(out, "docs"), 0o755)
	os.WriteFile(filepath.Join(out, ManifestFile), []byte("{}"), 0o644)
	if _, err := Prepare(ctx, out, "run", nil, false); err != nil {
		t.Errorf("Prepare refused a neardup output: %v", err)
	}
	if _, err := Prepare(ctx, filepath.Join(t.TempDir(), "new"), "run", nil, false); err != nil {
		t.Errorf("Prepare refused a folder that does not exist yet: %v", err)
	}
}

// TestPublishSumsTallies: counts written as tally files replace the
// metrics of the same name (which a runner may have dropped), summed over
// the files; other counts are left alone.
func TestPublishSumsTallies(t *testing.T) {
	ctx := context.Background()
	d, err := Prepare(ctx, t.TempDir(), "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	// No docs table: the docs rows checked are the tallied ones.
	d.Tables, d.Expect.DocsRows = tables.Selection{tables.ClustersTable}, 500011
	os.MkdirAll(filepath.Join(d.TempDir, TalliesDir), 0o755)
	os.WriteFile(filepath.Join(d.TempDir, TalliesDir, "assemble-000000.json"), []byte(`{"docs_written": 250000, "docs_alone": 7}`), 0o644)
	os.WriteFile(filepath.Join(d.TempDir, TalliesDir, "assemble-000001.json"), []byte(`{"docs_written": 250011}`), 0o644)
	m := NewManifest(nil)
	m.Counts["docs_written"] = 250000 // one partition's metrics lost
	m.Counts["docs"] = 500011
	if err := d.Publish(ctx, m); err != nil {
		t.Fatal(err)
	}
	if m.Counts["docs_written"] != 500011 || m.Counts["docs_alone"] != 7 || m.Counts["docs"] != 500011 {
		t.Errorf("counts after publish: %v", m.Counts)
	}
	if d, err = Prepare(ctx, t.TempDir(), "run", nil, false); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(d.TempDir, TalliesDir), 0o755)
	os.WriteFile(filepath.Join(d.TempDir, TalliesDir, "bad.json"), []byte(`{"docs_written": "x"}`), 0o644)
	if err := d.Publish(ctx, NewManifest(nil)); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("a corrupt tally: %v, want an error naming the file", err)
	}
}
