// Package objtest copies files between a local folder and a test's object
// store (packages s3test, gcstest), through the store's own client.
package objtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/io/objstore"
)

// Store is a test's object store, reached by its own client.
type Store interface {
	Put(ctx context.Context, uri string, data []byte) error
	Get(ctx context.Context, uri string) ([]byte, error)
	// List returns the objects whose names start with prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
}

// Upload copies local files to the folder dst (scheme://bucket/prefix) and
// returns their s3:// paths. src is a folder, whose files are copied
// with their paths below it, or a glob (filepath.Match syntax) of files,
// copied by their base names. A src that names no file is an error.
func Upload(ctx context.Context, s Store, src, dst string) ([]string, error) {
	var rel []string // the files' paths below base
	base := src
	if fi, err := os.Stat(src); err == nil && fi.IsDir() {
		err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			r, err := filepath.Rel(src, p)
			rel = append(rel, r)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("objtest: upload %s: %w", src, err)
		}
	} else {
		matches, err := filepath.Glob(src)
		if err != nil {
			return nil, fmt.Errorf("objtest: upload %s: %w", src, err)
		}
		base = filepath.Dir(src)
		for _, m := range matches {
			if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
				rel = append(rel, filepath.Base(m))
			}
		}
	}
	if len(rel) == 0 {
		return nil, fmt.Errorf("objtest: upload: %s names no file", src)
	}
	var uris []string
	for _, r := range rel {
		b, err := os.ReadFile(filepath.Join(base, r))
		if err != nil {
			return nil, fmt.Errorf("objtest: upload: %w", err)
		}
		uri := strings.TrimSuffix(dst, "/") + "/" + filepath.ToSlash(r)
		if err := s.Put(ctx, uri, b); err != nil {
			return nil, err
		}
		uris = append(uris, uri)
	}
	slices.Sort(uris)
	return uris, nil
}

// Download copies every object below the folder src (scheme://bucket/prefix)
// into the local folder dir, at its path below src, and returns the local
// paths. A folder with no object is an error.
func Download(ctx context.Context, s Store, src, dir string) ([]string, error) {
	src = strings.TrimSuffix(src, "/") + "/"
	uris, err := s.List(ctx, src)
	if err != nil {
		return nil, err
	}
	if len(uris) == 0 {
		return nil, fmt.Errorf("objtest: download: no object below %s", src)
	}
	var files []string
	for _, uri := range uris {
		r := strings.TrimPrefix(uri, src)
		if r == "" || path.IsAbs(r) || slices.Contains(strings.Split(r, "/"), "..") {
			return nil, fmt.Errorf("objtest: download: object %s has no safe local name", uri)
		}
		b, err := s.Get(ctx, uri)
		if err != nil {
			return nil, err
		}
		local := filepath.Join(dir, filepath.FromSlash(r))
		if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(local, b, 0o644); err != nil {
			return nil, err
		}
		files = append(files, local)
	}
	return files, nil
}

// ReadBack puts 3 MiB at uri through s's own client, then reads ranges of
// it through io/objstore, as the Parquet readers do (ranged requests
// pinned to the version its size was read from), and fails t unless they
// are the bytes put.
func ReadBack(t *testing.T, s Store, uri string) {
	t.Helper()
	ctx := context.Background()
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	if err := s.Put(ctx, uri, data); err != nil {
		t.Fatal(err)
	}
	r, err := objstore.Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", r.Size(), len(data))
	}
	if r.Version() == "" {
		t.Errorf("%s: no version pinned", uri)
	}
	for _, span := range [][2]int{{0, 4}, {len(data) - 8, len(data)}, {1 << 20, 2<<20 + 17}, {5, 100000}} {
		got := make([]byte, span[1]-span[0])
		if n, err := r.ReadAt(got, int64(span[0])); (err != nil && err != io.EOF) || n != len(got) {
			t.Fatalf("ReadAt(%d..%d): %d bytes, %v", span[0], span[1], n, err)
		}
		if !bytes.Equal(got, data[span[0]:span[1]]) {
			t.Errorf("ReadAt(%d..%d) read other bytes", span[0], span[1])
		}
	}
}
