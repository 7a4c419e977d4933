package tables

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func writeOutput(t *testing.T, docs []Doc, pairs []Pair) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	// Shard the docs differently each time: order and sharding must not matter.
	half := len(docs) / 2
	for i, part := range [][]Doc{docs[:half], docs[half:]} {
		if err := Write(ctx, filepath.Join(dir, DocsTable, ShardName(i)), part); err != nil {
			t.Fatal(err)
		}
	}
	for table, write := range map[string]func(string) error{
		ClustersTable:  func(n string) error { return Write[Cluster](ctx, n, nil) },
		PairsTable:     func(n string) error { return Write(ctx, n, pairs) },
		ContainedTable: func(n string) error { return Write(ctx, n, ContainedRows(pairs, 0.8)) },
		SketchesTable:  func(n string) error { return Write(ctx, n, []Sketch{{DocID: 1, Sketch: []int64{-5, 7}}}) },
		PostingsTable: func(n string) error {
			return Write(ctx, n, []Posting{{Shingle: -5, DocID: 1, SketchSize: 2}, {Shingle: 7, DocID: 1, SketchSize: 2, Rank: 1}})
		},
		URLsTable: func(n string) error {
			return Write(ctx, n, []URL{{URL: "https://a.test/", FirstSweep: "2026-01-01", LastSweep: "2026-01-01", Docs: 1, LastDocID: 1}})
		},
		LostTable:    func(n string) error { return Write[Lost](ctx, n, nil) },
		MembersTable: func(n string) error { return Write[Member](ctx, n, nil) },
		LargestTable: func(n string) error { return Write[Cluster](ctx, n, nil) },
	} {
		if err := write(filepath.Join(dir, table, ShardName(0))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDiff(t *testing.T) {
	ctx := context.Background()
	docs := []Doc{{DocID: 1, Status: StatusOK}, {DocID: 2, Status: StatusOK}, {DocID: 3, Status: StatusEmpty}}
	reordered := []Doc{docs[2], docs[0], docs[1]}
	c := 0.9
	pairs := []Pair{{DocA: 1, DocB: 2, Shared: 3, Resemblance: 0.6, ContainmentAInB: &c, ContainmentBInA: &c, Linked: true}}
	a, b := writeOutput(t, docs, pairs), writeOutput(t, reordered, pairs)
	if err := Diff(ctx, a, b); err != nil {
		t.Errorf("same rows in another order and sharding: %v", err)
	}
	changed := []Doc{docs[0], docs[1], {DocID: 3, Status: StatusOK}}
	if err := Diff(ctx, a, writeOutput(t, changed, pairs)); err == nil || !strings.Contains(err.Error(), "docs") {
		t.Errorf("a changed status went unnoticed: %v", err)
	}
	if err := Diff(ctx, a, writeOutput(t, docs, nil)); err == nil || !strings.Contains(err.Error(), "pairs") {
		t.Errorf("a missing pair went unnoticed: %v", err)
	}
}

// TestReadMissingColumn: a table of an earlier version, without a column
// the current row type has, fails naming the column instead of reading
// zeros.
func TestReadMissingColumn(t *testing.T) {
	type oldSketch struct {
		DocID  int64   `parquet:"doc_id"`
		Sketch []int64 `parquet:"sketch,list"`
	}
	name := filepath.Join(t.TempDir(), "part-00000.parquet")
	if err := parquet.WriteFile(name, []oldSketch{{DocID: 1, Sketch: []int64{2, 3}}}); err != nil {
		t.Fatal(err)
	}
	_, err := Read[Sketch](context.Background(), name)
	if err == nil || !strings.Contains(err.Error(), `"identity_key"`) {
		t.Fatalf("Read of a table without identity_key: %v", err)
	}
	rows, err := Read[oldSketch](context.Background(), name)
	if err != nil || len(rows) != 1 || rows[0].Sketch[1] != 3 {
		t.Fatalf("Read of the columns it has: %v, %v", rows, err)
	}
}

// TestReadPostings: the columnar reader gives Read's rows, over several
// row groups and pages.
func TestReadPostings(t *testing.T) {
	ctx := context.Background()
	rows := make([]Posting, 300_000)
	for i := range rows {
		rows[i] = Posting{Shingle: int64(i) * 7919, DocID: int64(i*31) % 1000, SketchSize: int32(i % 97), Rank: int32(i % 13)}
	}
	name := writeShard(t, rows)
	got, err := ReadPostings(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Read[Posting](ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, rows) || !slices.Equal(want, rows) {
		t.Fatalf("ReadPostings read %d rows, Read %d, of %d written, or other values", len(got), len(want), len(rows))
	}
	other := filepath.Join(t.TempDir(), "part-00000.parquet")
	if err := Write(ctx, other, []Sketch{{DocID: 1}}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPostings(ctx, other); err == nil || !strings.Contains(err.Error(), `"shingle"`) {
		t.Fatalf("ReadPostings of a sketches shard: %v, want an error naming the column", err)
	}
}

// TestReadPairCounts: the columnar reader gives Read's values of the
// columns it reads, and leaves the containments out.
func TestReadPairCounts(t *testing.T) {
	ctx := context.Background()
	c := 0.5
	rows := make([]Pair, 200_000)
	for i := range rows {
		rows[i] = Pair{DocA: int64(i), DocB: int64(i + 1 + i%7), Shared: int32(i % 50), SketchSizeA: int32(i % 70), SketchSizeB: int32(i % 90),
			Resemblance: float64(i%1000) / 1000, ContainmentAInB: &c, Linked: i%3 == 0}
	}
	name := writeShard(t, rows)
	got, err := ReadPairCounts(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows, want %d", len(got), len(rows))
	}
	for i, r := range rows {
		r.ContainmentAInB = nil
		if got[i] != r {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], r)
		}
	}
}

// TestReadCopies: an optional column read column by column keeps its
// nulls where they are, with or without the phase 1 columns.
func TestReadCopies(t *testing.T) {
	ctx := context.Background()
	rows := make([]Doc, 50_000)
	for i := range rows {
		rows[i] = Doc{DocID: int64(i), Status: StatusOK}
		if i%3 == 1 {
			x := int64(i - 1)
			rows[i].IdenticalTo = &x
		}
	}
	name := writeShard(t, rows)
	for _, meta := range []bool{false, true} {
		got, err := ReadCopies(ctx, name, meta)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(rows) {
			t.Fatalf("%d rows, want %d", len(got), len(rows))
		}
		for i, r := range rows {
			if got[i].DocID != r.DocID || (got[i].IdenticalTo == nil) != (r.IdenticalTo == nil) || (r.IdenticalTo != nil && *got[i].IdenticalTo != *r.IdenticalTo) {
				t.Fatalf("row %d: %+v, want %+v", i, got[i], r)
			}
			if want := map[bool]string{false: "", true: StatusOK}[meta]; got[i].Status != want {
				t.Fatalf("row %d read with meta %v: status %q, want %q", i, meta, got[i].Status, want)
			}
		}
	}
}

// TestReadSketches: lists read column by column as the generic reader
// reads them, empty ones included.
func TestReadSketches(t *testing.T) {
	ctx := context.Background()
	rows := make([]Sketch, 30_000)
	for i := range rows {
		rows[i] = Sketch{DocID: int64(i), IdentityKey: int64(i * 7)}
		for k := range i % 5 {
			rows[i].Sketch = append(rows[i].Sketch, int64(i*10+k))
		}
	}
	name := writeShard(t, rows)
	got, err := ReadSketches(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Read[Sketch](ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) || len(want) != len(rows) {
		t.Fatalf("%d and %d rows, want %d", len(got), len(want), len(rows))
	}
	for i := range rows {
		if got[i].DocID != want[i].DocID || got[i].IdentityKey != want[i].IdentityKey || !slices.Equal(got[i].Sketch, want[i].Sketch) || !slices.Equal(got[i].Sketch, rows[i].Sketch) {
			t.Fatalf("row %d: %+v, generic reader %+v, written %+v", i, got[i], want[i], rows[i])
		}
	}
	keys, err := ReadIdentityKeys(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(rows) {
		t.Fatalf("%d identity keys, want %d", len(keys), len(rows))
	}
	for i := range rows {
		if keys[i].DocID != rows[i].DocID || keys[i].IdentityKey != rows[i].IdentityKey || keys[i].Sketch != nil {
			t.Fatalf("row %d: identity key %+v, written %+v", i, keys[i], rows[i])
		}
	}
}

// TestReadDocMeta: the columns phase 1 writes read column by column as
// the generic reader reads them, the cluster columns left empty.
func TestReadDocMeta(t *testing.T) {
	ctx := context.Background()
	str := func(s string) *string { return &s }
	c, k, r := int64(3), int64(4), 0.5
	rows := make([]Doc, 20_000)
	for i := range rows {
		rows[i] = Doc{DocID: int64(i), ID: str(fmt.Sprint("id", i)), Sweep: []string{"2026-01-01", "2026-02-01"}[i/7000%2],
			SourceFile: []string{"a.parquet", "b.parquet"}[i/10000], SourceRow: int64(i % 10000), Status: []string{StatusOK, StatusEmpty}[i%2],
			Extraction: "text", TokenCount: int64(i * 3), ShingleCount: int64(i * 2), SketchSize: int32(i % 40),
			ContentFingerprint: int64(i) * -7919, LexicalFingerprint: int64(i) * 104729,
			ClusterID: &c, KeptDocID: &k, ResemblanceToKept: &r, IsRepresentative: true}
		if i%3 == 0 {
			rows[i].URL, rows[i].Reason = str(fmt.Sprint("https://x.test/", i)), str("why")
		}
		if i%5 == 0 {
			rows[i].Date = str("2025-12-31")
		}
		if i%4 == 0 {
			rows[i].ClusterID, rows[i].KeptDocID, rows[i].ResemblanceToKept, rows[i].IsRepresentative = nil, nil, nil, false
		}
		if i%6 == 0 {
			to := int64(i / 2)
			rows[i].IdenticalTo = &to
		}
	}
	name := writeShard(t, rows)
	all, err := ReadDocs(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(all, rows) {
		t.Fatalf("ReadDocs read other rows than were written")
	}
	got, err := ReadDocMeta(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d rows, want %d", len(got), len(rows))
	}
	for i, want := range rows {
		want.ClusterID, want.KeptDocID, want.ResemblanceToKept, want.IsRepresentative, want.IdenticalTo = nil, nil, nil, false, nil
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], want)
		}
	}
}

// TestReadURLs: the urls table read column by column as written.
func TestReadURLs(t *testing.T) {
	ctx := context.Background()
	rows := make([]URL, 10_000)
	for i := range rows {
		rows[i] = URL{URL: fmt.Sprint("https://x.test/", i), FirstSweep: []string{"2026-01-01", "2026-02-01"}[i/3000%2],
			LastSweep: []string{"2026-02-01", "2026-03-01"}[i/4000%2], Docs: int64(i%4 + 1), LastDocID: int64(i * 3)}
		for k := range rows[i].Docs {
			rows[i].DocIDs = append(rows[i].DocIDs, int64(i*3)-k)
		}
	}
	name := writeShard(t, rows)
	got, err := ReadURLs(ctx, name)
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Fatalf("ReadURLs: %d rows of %d, or other values; %v", len(got), len(rows), err)
	}
}

// writeShard writes rows to a shard in a temporary folder and returns its
// path.
func writeShard[T any](t *testing.T, rows []T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "part-00000.parquet")
	if err := Write(context.Background(), name, rows); err != nil {
		t.Fatal(err)
	}
	return name
}
