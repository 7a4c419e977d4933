// Package store reads and writes the files neardup names, local or on any
// filesystem registered with it: glob expansion, random access for Parquet
// (ranged reads on gs:// and s3://, through package objstore), and the
// moves and removals that make outputs appear atomically. It does not
// import Beam, so that the packages reading a finished output (query,
// report, serve) stay plain Go: local paths are served here directly, and
// other schemes by whatever Filesystem is registered for them (package
// io/beamfs registers Beam's, gs:// and s3:// included, in every binary
// that links the pipeline).
package store

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/neardup/neardup/io/objstore"
)

// Filesystem is what neardup needs of a filesystem: the method set of
// Beam's filesystem.Interface, so that Beam's implementations satisfy it
// as they are.
type Filesystem interface {
	List(ctx context.Context, glob string) ([]string, error)
	OpenRead(ctx context.Context, name string) (io.ReadCloser, error)
	OpenWrite(ctx context.Context, name string) (io.WriteCloser, error)
	Size(ctx context.Context, name string) (int64, error)
	Close() error
}

// The optional abilities, as Beam names them.
type (
	remover interface {
		Remove(ctx context.Context, name string) error
	}
	renamer interface {
		Rename(ctx context.Context, oldpath, newpath string) error
	}
	copier interface {
		Copy(ctx context.Context, oldpath, newpath string) error
	}
	lastModifier interface {
		LastModified(ctx context.Context, name string) (time.Time, error)
	}
)

var registry struct {
	sync.Mutex
	fallback func(ctx context.Context, name string) (Filesystem, error)
}

// RegisterFallback makes open serve every path that is not local: package
// io/beamfs registers Beam's filesystems through it.
func RegisterFallback(open func(ctx context.Context, name string) (Filesystem, error)) {
	registry.Lock()
	defer registry.Unlock()
	registry.fallback = open
}

// open returns the filesystem of name.
func open(ctx context.Context, name string) (Filesystem, error) {
	if isLocal(name) {
		return local{}, nil
	}
	registry.Lock()
	fb := registry.fallback
	registry.Unlock()
	if fb == nil {
		return nil, fmt.Errorf("%s: no filesystem registered for scheme %q (a binary that links the pipeline registers Beam's, through package io/beamfs)", name, scheme(name))
	}
	return fb(ctx, name)
}

// local is the local filesystem, as Beam's local scheme behaves.
type local struct{}

func localPath(name string) string {
	if i := strings.Index(name, "://"); i >= 0 {
		return name[i+3:]
	}
	return name
}

func (local) List(_ context.Context, glob string) ([]string, error) {
	return filepath.Glob(localPath(glob))
}

func (local) OpenRead(_ context.Context, name string) (io.ReadCloser, error) {
	return os.Open(localPath(name))
}

func (local) OpenWrite(_ context.Context, name string) (io.WriteCloser, error) {
	name = localPath(name)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
}

func (local) Size(_ context.Context, name string) (int64, error) {
	fi, err := os.Stat(localPath(name))
	if err != nil {
		return -1, err
	}
	return fi.Size(), nil
}

func (local) Close() error { return nil }

