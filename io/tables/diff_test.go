package tables

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
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
		URLsTable: func(n string) error {
			return Write(ctx, n, []URL{{URL: "https://a.test/", FirstSweep: "2026-01-01", LastSweep: "2026-01-01", Docs: 1, LastDocID: 1}})
		},
		LostTable: func(n string) error { return Write[Lost](ctx, n, nil) },
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
