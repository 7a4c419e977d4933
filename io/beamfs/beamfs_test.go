package beamfs_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	// memfs:// globs like s3:// (filepath.Match: ** is one level).
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/memfs"

	_ "github.com/neardup/neardup/io/beamfs"
	. "github.com/neardup/neardup/io/store"
)

// RemoveAll reaches every depth on a scheme whose List matches ** as one
// level (s3:// and memfs://), and nothing beside the folder.
func TestRemoveAllNested(t *testing.T) {
	ctx := context.Background()
	gone := []string{
		"memfs://out/_temporary/x",
		"memfs://out/_temporary/run1/docs/part-00000.parquet",
		"memfs://out/_temporary/run1/_bad_files/a.json",
		"memfs://out/_temporary/a/b/c/d/e/f.txt",
	}
	kept := []string{"memfs://out/docs/part-00000.parquet", "memfs://out/_temporary2/y", "memfs://out/_SUCCESS"}
	for _, n := range append(gone, kept...) {
		if err := WriteFile(ctx, n, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := RemoveAll(ctx, "memfs://out/_temporary/"); err != nil {
		t.Fatal(err)
	}
	left, err := List(ctx, "memfs://out/*")
	if err != nil {
		t.Fatal(err)
	}
	for d := 2; d <= 7; d++ {
		more, _ := List(ctx, "memfs://out"+strings.Repeat("/*", d))
		left = append(left, more...)
	}
	slices.Sort(left)
	want := slices.Clone(kept)
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("after RemoveAll: %v, want %v", left, want)
	}
}

// A path on a Beam-only scheme goes through the fallback beamfs registers:
// a copy between memfs paths and across schemes works.
func TestCopyThroughBeam(t *testing.T) {
	ctx := context.Background()
	dst := filepath.Join(t.TempDir(), "b")
	if err := WriteFile(ctx, dst, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	mem := "memfs://copytest/x"
	if err := Copy(ctx, dst, mem); err != nil {
		t.Fatal(err)
	}
	if err := Copy(ctx, mem, "memfs://copytest/y"); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(ctx, "memfs://copytest/y"); err != nil || string(b) != "hello" {
		t.Errorf("a copy on memfs: %q, %v", b, err)
	}
}

// Stat reports the modification time a Beam filesystem gives (memfs, as
// gcs and s3, implements LastModified), so that an export can tell an
// input changed since its run; and so does the local filesystem.
func TestStatModified(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"memfs://stat/x", filepath.Join(t.TempDir(), "x")} {
		before := time.Now().Add(-time.Minute)
		if err := WriteFile(ctx, name, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		size, mod, err := Stat(ctx, name)
		if err != nil || size != 5 || mod.Before(before) || mod.After(time.Now().Add(time.Minute)) {
			t.Errorf("Stat(%s) = %d, %v, %v; want 5 bytes modified about now", name, size, mod, err)
		}
	}
}
