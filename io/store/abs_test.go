package store

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMatchIsAbsolute checks that relative and file:// globs match
// absolute paths, which name the files from any working folder, and that
// Abs leaves remote paths alone.
func TestMatchIsAbsolute(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.parquet", "b.parquet"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	want := []string{filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")}
	for _, glob := range []string{"*.parquet", "./a.parquet, b.parquet", "file://*.parquet", "file://" + dir + "/*.parquet"} {
		got, err := Match(context.Background(), glob)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Match(%q) = %q, %v; want %q", glob, got, err, want)
		}
	}
	for name, want := range map[string]string{
		"out":                  filepath.Join(dir, "out"),
		"out/":                 filepath.Join(dir, "out"),
		"../x":                 filepath.Join(filepath.Dir(dir), "x"),
		"/abs/x":               "/abs/x",
		"file:///abs/x":        "/abs/x",
		"gs://bucket/x/*.pq":   "gs://bucket/x/*.pq",
		"s3://bucket/relative": "s3://bucket/relative",
		"":                     "",
	} {
		if got, err := Abs(name); err != nil || got != want {
			t.Errorf("Abs(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}
