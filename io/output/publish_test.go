package output

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/faultstore"
	_ "github.com/neardup/neardup/io/beamfs"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
)

func TestMain(m *testing.M) {
	// A proof that fails on what a listing showed is looked at again
	// after ListingSettle's waits (37 s in all): the tests of failing
	// proofs need not wait so long. TestPublishUnderListingLag sets its
	// own.
	ListingSettle = []time.Duration{time.Millisecond}
	os.Exit(m.Run())
}

// objectStoreOutput is a new output folder on faulty://, written as on an
// object store (no rename: moves copy and delete), and its local path.
func objectStoreOutput(t *testing.T) (dir, local string) {
	t.Helper()
	t.Cleanup(faultstore.Clear)
	local = filepath.Join(t.TempDir(), "out")
	return faultstore.Name(local), local
}

// filesBelow lists the files below the local folder dir, relative to it.
func filesBelow(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	return names
}

// docIDs reads the docs table of a finished output on faulty://.
func docIDs(t *testing.T, ctx context.Context, dir string) []int64 {
	t.Helper()
	m, err := ReadManifest(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, f := range m.Tables[tables.DocsTable] {
		rows, err := tables.Read[tables.Doc](ctx, store.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			ids = append(ids, r.DocID)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestPublicationResumes: a publication whose copies fail midway, on a
// store without rename, leaves no _SUCCESS and its plan; Resume (runner
// publish) finishes it, in another "process" (a new Claim), to the output
// a clean publication gives: every new shard in place, the old output's
// shards that the new one does not replace gone, nothing left under
// _temporary.
func TestPublicationResumes(t *testing.T) {
	ctx := context.Background()
	dir, local := objectStoreOutput(t)
	// The old output: one shard the new run has too (key 0), one it
	// has not (key 50).
	d, err := Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	d.Tables, d.Expect.DocsRows = tables.Selection{tables.DocsTable}, 2
	if err := writeShard(ctx, d.TempDir, tables.DocsTable, 0, []tables.Doc{{DocID: -1}}); err != nil {
		t.Fatal(err)
	}
	if err := writeShard(ctx, d.TempDir, tables.DocsTable, 50, []tables.Doc{{DocID: -50}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Publish(ctx, NewManifest(nil)); err != nil {
		t.Fatal(err)
	}
	if got := docIDs(t, ctx, dir); !slices.Equal(got, []int64{-50, -1}) {
		t.Fatalf("the old output holds %v", got)
	}

	d, err = Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	d.Tables = tables.Selection{tables.DocsTable, tables.ClustersTable}
	d.Expect.Keys = map[string]int{tables.DocsTable: 40}
	d.Expect.DocsRows = writeDocs(t, ctx, d, 40)
	// The 21st shard's copy fails, three times: a publication many files
	// at once gets some done before and after it.
	remove := faultstore.FailCopies(filepath.Join(local, tables.DocsTable, tables.ShardName(20)), 3)
	stop := d.Hold(ctx)
	err = d.Publish(ctx, NewManifest(nil))
	stop()
	remove()
	if !errors.Is(err, ErrUnfinished) || !strings.Contains(err.Error(), "runner publish --output "+dir) {
		t.Fatalf("Publish with a failing copy: %v; want ErrUnfinished, saying how to finish", err)
	}
	if published(local) {
		t.Fatal("a publication that stopped midway wrote _SUCCESS")
	}
	if _, err := ReadManifest(ctx, dir); err == nil {
		t.Fatal("ReadManifest accepted an output whose publication stopped midway")
	}
	plans, _ := filepath.Glob(filepath.Join(local, TempRoot, "*", PlanFile))
	if len(plans) != 1 {
		t.Fatalf("plans left: %v; want the one publication's", plans)
	}

	msg, err := Resume(ctx, dir)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if !strings.Contains(msg, "published run") {
		t.Errorf("Resume said %q", msg)
	}
	var want []int64
	for k := range 40 {
		for i := range k {
			want = append(want, int64(k*100+i))
		}
	}
	slices.Sort(want)
	if got := docIDs(t, ctx, dir); !slices.Equal(got, want) {
		t.Errorf("the resumed output holds docs %v...; want the new run's %d rows", got[:min(5, len(got))], len(want))
	}
	var wantFiles []string
	for k := 1; k < 40; k++ { // key 0 has no rows
		wantFiles = append(wantFiles, tables.DocsTable+"/"+tables.ShardName(k))
	}
	wantFiles = append(wantFiles, tables.ClustersTable+"/"+tables.ShardName(0), ManifestFile, SuccessMarker)
	got := filesBelow(t, local)
	slices.Sort(got)
	slices.Sort(wantFiles)
	if !slices.Equal(got, wantFiles) {
		t.Errorf("files after Resume:\n%v\nwant\n%v", got, wantFiles)
	}
	m, err := ReadManifest(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Counts["input_rows"] != int64(len(want)) || len(m.Tables[tables.DocsTable]) != 39 {
		t.Errorf("the resumed manifest: input_rows %d, %d docs shards; want %d, 39", m.Counts["input_rows"], len(m.Tables[tables.DocsTable]), len(want))
	}

	// Nothing left to finish now.
	if msg, err := Resume(ctx, dir); err != nil || !strings.Contains(msg, "published already") {
		t.Errorf("Resume of a published output: %q, %v", msg, err)
	}
	empty := filepath.Join(t.TempDir(), "never")
	if _, err := Resume(ctx, faultstore.Name(empty)); err == nil || !strings.Contains(err.Error(), "no publication to finish") {
		t.Errorf("Resume of a folder no run published into: %v", err)
	}
}

// TestResumeAfterSealDied: a launcher that died sealing (the files in
// place, the manifest written, the temporary files half removed) is
// finished by Resume too.
func TestResumeAfterSealDied(t *testing.T) {
	ctx := context.Background()
	dir, local := objectStoreOutput(t)
	d, err := Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	d.Tables = tables.Selection{tables.DocsTable}
	d.Expect.Keys = map[string]int{tables.DocsTable: 8}
	d.Expect.DocsRows = writeDocs(t, ctx, d, 8)
	if err := d.Publish(ctx, NewManifest(nil)); err != nil {
		t.Fatal(err)
	}
	// Undo the seal's end, as if it had died before: the plan back, and
	// _SUCCESS gone.
	plan := Plan{Run: d.Run(), Manifest: ManifestFile, ManifestJSON: []byte(`{"tool":"neardup"}`), Clear: tables.Tables}
	for k := 1; k < 8; k++ {
		name := tables.DocsTable + "/" + tables.ShardName(k)
		size, err := store.Size(ctx, store.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		plan.Moves = append(plan.Moves, Move{From: name, To: name, Bytes: size})
	}
	b, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.WriteFile(ctx, store.Join(d.TempDir, PlanFile), b); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(local, SuccessMarker))
	if _, err := Resume(ctx, dir); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if !published(local) {
		t.Error("Resume did not write _SUCCESS")
	}
	if left := filesBelow(t, filepath.Join(local, TempRoot)); len(left) > 0 {
		t.Errorf("left under _temporary: %v", left)
	}
}

// TestPublishUnderListingLag: on a store whose listing shows new files
// only after a while, Publish looks again (ListingSettle) rather than
// failing, or publishing without the files not listed yet.
func TestPublishUnderListingLag(t *testing.T) {
	ctx := context.Background()
	saved := ListingSettle
	t.Cleanup(func() { ListingSettle = saved })
	for _, settle := range [][]time.Duration{nil, {100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}} {
		ListingSettle = settle
		dir, _ := objectStoreOutput(t)
		d, err := Prepare(ctx, dir, "run", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		d.Tables = tables.Selection{tables.DocsTable}
		d.Expect.Keys = map[string]int{tables.DocsTable: 6}
		d.Expect.DocsRows = writeDocs(t, ctx, d, 6)
		remove := faultstore.ListLag(500 * time.Millisecond)
		err = d.Publish(ctx, NewManifest(nil))
		remove()
		if settle == nil {
			if err == nil || !strings.Contains(err.Error(), "no receipt") {
				t.Errorf("Publish under a lagging listing, looking once: %v; want it refused for receipts not listed", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Publish under a lagging listing, looking again: %v", err)
		}
		if got := docIDs(t, ctx, dir); len(got) != int(d.Expect.DocsRows) {
			t.Errorf("published %d docs rows; want %d", len(got), d.Expect.DocsRows)
		}
	}
}
