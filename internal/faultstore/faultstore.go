// Package faultstore is an object store for tests that fails on demand.
// Importing it registers the scheme faulty://: faulty:///abs/path names
// the local file /abs/path, read with ranged requests through package
// objstore as gs:// and s3:// objects are (retries, cache and all), and
// listed, sized and stat'ed through a Beam filesystem of the same scheme,
// as io/store's Match, Size and Stat look them up. A pipeline given
// faulty:// inputs therefore reads them as it reads a bucket, in the test's
// own process (the embedded Prism runner's workers run there).
//
// Outputs can be written there too, as on an object store: uploads appear
// whole on Close, a move is a copy and a delete, copies fail on demand
// (FailCopies) and listings can lag (ListLag).
//
// Inject adds a Fault: the ranged requests it matches fail, before any
// byte or with a body cut off part way, a given number of times or
// always. Like S3 with If-Match, a file pins its version (size and
// modification time) when it is opened: a request after the file changed
// fails with objstore.ErrChanged.
//
// The reader's sizes are Options, small by default, so that a file of a
// few tens of KiB takes many requests: its footer one, its column chunks
// others, and a fault can hit one without the other.
package faultstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/neardup/neardup/io/objstore"
)

// Scheme is the scheme this package serves.
const Scheme = "faulty"

// Name is the faulty:// name of the local file path (made absolute).
func Name(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return Scheme + "://" + abs
}

// Path is the local file of a faulty:// name.
func Path(name string) string { return strings.TrimPrefix(name, Scheme+"://") }

// Options are the sizes of the readers objstore.Open makes for faulty://
// names. Set it before a test's reads start.
var Options = objstore.Options{BlockSize: 4 << 10, CacheBlocks: 4, HeadSize: 512, TailSize: 2 << 10}

// Kind is how a faulty request fails.
type Kind int

const (
	// Cut sends part of the body, then ends it early: the reader sees
	// io.ErrUnexpectedEOF, as when a ranged GET's connection drops. A
	// body that starts before Fault.From stops there, so that the faulty
	// bytes are never sent; one that starts within sends Fault.After
	// bytes.
	Cut Kind = iota
	// Reset sends part of the body as Cut does, then fails with a
	// connection reset (syscall.ECONNRESET).
	Reset
	// Refuse fails the request before any byte, as a 503 Slow Down or a
	// timeout does.
	Refuse
	// Change makes a new version of the file (a new modification time,
	// as a new ETag) just before the request: it and every later request
	// of a reader opened before fail with objstore.ErrChanged, as S3's
	// If-Match does.
	Change
)

