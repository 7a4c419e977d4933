package store

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// reported collects what OnReads is told, by file name and kind.
type reported struct {
	sync.Mutex
	calls map[[2]string][]Reads
}

func listen(t *testing.T) *reported {
	r := &reported{calls: map[[2]string][]Reads{}}
	OnReads(func(ctx context.Context, name string, x Reads) {
		r.Lock()
		defer r.Unlock()
		k := [2]string{name, ReadKind(ctx)}
		r.calls[k] = append(r.calls[k], x)
	})
	t.Cleanup(func() { onReads.Store(nil) })
	return r
}

// TestReadsReported: a local file opened for random access reports, once
// and when it closes, the reads made of it and their bytes, under the
// kind its context carried; ReadFile reports one request of the file's
// bytes.
func TestReadsReported(t *testing.T) {
	got := listen(t)
	name := filepath.Join(t.TempDir(), "f")
	data := make([]byte, 10000)
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := ReadsAs(context.Background(), ReadsInput)
	r, size, err := OpenReaderAt(ctx, name)
	if err != nil || size != 10000 {
		t.Fatal(size, err)
	}
	for _, n := range []int{100, 2000, 30} {
		if _, err := r.ReadAt(make([]byte, n), 5000); err != nil {
			t.Fatal(err)
		}
	}
	if len(got.calls) != 0 {
		t.Errorf("reported before the reader closed: %v", got.calls)
	}
	r.Close()
	r.Close()
	if _, err := ReadFile(context.Background(), name); err != nil {
		t.Fatal(err)
	}
	want := map[[2]string][]Reads{
		{name, ReadsInput}: {{Requests: 3, Bytes: 2130}},
		{name, ""}:         {{Requests: 1, Bytes: 10000}},
	}
	if len(got.calls) != len(want) {
		t.Fatalf("reported %v, want %v", got.calls, want)
	}
	for k, w := range want {
		if g := got.calls[k]; len(g) != 1 || g[0] != w[0] {
			t.Errorf("%v: reported %v, want %v", k, g, w)
		}
	}
}
