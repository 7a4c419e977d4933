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
	"errors"
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

// OpenWrite writes to a new file beside name, which replaces name only
// when the writer is closed without error (a rename, atomic on one
// filesystem): a reader, or a second attempt of the same bundle, never
// sees a file half written, and a writer that fails or dies midway leaves
// name as it was.
func (local) OpenWrite(_ context.Context, name string) (io.WriteCloser, error) {
	name = localPath(name)
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return nil, err
	}
	return &localWriter{f: f, name: name}, nil
}

// localWriter is a local file being written under a temporary name.
type localWriter struct {
	f    *os.File
	name string
	done bool
}

func (w *localWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

// Close puts the file in place of name, readable as CreateTemp's 0600
// would not be to the other users an output is shared with.
func (w *localWriter) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	err := w.f.Chmod(0o644)
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(w.f.Name(), w.name)
	}
	if err != nil {
		os.Remove(w.f.Name())
	}
	return err
}

// Abort drops what was written; name stays as it was.
func (w *localWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.f.Close()
	os.Remove(w.f.Name())
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
		if mod, err = lm.LastModified(ctx, name); errors.Is(err, errors.ErrUnsupported) {
			mod = time.Time{}
		} else if err != nil {
			return 0, time.Time{}, err
		}
	}
	return size, mod, nil
}

// Version names the version of a file now: its ETag or generation on an
// object store that has them (through package objstore), else when it was
// last modified; "" when its filesystem says neither. A run records its
// inputs' versions when it starts and its workers refuse any other
// (ReaderVersion), so that no run mixes two versions of a file.
func Version(ctx context.Context, name string) (string, error) {
	if objstore.Handles(name) {
		r, err := objstore.Open(ctx, name)
		if err != nil {
			return "", err
		}
		defer r.Close()
		if v := r.Version(); v != "" {
			return v, nil
		}
	}
	_, mod, err := Stat(ctx, name)
	if err != nil || mod.IsZero() {
		return "", err
	}
	return "mtime:" + mod.UTC().Format(time.RFC3339Nano), nil
}

// ReaderVersion names the version r, opened by OpenReaderAt, reads: the
// one it pinned on an object store, else the file's now (Version).
func ReaderVersion(ctx context.Context, name string, r ReaderAt) (string, error) {
	if v, ok := r.(interface{ Version() string }); ok && v.Version() != "" {
		return v.Version(), nil
	}
	return Version(ctx, name)
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
		r.OnClose(func(requests, bytes int64) { report(ctx, name, Reads{requests, bytes}) })
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
		return &countedFile{ReaderAt: ra, ctx: ctx, name: name}, size, nil
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, err
	}
	report(ctx, name, Reads{1, int64(len(b))})
	return bytesReaderAt{bytes.NewReader(b)}, int64(len(b)), nil
}

// Join joins a directory and a name for any scheme.
func Join(dir string, elem ...string) string {
	if strings.Contains(dir, "://") {
		return strings.TrimSuffix(dir, "/") + "/" + path.Join(elem...)
	}
	return filepath.Join(append([]string{dir}, elem...)...)
}