func (k Kind) String() string {
	switch k {
	case Cut:
		return "cut"
	case Reset:
		return "reset"
	case Refuse:
		return "refuse"
	case Change:
		return "change"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Always is Fault.Times for a fault that never heals.
const Always = -1

// Fault is a failure to inject into the ranged requests of one file.
type Fault struct {
	Path string // the local file (as Path gives it); "" for any
	// From and To bound the bytes whose requests fail: a request
	// overlapping [From, To). To 0 means to the end.
	From, To int64
	Skip     int // requests matched that pass before the first failure
	// Times is how many matched requests fail (after Skip) before the
	// fault heals; Always (or any negative) for ever. 0 means once.
	Times int
	Kind  Kind
	After int64 // bytes a Cut or Reset body starting within [From, To) sends

	Latency time.Duration // a wait before answering a matched request, failing or not
}

// Stats counts what happened to the requests of the files.
type Stats struct {
	Requests int // ranged requests, every one
	Failed   int // requests made to fail
}

var state struct {
	sync.Mutex
	faults []*fault
	stats  map[string]*Stats
}

type fault struct {
	Fault
	matched, failed int
}

// Inject adds f until the returned func removes it (pass it to t.Cleanup).
func Inject(f Fault) (remove func()) {
	if f.Times == 0 {
		f.Times = 1
	}
	p := &fault{Fault: f}
	state.Lock()
	state.faults = append(state.faults, p)
	state.Unlock()
	return func() {
		state.Lock()
		defer state.Unlock()
		for i, q := range state.faults {
			if q == p {
				state.faults = append(state.faults[:i], state.faults[i+1:]...)
				return
			}
		}
	}
}

// Clear removes every fault and clears the counts.
func Clear() {
	state.Lock()
	defer state.Unlock()
	state.faults, state.stats = nil, nil
}

// StatsOf returns the counts of the local file path's requests.
func StatsOf(path string) Stats {
	state.Lock()
	defer state.Unlock()
	if s := state.stats[path]; s != nil {
		return *s
	}
	return Stats{}
}

// decide counts a request for [off, off+n) of path and returns the fault
// that makes it fail, if any, and the latency to add.
func decide(path string, off, n int64) (*Fault, time.Duration) {
	state.Lock()
	defer state.Unlock()
	if state.stats == nil {
		state.stats = map[string]*Stats{}
	}
	st := state.stats[path]
	if st == nil {
		st = &Stats{}
		state.stats[path] = st
	}
	st.Requests++
	var wait time.Duration
	var hit *Fault
	for _, f := range state.faults {
		if f.Path != "" && f.Path != path || off+n <= f.From || f.To > 0 && off >= f.To {
			continue
		}
		wait = max(wait, f.Latency)
		f.matched++
		if hit != nil || f.matched <= f.Skip || f.Times >= 0 && f.failed >= f.Times {
			continue
		}
		f.failed++
		st.Failed++
		c := f.Fault
		hit = &c
	}
	return hit, wait
}

func init() {
	objstore.Register(Scheme, func(_ context.Context, name string) (objstore.RangeReader, error) {
		return &object{path: Path(name)}, nil
	})
	filesystem.Register(Scheme, func(context.Context) filesystem.Interface { return fs{} })
}

// object is one open faulty:// file.
type object struct {
	path    string
	size    int64
	modTime time.Time // the version pinned by Size
}

func (o *object) ReaderOptions() objstore.Options { return Options }

// Version is the modification time Size pinned, as an object store's
// version.
func (o *object) Version() string { return fmt.Sprintf("mtime:%d", o.modTime.UnixNano()) }

func (o *object) Size(context.Context) (int64, error) {
	fi, err := os.Stat(o.path)
	if err != nil {
		return 0, objstore.Permanent(err)
	}
	o.size, o.modTime = fi.Size(), fi.ModTime()
	return fi.Size(), nil
}

func (o *object) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	f, wait := decide(o.path, off, n)
	if wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f != nil && f.Kind == Change {
		later := o.modTime.Add(time.Hour)
		if err := os.Chtimes(o.path, later, later); err != nil {
			return nil, err
		}
	}
	if fi, err := os.Stat(o.path); err != nil || fi.Size() != o.size || !fi.ModTime().Equal(o.modTime) {
		return nil, fmt.Errorf("412 Precondition Failed: %w: %s is no longer the version opened", objstore.ErrChanged, o.path)
	}
	if f != nil && f.Kind == Refuse {
		return nil, fmt.Errorf("faultstore: 503 Slow Down (injected) for bytes %d-%d of %s", off, off+n-1, o.path)
	}
	file, err := os.Open(o.path)
	if err != nil {
		return nil, err
	}
	body := io.NewSectionReader(file, off, n)
	if f == nil {
		return readCloser{body, file}, nil
	}
	after := min(max(f.After, 0), n-1)
	if off < f.From {
		after = f.From - off
	}
	var end error = io.ErrUnexpectedEOF
	if f.Kind == Reset {
		end = &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}
	}
	return readCloser{&cutReader{r: io.LimitReader(body, after), err: end}, file}, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// cutReader reads r, then fails with err where io.EOF would be.
type cutReader struct {
	r   io.Reader
	err error
}

func (c *cutReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if errors.Is(err, io.EOF) {
		err = c.err
	}
	return n, err
}

// fs is the Beam filesystem of faulty:// names: the local files, for the
// launcher's listing and sizing of the input, and for outputs written,
// copied and removed as on an object store (no rename: a move is a copy
// and a delete), with the copy faults of FailCopies and the listing lag of
// ListLag.
type fs struct{}

func (fs) Close() error { return nil }

func (fs) List(_ context.Context, glob string) ([]string, error) {
	names, err := filepath.Glob(Path(glob))
	lag := listLag()
	kept := names[:0]
	for _, n := range names {
		fi, err := os.Stat(n)
		if err != nil || fi.IsDir() {
			continue // an object store lists objects, not folders
		}
		if lag > 0 && time.Since(fi.ModTime()) < lag {
			continue // not listed yet
		}
		kept = append(kept, Scheme+"://"+n)
	}
	return kept, err
}

func (fs) OpenRead(_ context.Context, name string) (io.ReadCloser, error) {
	return os.Open(Path(name))
}

// OpenWrite writes the file whole on Close, as an object store's upload
// does: nothing is seen at the name until then.
func (fs) OpenWrite(_ context.Context, name string) (io.WriteCloser, error) {
	p := Path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".upload-*")
	if err != nil {
		return nil, err
	}
	return &upload{f: f, to: p}, nil
}

