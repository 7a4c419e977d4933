package output

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
)

// writeShard writes a shard and its record, as a keyed writer does.
func writeShard[T any](ctx context.Context, tempDir, table string, key int, rows []T) error {
	r, err := WriteShard(ctx, tempDir, table, key, rows)
	if err != nil {
		return err
	}
	return WriteRecord(ctx, tempDir, table, key, nil, r)
}

// published reports whether dir holds a finished output.
func published(dir string) bool { return exists(filepath.Join(dir, SuccessMarker)) }

// oldOutput makes dir a finished output of one docs row, as a run before
// the one under test left it.
func oldOutput(t *testing.T, ctx context.Context, dir string) {
	t.Helper()
	d, err := Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	d.Tables, d.Expect.DocsRows = tables.Selection{tables.DocsTable}, 1
	if err := writeShard(ctx, d.TempDir, tables.DocsTable, 0, []tables.Doc{{DocID: 99}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Publish(ctx, NewManifest(nil)); err != nil {
		t.Fatal(err)
	}
}

// writeDocs writes docs shards of keys 0..n-1 (key k holding k rows) and
// returns their rows.
func writeDocs(t *testing.T, ctx context.Context, d *Dir, n int) int64 {
	t.Helper()
	var rows int64
	for k := range n {
		docs := make([]tables.Doc, k)
		for i := range docs {
			docs[i].DocID = int64(k*100 + i)
		}
		if err := writeShard(ctx, d.TempDir, tables.DocsTable, k, docs); err != nil {
			t.Fatal(err)
		}
		rows += int64(k)
	}
	return rows
}

// TestPublishRequiresItsProof: Publish fails, publishing nothing and
// leaving the old output readable, when a keyed table lacks a
// partition's receipt, a receipt's shard is missing or not the size its
// writer wrote, a shard has no receipt, or the docs rows are not the
// input rows; and succeeds when all holds.
// writeInputRows writes the split reader's record r under d's temporary
// folder, as transforms' recordInputRows does.
func writeInputRows(t *testing.T, ctx context.Context, d *Dir, r InputRows) {
	t.Helper()
	b, _ := json.Marshal(r)
	if err := store.WriteFile(ctx, store.Join(d.TempDir, InputRowsDir, filepath.Base(r.Path)+".json"), b); err != nil {
		t.Fatal(err)
	}
}

func TestPublishRequiresItsProof(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		spoil func(t *testing.T, d *Dir)
		want  string
	}{
		{"complete", func(*testing.T, *Dir) {}, ""},
		{"a partition's receipt missing", func(t *testing.T, d *Dir) {
			os.Remove(filepath.Join(d.TempDir, ReceiptsDir, tables.DocsTable+"-000000.json"))
		}, "no receipt of partition 0 of 4"},
		{"a shard missing", func(t *testing.T, d *Dir) {
			os.Remove(filepath.Join(d.TempDir, tables.DocsTable, tables.ShardName(2)))
		}, "is missing"},
		{"a shard cut short", func(t *testing.T, d *Dir) {
			name := filepath.Join(d.TempDir, tables.DocsTable, tables.ShardName(3))
			fi, _ := os.Stat(name)
			os.Truncate(name, fi.Size()-10)
		}, "bytes, its writer wrote"},
		{"a shard without receipt", func(t *testing.T, d *Dir) {
			tables.Write(ctx, filepath.Join(d.TempDir, tables.DocsTable, "part-00009.parquet"), []tables.Doc{{DocID: 1}})
		}, "has no receipt"},
		{"fewer docs rows than input rows", func(t *testing.T, d *Dir) { d.Expect.DocsRows++ }, "rows were lost or doubled"},
		// JSON lines inputs: their rows come from the split reader's
		// records, which must be there.
		{"a JSON lines input's rows counted", func(t *testing.T, d *Dir) {
			d.Expect.DocsRows -= 2
			d.Expect.Counted = []string{"/in/a.jsonl.gz"}
			writeInputRows(t, ctx, d, InputRows{Path: "/in/a.jsonl.gz", Rows: 2})
		}, ""},
		{"a JSON lines input's count missing", func(t *testing.T, d *Dir) {
			d.Expect.Counted = []string{"/in/a.jsonl.gz", "/in/b.jsonl"}
			writeInputRows(t, ctx, d, InputRows{Path: "/in/b.jsonl", Rows: 0})
		}, "no count of the rows of /in/a.jsonl.gz"},
		{"a JSON lines input counted short", func(t *testing.T, d *Dir) {
			d.Expect.DocsRows -= 2
			d.Expect.Counted = []string{"/in/a.jsonl.gz"}
			writeInputRows(t, ctx, d, InputRows{Path: "/in/a.jsonl.gz", Rows: 1})
		}, "rows were lost or doubled"},
		{"another table's partition missing", func(t *testing.T, d *Dir) {
			d.Tables = tables.Selection{tables.DocsTable, tables.URLsTable}
			d.Expect.Keys[tables.URLsTable] = 2
			writeShard(ctx, d.TempDir, tables.URLsTable, 1, []tables.URL{{URL: "https://a.test/"}})
		}, "urls table has no receipt of partition 0 of 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			oldOutput(t, ctx, dir)
			d, err := Prepare(ctx, dir, "run", nil, false)
			if err != nil {
				t.Fatal(err)
			}
			d.Tables = tables.Selection{tables.DocsTable}
			d.Expect = Expect{Keys: map[string]int{tables.DocsTable: 4}, DocsRows: writeDocs(t, ctx, d, 4)}
			c.spoil(t, d)
			err = d.Publish(ctx, NewManifest(nil))
			if c.want == "" {
				if err != nil || !published(dir) {
					t.Fatalf("a complete run: %v", err)
				}
				docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
				if err != nil || len(docs) != 6 {
					t.Errorf("published %d docs rows, %v; want 0+1+2+3", len(docs), err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "nothing was published") {
				t.Fatalf("Publish = %v; want an error saying %q and that nothing was published", err, c.want)
			}
			if published(dir) {
				t.Error("_SUCCESS written over tables that are not proven")
			}
			docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
			if err != nil || len(docs) != 1 || docs[0].DocID != 99 {
				t.Errorf("the old output's docs table was touched: %+v, %v", docs, err)
			}
		})
	}
}

// TestSecondRunIntoLiveOutput: a run started into an output folder while
// another run's lease there is live is refused, naming that run, and
// deletes nothing of it; the first run then publishes whole. Once a lease
// has expired (its launcher died), the next run takes the folder over and
// the dead run can no longer publish.
func TestSecondRunIntoLiveOutput(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	first, err := Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	first.Tables = tables.Selection{tables.DocsTable}
	first.Expect = Expect{Keys: map[string]int{tables.DocsTable: 3}, DocsRows: writeDocs(t, ctx, first, 3)}
	_, err = Prepare(ctx, dir, "run", nil, false)
	if !errors.Is(err, ErrLiveRun) || !strings.Contains(err.Error(), first.Run()) {
		t.Fatalf("second run: %v; want it refused, naming run %s", err, first.Run())
	}
	if err := first.Publish(ctx, NewManifest(nil)); err != nil {
		t.Fatalf("the first run, after the second was refused: %v", err)
	}
	docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
	if err != nil || len(docs) != 3 {
		t.Fatalf("docs = %d rows, %v; want 3", len(docs), err)
	}

	// A run whose launcher died: its lease is not renewed.
	defer func(ttl time.Duration) { LeaseTTL = ttl }(LeaseTTL)
	LeaseTTL = 50 * time.Millisecond
	dead, err := Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	dead.Tables = tables.Selection{tables.DocsTable}
	dead.Expect = Expect{Keys: map[string]int{tables.DocsTable: 2}, DocsRows: writeDocs(t, ctx, dead, 2)}
	time.Sleep(2 * LeaseTTL)
	next, err := Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatalf("a run after the lease expired: %v", err)
	}
	if exists(dead.TempDir) {
		t.Error("the expired run's temporary folder was left")
	}
	if err := dead.Publish(ctx, NewManifest(nil)); err == nil || !strings.Contains(err.Error(), "were removed while it ran") {
		t.Errorf("the dead run published after losing its folder: %v", err)
	}
	next.Tables = tables.Selection{tables.DocsTable}
	next.Expect = Expect{Keys: map[string]int{tables.DocsTable: 1}}
	writeDocs(t, ctx, next, 1)
	if err := next.Publish(ctx, NewManifest(nil)); err != nil {
		t.Fatal(err)
	}
}

// TestRemovedTemporaryFilesFailPublish: a run whose temporary folder was
// removed while it ran (issue 38: a second run deleted _temporary/**, and
// the first run's later writers recreated part of it) fails to publish,
// even when everything written after the removal is whole.
func TestRemovedTemporaryFilesFailPublish(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	d.Tables = tables.Selection{tables.DocsTable}
	d.Expect = Expect{Keys: map[string]int{tables.DocsTable: 2}}
	if err := store.RemoveAll(ctx, filepath.Join(dir, TempRoot)); err != nil {
		t.Fatal(err)
	}
	d.Expect.DocsRows = writeDocs(t, ctx, d, 2)
	if err := d.Publish(ctx, NewManifest(nil)); err == nil || !strings.Contains(err.Error(), "were removed while it ran") {
		t.Errorf("Publish = %v; want it refused", err)
	}
	if published(dir) {
		t.Error("_SUCCESS written")
	}
}

// TestHoldRenewsTheLease: while the launcher holds its claim, the lease
// is renewed, so a run started meanwhile is refused however long the job
// takes.
func TestHoldRenewsTheLease(t *testing.T) {
	ctx := context.Background()
	defer func(ttl, renew time.Duration) { LeaseTTL, LeaseRenew = ttl, renew }(LeaseTTL, LeaseRenew)
	LeaseTTL, LeaseRenew = 300*time.Millisecond, 20*time.Millisecond
	dir := t.TempDir()
	d, err := Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	stop := d.Hold(ctx)
	time.Sleep(3 * LeaseTTL)
	if _, err := Prepare(ctx, dir, "run", nil, false); !errors.Is(err, ErrLiveRun) {
		t.Errorf("a run started while the first held its lease: %v", err)
	}
	stop()
	time.Sleep(2 * LeaseTTL)
	if _, err := Prepare(ctx, dir, "run", nil, false); err != nil {
		t.Errorf("a run after the first let its lease go: %v", err)
	}
}

// TestLeaseOfAGoneProcess: a lease written on this machine by a process
// that is gone (a run stopped with ^C) does not hold the folder for
// LeaseTTL: the next run takes it over at once.
func TestLeaseOfAGoneProcess(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, err := Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	d.lease.PID = gone.Process.Pid
	if err := d.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(ctx, dir, "run", nil, false); err != nil {
		t.Errorf("a run after the first's process ended: %v", err)
	}
	if exists(d.TempDir) {
		t.Error("the gone process's temporary folder was left")
	}
}

// TestHoldThroughPublish: a launcher renewing its lease (here every
// millisecond) through publication leaves no lease behind once the
// temporary folder is gone: renewals end before it is removed.
func TestHoldThroughPublish(t *testing.T) {
	ctx := context.Background()
	defer func(renew time.Duration) { LeaseRenew = renew }(LeaseRenew)
	LeaseRenew = time.Millisecond
	for range 20 {
		dir := t.TempDir()
		d, err := Prepare(ctx, dir, "run", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		d.Tables = tables.Selection{tables.DocsTable}
		d.Expect = Expect{Keys: map[string]int{tables.DocsTable: 2}, DocsRows: writeDocs(t, ctx, d, 2)}
		stop := d.Hold(ctx)
		err = d.Publish(ctx, NewManifest(nil))
		time.Sleep(5 * LeaseRenew)
		stop()
		if err != nil {
			t.Fatal(err)
		}
		if exists(filepath.Join(dir, TempRoot)) {
			t.Fatal("a renewal after publication left the temporary folder behind")
		}
	}
}

// TestPrepareDryWritesNothing: a dry run's claim names a temporary folder
// under the output but writes nothing, holds nothing (a real run may start
// beside it), and, like a run, is refused while another run's lease is
// live and in a folder of foreign files.
func TestPrepareDryWritesNothing(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "out")
	d, err := PrepareDry(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d.TempDir, filepath.Join(dir, TempRoot)+"/") {
		t.Errorf("temporary folder %s is not under %s", d.TempDir, filepath.Join(dir, TempRoot))
	}
	stop := d.Hold(ctx)
	if err := d.Renew(ctx); err != nil {
		t.Fatal(err)
	}
	stop()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the dry run made %s: %v", dir, err)
	}
	live, err := Prepare(ctx, dir, "run", nil, false)
	if err != nil {
		t.Fatalf("a run beside a dry run: %v", err)
	}
	if _, err := PrepareDry(ctx, dir, "run", nil, false); !errors.Is(err, ErrLiveRun) {
		t.Errorf("a dry run beside a live run: %v", err)
	}
	live.Release()
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644)
	if _, err := PrepareDry(ctx, foreign, "run", nil, false); err == nil {
		t.Error("a dry run into a folder of foreign files was not refused")
	}
}