func (local) LastModified(_ context.Context, name string) (time.Time, error) {
	fi, err := os.Stat(localPath(name))
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

func (local) Remove(_ context.Context, name string) error { return os.Remove(localPath(name)) }

func (local) Rename(_ context.Context, oldpath, newpath string) error {
	return os.Rename(localPath(oldpath), localPath(newpath))
}

// Match expands comma-separated globs into the sorted, de-duplicated list of
// files they name, local ones as absolute paths (see Abs). A pattern that
// matches nothing is an error naming it: users mistype paths far more
// often than they mean an empty input.
func Match(ctx context.Context, patterns string) ([]string, error) {
	seen := map[string]bool{}
	var files []string
	for _, p := range strings.Split(patterns, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		fs, err := open(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", p, err)
		}
		glob, err := Abs(p)
		if err != nil {
			fs.Close()
			return nil, fmt.Errorf("input %q: %w", p, err)
		}
		matched, err := fs.List(ctx, glob)
		fs.Close()
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", p, err)
		}
		if len(matched) == 0 {
			return nil, fmt.Errorf("input %q matches no files", p)
		}
		for _, m := range matched {
			if !seen[m] {
				seen[m] = true
				files = append(files, m)
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no input given")
	}
	sort.Strings(files)
	return files, nil
}

// Size reports the size of a file in bytes.
func Size(ctx context.Context, name string) (int64, error) {
	fs, err := open(ctx, name)
	if err != nil {
		return 0, err
	}
	defer fs.Close()
	return fs.Size(ctx, name)
}

// Stat reports the size of a file in bytes and when it was last
// modified: the zero time when its filesystem does not say (Beam's
// filesystems that implement filesystem.LastModifiedGetter do).
func Stat(ctx context.Context, name string) (int64, time.Time, error) {
	fs, err := open(ctx, name)
	if err != nil {
		return 0, time.Time{}, err
	}
	defer fs.Close()
	size, err := fs.Size(ctx, name)
	if err != nil {
		return 0, time.Time{}, err
	}
	var mod time.Time
	if lm, ok := fs.(lastModifier); ok {
		if mod, err = lm.LastModified(ctx, name); err != nil {
			return 0, time.Time{}, err
		}
	}
	return size, mod, nil
}

// ReaderAt is an open file with random access, as Parquet needs.
type ReaderAt interface {
	io.ReaderAt
	io.Closer
}

type bytesReaderAt struct{ *bytes.Reader }

func (bytesReaderAt) Close() error { return nil }

// OpenReaderAt opens name for random access and reports its size. Local files
// are read in place. gs:// and s3:// objects are read with ranged requests
// through package objstore (big blocks, a small cache, the Parquet footer in
// one request). Any other scheme exposes only streaming reads through Beam's
// filesystem interface, so its object is read whole into memory.
func OpenReaderAt(ctx context.Context, name string) (ReaderAt, int64, error) {
	if objstore.Handles(name) {
		r, err := objstore.Open(ctx, name)
		if err != nil {
			return nil, 0, err
		}
		return r, r.Size(), nil
	}
	fs, err := open(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	defer fs.Close()
	size, err := fs.Size(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	r, err := fs.OpenRead(ctx, name)
	if err != nil {
		return nil, 0, err
	}
	if ra, ok := r.(ReaderAt); ok {
		return ra, size, nil
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	return bytesReaderAt{bytes.NewReader(b)}, int64(len(b)), nil
}

// Join joins a directory and a name for any scheme.
func Join(dir string, elem ...string) string {
	if strings.Contains(dir, "://") {
		return strings.TrimSuffix(dir, "/") + "/" + path.Join(elem...)
	}
	return filepath.Join(append([]string{dir}, elem...)...)
}

// WriteFile writes data to name, replacing it.
func WriteFile(ctx context.Context, name string, data []byte) error {
	fs, err := open(ctx, name)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// OpenWrite creates (or replaces) name for writing; the file is complete
// once the writer is closed without error.
func OpenWrite(ctx context.Context, name string) (io.WriteCloser, error) {
	fs, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	w, err := fs.OpenWrite(ctx, name)
	if err != nil {
		fs.Close()
		return nil, err
	}
	return closeBoth{w, fs}, nil
}

// closeBoth closes a writer, then the filesystem it came from.
type closeBoth struct {
	io.WriteCloser
	fs Filesystem
}

func (c closeBoth) Close() error {
	err := c.WriteCloser.Close()
	if ferr := c.fs.Close(); err == nil {
		err = ferr
	}
	return err
}

// ReadFile reads a whole (small) file.
func ReadFile(ctx context.Context, name string) ([]byte, error) {
	fs, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	r, err := fs.OpenRead(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// List returns the files matching glob, sorted; none is not an error.
func List(ctx context.Context, glob string) ([]string, error) {
	fs, err := open(ctx, glob)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	names, err := fs.List(ctx, glob)
	sort.Strings(names)
	return names, err
}

// Exists reports whether the file name exists.
func Exists(ctx context.Context, name string) (bool, error) {
	names, err := List(ctx, name)
	if err != nil {
		return false, err
	}
	for _, n := range names {
		if n == name {
			return true, nil
		}
	}
	return false, nil
}

// Remove deletes a file; a file that is already gone is not an error, so a
// retried clean-up succeeds.
func Remove(ctx context.Context, name string) error {
	fs, err := open(ctx, name)
	if err != nil {
		return err
	}
	defer fs.Close()
	rm, ok := fs.(remover)
	if !ok {
		return fmt.Errorf("filesystem of %q cannot remove files", name)
	}
	if err := rm.Remove(ctx, name); err != nil {
		if ok, _ := Exists(ctx, name); ok {
			return err
		}
	}
	return nil
}

// Move renames oldpath to newpath, by copy and remove where the filesystem
// has no rename (object stores).
func Move(ctx context.Context, oldpath, newpath string) error {
	fs, err := open(ctx, oldpath)
	if err != nil {
		return err
	}
	defer fs.Close()
	if isLocal(oldpath) {
		if err := os.MkdirAll(filepath.Dir(newpath), 0o755); err != nil {
			return err
		}
	}
	if rn, ok := fs.(renamer); ok {
		return rn.Rename(ctx, oldpath, newpath)
	}
	if cp, ok := fs.(copier); ok {
		if err := cp.Copy(ctx, oldpath, newpath); err != nil {
			return err
		}
		return Remove(ctx, oldpath)
	}
	return fmt.Errorf("filesystem of %q can neither rename nor copy", oldpath)
}

// Copy copies the file from to the file to, replacing it: on the local
// filesystem by a hard link where it can (the files of a table carried
// from run to run take no more room; neardup replaces files, never writes
// into them), on an object store by its own copy when both are on it,
// else by reading and writing.
func Copy(ctx context.Context, from, to string) error {
	if !strings.Contains(from, "://") && !strings.Contains(to, "://") {
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		os.Remove(to) // a retried copy replaces it
		if os.Link(from, to) == nil {
			return nil
		}
	} else if scheme(from) == scheme(to) {
		fs, err := open(ctx, from)
		if err != nil {
			return err
		}
		defer fs.Close()
		if cp, ok := fs.(copier); ok {
			return cp.Copy(ctx, from, to)
		}
	}
	b, err := ReadFile(ctx, from)
	if err != nil {
		return err
	}
	return WriteFile(ctx, to, b)
}

// scheme is the scheme of a path ("" for a plain local path).
func scheme(name string) string {
	if i := strings.Index(name, "://"); i >= 0 {
		return name[:i]
	}
	return ""
}

// maxDepth is how many levels below a folder RemoveAll looks on schemes
// whose List has no recursive glob; neardup's deepest is 3
// (_temporary/RUN/TABLE/part-*.parquet).
const maxDepth = 8

// RemoveAll removes every file below dir. Object stores have no directories;
// on the local filesystem the emptied directories go too.
func RemoveAll(ctx context.Context, dir string) error {
	if isLocal(dir) {
		return os.RemoveAll(dir)
	}
	dir = strings.TrimSuffix(dir, "/")
	// gs:// matches ** at any depth. s3:// (and memfs://) match globs with
	// filepath.Match, where ** is *, one level only: list each level too.
	globs := []string{dir + "/**"}
	if !strings.HasPrefix(dir, "gs://") {
		for d, g := 1, dir; d <= maxDepth; d++ {
			g += "/*"
			globs = append(globs, g)
		}
	}
	done := map[string]bool{}
	for _, g := range globs {
		names, err := List(ctx, g)
		if err != nil {
			return err
		}
		for _, n := range names {
			if done[n] {
				continue
			}
			done[n] = true
			if err := Remove(ctx, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// IsLocal reports whether name is on the local filesystem.
func IsLocal(name string) bool { return isLocal(name) }

func isLocal(name string) bool {
	i := strings.Index(name, "://")
	return i < 0 || name[:i] == "file" || name[:i] == "default"
}
