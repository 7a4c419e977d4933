package store

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup/io/objstore"
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

// Local files are opened in place (no copy into memory) with random access.
func TestOpenReaderAtLocal(t *testing.T) {
	ctx := context.Background()
	data := []byte("PAR1 some bytes in the middle PAR1")
	name := filepath.Join(t.TempDir(), "x.parquet")
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r, size, err := OpenReaderAt(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if size != int64(len(data)) {
		t.Errorf("size %d, want %d", size, len(data))
	}
	if c, ok := r.(*countedFile); !ok {
		t.Errorf("local file opened as %T, want a *countedFile (its reads counted)", r)
	} else if _, ok := c.ReaderAt.(*os.File); !ok {
		t.Errorf("local file opened as a count of %T, want of *os.File (read in place)", c.ReaderAt)
	}
	p := make([]byte, 4)
	for _, off := range []int64{int64(len(data)) - 4, 0, 10} {
		if n, err := r.ReadAt(p, off); n != 4 || err != nil || !bytes.Equal(p, data[off:off+4]) {
			t.Errorf("ReadAt(4, %d) = %q, %v", off, p[:n], err)
		}
	}
	if _, _, err := OpenReaderAt(ctx, filepath.Join(t.TempDir(), "missing.parquet")); err == nil {
		t.Error("opening a missing file succeeded")
	}
}

// memObject is an in-memory object store object for the dispatch test.
type memObject struct {
	data []byte
	mu   sync.Mutex
	gets int
}

func (m *memObject) Size(context.Context) (int64, error) { return int64(len(m.data)), nil }

func (m *memObject) ReadRange(_ context.Context, off, n int64) (io.ReadCloser, error) {
	m.mu.Lock()
	m.gets++
	m.mu.Unlock()
	return io.NopCloser(bytes.NewReader(m.data[off : off+n])), nil
}

// Schemes objstore handles (gs, s3; here an in-memory one) get its ranged
// reader instead of a whole-object copy.
func TestOpenReaderAtObjectStore(t *testing.T) {
	obj := &memObject{data: bytes.Repeat([]byte("0123456789"), 1000)}
	objstore.Register("beamfstest", func(_ context.Context, name string) (objstore.RangeReader, error) {
		if name != "beamfstest://bucket/x.parquet" {
			t.Errorf("opener got %q", name)
		}
		return obj, nil
	})
	r, size, err := OpenReaderAt(context.Background(), "beamfstest://bucket/x.parquet")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, ok := r.(*objstore.ReaderAt); !ok || size != 10000 {
		t.Fatalf("got %T of size %d, want an *objstore.ReaderAt of 10000 bytes", r, size)
	}
	p := make([]byte, 5)
	if n, err := r.ReadAt(p, 9995); n != 5 || err != nil || string(p) != "56789" {
		t.Errorf("ReadAt(5, 9995) = %q, %v", p[:n], err)
	}
	if obj.gets != 1 {
		t.Errorf("%d ranged reads, want 1", obj.gets)
	}
}

// TestCopy: a local copy is a file of its own name with the same bytes,
// which outlives the original and replaces what it lands on; a copy
// between object-store paths and across schemes works too.
func TestCopy(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a"), filepath.Join(dir, "sub", "b")
	if err := WriteFile(ctx, src, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(ctx, dst, []byte("older, longer content")); err != nil {
		t.Fatal(err)
	}
	if err := Copy(ctx, src, dst); err != nil {
		t.Fatal(err)
	}
	if err := Remove(ctx, src); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(ctx, dst); err != nil || string(b) != "hello" {
		t.Errorf("the copy after its original is gone: %q, %v", b, err)
	}
}

// TestAbortedWriteLeavesFileAsItWas: a writer that fails midway and is
// aborted, or dies without closing, leaves the file it was replacing as
// it was, also while another attempt of the same write (a retried or
// speculative bundle) completes it; nothing half written is ever seen
// under the file's name. Before, OpenWrite truncated the file in place at
// once, and a failed attempt left it cut short.
func TestAbortedWriteLeavesFileAsItWas(t *testing.T) {
	ctx := context.Background()
	name := filepath.Join(t.TempDir(), "docs", "part-00003.parquet")
	if err := WriteFile(ctx, name, []byte("the whole first attempt")); err != nil {
		t.Fatal(err)
	}
	// Two attempts at once: one writes part and fails, one dies.
	failed, err := OpenWrite(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	died, err := OpenWrite(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	failed.Write([]byte("the whole"))
	died.Write([]byte("the"))
	if b, _ := os.ReadFile(name); string(b) != "the whole first attempt" {
		t.Errorf("while two attempts write: %q", b)
	}
	failed.Abort()
	if b, _ := os.ReadFile(name); string(b) != "the whole first attempt" {
		t.Errorf("after a failed attempt: %q", b)
	}
	// A second attempt that completes replaces it whole.
	if err := WriteFile(ctx, name, []byte("the whole second attempt")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(name); string(b) != "the whole second attempt" {
		t.Errorf("after the second attempt: %q", b)
	}
	if err := failed.Close(); err != nil {
		t.Errorf("Close after Abort: %v", err)
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("the file's mode: %v, %v; want 0644, as other users read outputs", fi.Mode(), err)
	}
	// Only the dead attempt's temporary file is left beside it, under a
	// name no table glob (*.parquet) matches.
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(name), "*"))
	if len(left) != 2 {
		t.Errorf("files left: %v; want the file and the dead attempt's", left)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(name), "*.parquet")); len(m) != 1 {
		t.Errorf("*.parquet matches %v", m)
	}
}