type upload struct {
	f  *os.File
	to string
}

func (u *upload) Write(p []byte) (int, error) { return u.f.Write(p) }

func (u *upload) Close() error {
	err := u.f.Close()
	if err == nil {
		err = os.Rename(u.f.Name(), u.to)
	}
	if err != nil {
		os.Remove(u.f.Name())
	}
	return err
}

func (fs) Remove(_ context.Context, name string) error { return os.Remove(Path(name)) }

// Copy copies a file, unless a fault of FailCopies matches it.
func (fs) Copy(_ context.Context, from, to string) error {
	if failCopy(to) {
		return fmt.Errorf("copying %s to %s: injected failure (faultstore)", from, to)
	}
	b, err := os.ReadFile(Path(from))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(Path(to)), 0o755); err != nil {
		return err
	}
	tmp := Path(to) + ".copying"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, Path(to))
}

var copies struct {
	sync.Mutex
	match string // copies to a name holding it fail
	left  int    // how many more fail; Always: all
	lag   time.Duration
}

// FailCopies makes the next n copies (Always: every one) to a name holding
// match fail, until the returned func removes the fault.
func FailCopies(match string, n int) (remove func()) {
	copies.Lock()
	copies.match, copies.left = match, n
	copies.Unlock()
	return func() {
		copies.Lock()
		copies.match, copies.left = "", 0
		copies.Unlock()
	}
}

func failCopy(to string) bool {
	copies.Lock()
	defer copies.Unlock()
	if copies.match == "" || copies.left == 0 || !strings.Contains(to, copies.match) {
		return false
	}
	if copies.left > 0 {
		copies.left--
	}
	return true
}

// ListLag makes listings leave out the files written (or modified) less
// than lag ago, as an eventually consistent store's listing does, until
// the returned func removes it.
func ListLag(lag time.Duration) (remove func()) {
	copies.Lock()
	copies.lag = lag
	copies.Unlock()
	return func() {
		copies.Lock()
		copies.lag = 0
		copies.Unlock()
	}
}

func listLag() time.Duration {
	copies.Lock()
	defer copies.Unlock()
	return copies.lag
}

func (fs) Size(_ context.Context, name string) (int64, error) {
	fi, err := os.Stat(Path(name))
	if err != nil {
		return -1, err
	}
	return fi.Size(), nil
}

func (fs) LastModified(_ context.Context, name string) (time.Time, error) {
	fi, err := os.Stat(Path(name))
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}