// WriteFile writes data to name, replacing it once all is written (see
// OpenWrite).
func WriteFile(ctx context.Context, name string, data []byte) error {
	w, err := OpenWrite(ctx, name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// Writer is a file being written. It replaces the file of its name when
// Close returns without error, and not before: on the local filesystem it
// is written under a temporary name and renamed, on an object store the
// object appears when its upload completes. Abort, instead of Close, drops
// what was written and leaves the file as it was (an object store's upload
// is cancelled, never completed with part of the data). Abort after Close
// does nothing, so a writer can be aborted by a deferred call on every
// path.
type Writer interface {
	io.Writer
	Close() error
	Abort()
}

// OpenWrite creates (or replaces) name for writing; see Writer.
func OpenWrite(ctx context.Context, name string) (Writer, error) {
	fs, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	// The upload is tied to its own context: cancelling it is how an
	// object store's writer is made to abandon the object (Beam's s3 and
	// gcs writers complete the upload on Close, whatever was written).
	wctx, cancel := context.WithCancel(ctx)
	w, err := fs.OpenWrite(wctx, name)
	if err != nil {
		cancel()
		fs.Close()
		return nil, err
	}
	return &writer{WriteCloser: w, fs: fs, cancel: cancel}, nil
}

// writer closes a file's writer, then the filesystem it came from.
type writer struct {
	io.WriteCloser
	fs     Filesystem
	cancel context.CancelFunc
	done   bool
}

func (w *writer) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	err := w.WriteCloser.Close()
	w.cancel()
	if ferr := w.fs.Close(); err == nil {
		err = ferr
	}
	return err
}

func (w *writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	if a, ok := w.WriteCloser.(interface{ Abort() }); ok {
		a.Abort()
	} else {
		// Cancelled first, so that closing ends the upload in an error
		// instead of completing it.
		w.cancel()
		w.WriteCloser.Close()
	}
	w.cancel()
	w.fs.Close()
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
	c := &countedReader{ReadCloser: r, ctx: ctx, name: name}
	defer c.Close()
	return io.ReadAll(c)
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
	if err := rm.Remove(ctx, name); errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("filesystem of %q cannot remove files", name)
	} else if err != nil {
		if ok, e := Exists(ctx, name); ok || e != nil {
			return err
		}
	}
	return nil
}

// Move renames oldpath to newpath, by copy and remove where the filesystem
// has no rename (object stores: package objstore's copy where it has one,
// for objects of any size and keys of any characters).
func Move(ctx context.Context, oldpath, newpath string) error {
	if objstore.CanCopy(oldpath, newpath) {
		if err := objstore.Copy(ctx, oldpath, newpath); err != nil {
			return err
		}
		return Remove(ctx, oldpath)
	}
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
		if err := rn.Rename(ctx, oldpath, newpath); !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	if cp, ok := fs.(copier); ok {
		if err := cp.Copy(ctx, oldpath, newpath); !errors.Is(err, errors.ErrUnsupported) {
			if err != nil {
				return err
			}
			return Remove(ctx, oldpath)
		}
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
	} else if objstore.CanCopy(from, to) {
		return objstore.Copy(ctx, from, to)
	} else if scheme(from) == scheme(to) {
		fs, err := open(ctx, from)
		if err != nil {
			return err
		}
		defer fs.Close()
		if cp, ok := fs.(copier); ok {
			if err := cp.Copy(ctx, from, to); !errors.Is(err, errors.ErrUnsupported) {
				return err
			}
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
		return os.RemoveAll(localPath(dir))
	}
	names, err := ListAll(ctx, dir)
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := Remove(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// Contents lists what dir holds: on the local filesystem its entries,
// files and folders; on an object store, which has no folders, every
// object below it (a glob's * does not cross a / there, so dir/* would
// miss a folder of files).
func Contents(ctx context.Context, dir string) ([]string, error) {
	if isLocal(dir) {
		return List(ctx, Join(dir, "*"))
	}
	return ListAll(ctx, dir)
}

// ListAll lists every file below dir, at any depth (to maxDepth on
// schemes without a recursive glob), sorted.
func ListAll(ctx context.Context, dir string) ([]string, error) {
	if isLocal(dir) {
		var names []string
		err := filepath.WalkDir(localPath(dir), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil // gone meanwhile, or never there
				}
				return err
			}
			if !d.IsDir() {
				names = append(names, p)
			}
			return nil
		})
		return names, err
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
	seen := map[string]bool{}
	var names []string
	for _, g := range globs {
		found, err := List(ctx, g)
		if err != nil {
			return nil, err
		}
		for _, n := range found {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// IsLocal reports whether name is on the local filesystem.
func IsLocal(name string) bool { return isLocal(name) }

func isLocal(name string) bool {
	i := strings.Index(name, "://")
	return i < 0 || name[:i] == "file" || name[:i] == "default"
}
