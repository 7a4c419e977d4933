package beamfs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b.parquet", "a.parquet", "c.txt"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	ctx := context.Background()
	got, err := Match(ctx, filepath.Join(dir, "*.parquet")+","+filepath.Join(dir, "a.parquet"))
	want := []string{filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Match = %v, %v; want %v (sorted, each once)", got, err, want)
	}
	if _, err := Match(ctx, filepath.Join(dir, "*.csv")); err == nil || !strings.Contains(err.Error(), "matches no files") {
		t.Errorf("a glob matching nothing: %v", err)
	}
	if _, err := Match(ctx, filepath.Join(dir, "nope", "x.parquet")); err == nil {
		t.Error("a path that does not exist was accepted")
	}
}

func TestMoveAndRemove(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a"), filepath.Join(dir, "sub", "b")
	if err := WriteFile(ctx, src, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := Move(ctx, src, dst); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(ctx, dst); err != nil || string(b) != "hello" {
		t.Errorf("after Move: %q, %v", b, err)
	}
	if err := Remove(ctx, dst); err != nil {
		t.Fatal(err)
	}
	if err := Remove(ctx, dst); err != nil {
		t.Errorf("removing a file already gone must succeed (retries): %v", err)
	}
}
