// Package objstore gives Parquet random access to objects in object stores
// (gs://, s3://). Beam's filesystem interface only streams a file from its
// start, and Parquet reads a footer at the end and then column chunks
// anywhere, so this package issues ranged GETs itself.
//
// Object stores charge per request and take tens of milliseconds per
// round trip, while parquet-go issues many small ReadAt calls (4 KiB
// buffered reads per column chunk, interleaved across columns). ReaderAt
// therefore reads big and remembers what it read:
//
//   - the tail of the object (the last TailSize bytes, 64 KiB by default, or
//     the whole object when it is at most WholeSize, 256 KiB) in one request on the first read
//     there: the 8-byte Parquet trailer and, in practice, the whole footer;
//   - the head (the first HeadSize bytes, 64 KiB) in one small request when
//     a read lies entirely within it, so the 4-byte magic Parquet checks at
//     offset 0 does not cost a whole block;
//   - anything else in blocks of BlockSize bytes (8 MiB) starting at the
//     first byte missing (more when one read asks for more), one request
//     each. A block stops where the next cached block starts, so nothing
//     cached is fetched again, and blocks are not aligned, so the first read
//     of a column chunk fetches that column's bytes and not the end of the
//     previous chunk. CacheBlocks (8) blocks stay in memory; when one must
//     go, blocks read to their end go first (their cursor has moved on),
//     then the least recently used, so the block under every column cursor
//     stays. A new block also stops where a recently finished one started
//     (the end of one column chunk runs into the start of the next, which
//     its own cursor has read already). A sequential scan costs one request
//     per BlockSize bytes.
//
// Head and tail stay until Close; at most HeadSize + TailSize + CacheBlocks ×
// BlockSize bytes (about 65 MiB by default) are held per open reader, more
// only when single reads are larger than a block.
//
// A failed request is tried again, up to len(RetryDelays) more times with
// growing waits: a ranged GET that fails or whose body ends early (a
// timeout, a reset connection, a 5xx) is followed by a new one for the
// bytes still missing, of the same version of the object (the stores pin
// it: S3's If-Match on the ETag, GCS's generation). An object that changed
// since it was opened (ErrChanged), and errors a RangeReader marks
// Permanent, are not retried. When the tries run out, ReadAt returns the
// error: a caller must take it for a failed read, not for bad content.
package objstore

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RangeReader is the little an object store must offer: the object's size
// and a ranged read.
type RangeReader interface {
	// Size reports the object's size in bytes, from its metadata. It is
	// called once, first: a store pins the version it reports on, so
	// that later reads fail with ErrChanged, never mix two versions.
	Size(ctx context.Context) (int64, error)
	// ReadRange returns the n bytes of the object starting at off. Its
	// errors, and the body's, are retried unless they wrap ErrChanged or
	// were made by Permanent.
	ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error)
}

// ErrChanged is wrapped by the errors of reading an object that changed
// (was replaced or deleted) since it was opened: reading on would mix two
// versions, and waiting does not help, so it is not retried. The input
// is neither bad nor unreachable: the run must fail, naming it.
var ErrChanged = errors.New("changed during the run")

// Permanent marks err, returned by a RangeReader, as one that trying again
// cannot mend (no such object, access denied, a server that ignores the
// Range header): ReaderAt returns it at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// RetryDelays are the waits before each retry of a failed request (an
// object's size, or a range of its bytes): a request is tried
// len(RetryDelays)+1 times in all, some 2.25 s from the first try to the
// last. Each wait varies by up to a quarter either way, so that workers
// that failed together do not retry together. Tests shorten them.
var RetryDelays = []time.Duration{150 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond, 1200 * time.Millisecond}

// retryable reports whether err, from a request made under ctx, is worth
// another try: not when ctx is done, the object changed, or err is
// marked permanent.
func retryable(ctx context.Context, err error) bool {
	var p *permanentError
	return ctx.Err() == nil && !errors.Is(err, ErrChanged) && !errors.As(err, &p) && !errors.Is(err, context.Canceled)
}

// withRetries calls try until it succeeds, its error is not worth another
// try, or RetryDelays run out, and returns its last error, saying how many
// tries failed.
func withRetries(ctx context.Context, try func() error) error {
	for i := 0; ; i++ {
		err := try()
		if err == nil {
			return nil
		}
		if i == len(RetryDelays) || !retryable(ctx, err) {
			if i > 0 {
				err = fmt.Errorf("%d tries failed, the last with: %w", i+1, err)
			}
			return err
		}
		d := RetryDelays[i]
		if d > 0 {
			d += time.Duration(rand.Int64N(int64(d)/2+1)) - d/4
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up waiting to try again: %v)", err, ctx.Err())
		case <-t.C:
		}
	}
}

// Sizer is implemented by a RangeReader that wants its ReaderAt sized
// otherwise than by Defaults (a test store, to make small files take many
// requests).
type Sizer interface {
	ReaderOptions() Options
}

// Options sizes a ReaderAt's requests and cache. Zero fields take the
// defaults.
type Options struct {
	BlockSize   int64 // bytes per request after a miss, from the missing byte on; default 8 MiB
	CacheBlocks int   // blocks kept (finished ones evicted first, then the least recently used); default 8
	HeadSize    int64 // bytes fetched for a small read at the start; default 64 KiB
	TailSize    int64 // bytes fetched at the end in one request; default 64 KiB
	WholeSize   int64 // an object of up to this many bytes is fetched whole at its first read; default 256 KiB (TailSize when TailSize is set)
}

// Defaults are the sizes used by Open. A file of up to 256 KiB (a small
// table, a shard, a receipt) is one request; a bigger one is fetched whole
// by every split of it that opens it (1 MiB took the sample crawl's 756 KB
// files five times over, one split of three row groups each and two
// footer reads). Above that, the tail holds a
// Parquet footer of up to 64 KiB in one request; a longer one takes one
// more, for exactly the bytes before the tail (a block stops where the
// tail begins). A bigger tail is fetched again by every split of a file:
// 1 MiB cost the gigabyte's 52 splits 52 MB that nobody decoded.
var Defaults = Options{BlockSize: 8 << 20, CacheBlocks: 8, HeadSize: 64 << 10, TailSize: 64 << 10, WholeSize: 256 << 10}

func (o Options) withDefaults() Options {
	if o.BlockSize <= 0 {
		o.BlockSize = Defaults.BlockSize
	}
	if o.CacheBlocks <= 0 {
		o.CacheBlocks = Defaults.CacheBlocks
	}
	if o.HeadSize <= 0 {
		o.HeadSize = Defaults.HeadSize
	}
	if o.WholeSize <= 0 {
		o.WholeSize = o.TailSize
		if o.TailSize <= 0 {
			o.WholeSize = Defaults.WholeSize
		}
	}
	if o.TailSize <= 0 {
		o.TailSize = Defaults.TailSize
	}
	return o
}

// Opener makes the RangeReader of one object, given its full name.
type Opener func(ctx context.Context, name string) (RangeReader, error)

var (
	openersMu sync.RWMutex
	openers   = map[string]Opener{}
)

// Register makes Open handle names of the form scheme://... with open.
// gs and s3 are registered by this package; tests register in-memory ones.
func Register(scheme string, open Opener) {
	openersMu.Lock()
	defer openersMu.Unlock()
	openers[scheme] = open
}

func opener(name string) Opener {
	scheme, _, ok := strings.Cut(name, "://")
	if !ok {
		return nil
	}
	openersMu.RLock()
	defer openersMu.RUnlock()
	return openers[scheme]
}

// Handles reports whether Open serves name's scheme.
func Handles(name string) bool { return opener(name) != nil }

// Open opens the object name (gs://bucket/object, s3://bucket/key, or a
// registered scheme) for random access with the default sizes.
func Open(ctx context.Context, name string) (*ReaderAt, error) {
	open := opener(name)
	if open == nil {
		return nil, fmt.Errorf("%s: no ranged reader for this scheme", name)
	}
	rr, err := open(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var opt Options
	if s, ok := rr.(Sizer); ok {
		opt = s.ReaderOptions()
	}
	return NewReaderAt(ctx, name, rr, opt)
}

// splitName splits scheme://bucket/key into bucket and key. The key is taken
// literally (no URL unescaping), as object listings return it.
func splitName(scheme, name string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(name, scheme+"://")
	if !ok {
		return "", "", fmt.Errorf("not a %s:// name", scheme)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" || key == "" {
		return "", "", fmt.Errorf("want %s://BUCKET/OBJECT", scheme)
	}
	return bucket, key, nil
}

// ReaderAt is an io.ReaderAt over a RangeReader, safe for concurrent use.
// Its errors name the object.
type ReaderAt struct {
	ctx       context.Context // ReadAt has none of its own; the one given at open
	name      string
	rr        RangeReader
	opt       Options
	size      int64
	tailStart int64 // the tail is [tailStart, size)
	headEnd   int64 // the head is [0, headEnd)

	mu     sync.Mutex
	closed bool
	head   *span
	tail   *span
	lru    list.List // the cached blocks (*span), most recently used at the front
	// Where recently evicted blocks that were read to their end started: a
	// new block stops there too, since a cursor has already read on from
	// that point (the end of one column chunk runs into the next one's start).
	finished []int64
	// Offsets no block crosses (Bound), sorted: where the byte ranges a
	// reader decodes end, so that a block does not run on into bytes
	// nobody asked for.
	bounds []int64

	requests, bytes atomic.Int64 // what was fetched (Reads)
	onClose         func(requests, bytes int64)
}

// OnClose makes Close call fn with what r fetched (Reads), once.
func (r *ReaderAt) OnClose(fn func(requests, bytes int64)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.onClose = fn
}

const maxFinished = 64

// Bound makes every block fetched from now on stop at the first of
// offsets past its start (a read across one takes a block on each side):
// a Parquet reader gives the ends of the column chunks it decodes, so that
// the 8 MiB block at a chunk's end is not mostly the next chunk's bytes,
// which another split reads.
func (r *ReaderAt) Bound(offsets ...int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bounds = append(r.bounds, offsets...)
	slices.Sort(r.bounds)
	r.bounds = slices.Compact(r.bounds)
}

// Reads is what r has fetched from the store: requests answered (retries
// included) and the bytes they brought.
func (r *ReaderAt) Reads() (requests, bytes int64) {
	return r.requests.Load(), r.bytes.Load()
}

// ReadDirect fills p with the bytes at off, in one request (more only
// when one fails), past the cache: for a reader that knows the exact
// ranges it needs and reads each once, where a block would fetch bytes
// nobody reads.
func (r *ReaderAt) ReadDirect(p []byte, off int64) error {
	if off < 0 || off+int64(len(p)) > r.size {
		return fmt.Errorf("%s: ReadDirect of bytes %d-%d of %d", r.name, off, off+int64(len(p))-1, r.size)
	}
	if err := r.fill(p, off); err != nil {
		return fmt.Errorf("%s: reading bytes %d-%d of %d: %w", r.name, off, off+int64(len(p))-1, r.size, err)
	}
	return nil
}

// span is a fetched (or being fetched) range [start, end) of the object.
type span struct {
	start, end int64
	elem       *list.Element // in lru while the block is cached; nil for head and tail
	consumed   atomic.Bool   // its last byte was read: a sequential cursor has moved on
	done       chan struct{}
	data       []byte // valid once done is closed and err is nil
	err        error
}

// NewReaderAt opens name through rr, reading its size from the object's
// metadata (retried as reads are). No data is read until the first ReadAt.
func NewReaderAt(ctx context.Context, name string, rr RangeReader, opt Options) (*ReaderAt, error) {
	var size int64
	err := withRetries(ctx, func() (err error) {
		size, err = rr.Size(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: reading size: %w", name, err)
	}
	if size < 0 {
		return nil, fmt.Errorf("%s: object store reports size %d", name, size)
	}
	opt = opt.withDefaults()
	r := &ReaderAt{ctx: ctx, name: name, rr: rr, opt: opt, size: size}
	r.tailStart = max(0, size-opt.TailSize)
	if size <= opt.WholeSize {
		r.tailStart = 0
	}
	r.headEnd = min(opt.HeadSize, r.tailStart)
	return r, nil
}

// Size is the object's size in bytes.
func (r *ReaderAt) Size() int64 { return r.size }

// Versioned is a RangeReader that names the version its Size pinned (an
// S3 ETag, a GCS generation).
type Versioned interface{ Version() string }

// Version names the version of the object read: every read is of it. ""
// when its store names none.
func (r *ReaderAt) Version() string {
	if v, ok := r.rr.(Versioned); ok {
		return v.Version()
	}
	return ""
}

// Name is the object's name.
func (r *ReaderAt) Name() string { return r.name }

// ReadAt reads len(p) bytes at off, as io.ReaderAt specifies: fewer only at
// the end of the object (with io.EOF) or on error.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: ReadAt at negative offset %d", r.name, off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := p[:min(int64(len(p)), r.size-off)]
	end := off + int64(len(want))
	n := 0
	for n < len(want) {
		pos := off + int64(n)
		s, err := r.span(pos, end)
		if err != nil {
			return n, err
		}
		k := copy(want[n:], s.data[pos-s.start:])
		if pos+int64(k) == s.end {
			s.consumed.Store(true)
		}
		n += k
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// span returns the fetched range holding pos, fetching it if needed; end is
// where the caller's read ends.
func (r *ReaderAt) span(pos, end int64) (*span, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("%s: read after Close", r.name)
	}
	s, fetch := r.find(pos, end)
	r.mu.Unlock()
	if fetch {
		r.fetch(s)
	}
	<-s.done
	if s.err != nil {
		return nil, s.err
	}
	return s, nil
}

// find returns the span holding pos, and whether the caller must fetch it
// (a new span). r.mu is held.
func (r *ReaderAt) find(pos, end int64) (s *span, fetch bool) {
	if pos >= r.tailStart {
		if r.tail == nil {
			r.tail = newSpan(r.tailStart, r.size)
			return r.tail, true
		}
		return r.tail, false
	}
	if r.head != nil && pos < r.head.end {
		return r.head, false
	}
	next := r.tailStart // where a new block must stop: the next cached byte
	for e := r.lru.Front(); e != nil; e = e.Next() {
		b := e.Value.(*span)
		if b.start <= pos && pos < b.end {
			r.lru.MoveToFront(e)
			return b, false
		}
		if b.start > pos {
			next = min(next, b.start)
		}
	}
	for _, start := range r.finished {
		if start > pos {
			next = min(next, start)
		}
	}
	if i, _ := slices.BinarySearch(r.bounds, pos+1); i < len(r.bounds) {
		next = min(next, r.bounds[i])
	}
	if r.head == nil && end <= r.headEnd {
		r.head = newSpan(0, r.headEnd)
		return r.head, true
	}
	s = newSpan(pos, min(max(pos+r.opt.BlockSize, end), next))
	s.elem = r.lru.PushFront(s)
	for r.lru.Len() > r.opt.CacheBlocks {
		old := r.lru.Remove(r.victim()).(*span)
		old.elem = nil
		if old.consumed.Load() {
			if len(r.finished) == maxFinished {
				r.finished = r.finished[1:]
			}
			r.finished = append(r.finished, old.start)
		}
	}
	return s, true
}

// victim picks the block to evict: the least recently used of those read to
// their end, else the least recently used. Parquet decodes several column
// chunks at once, each read front to back at its own pace; a block a cursor
// has finished is the one not needed again, while plain LRU would evict the
// live block of a slow column (a URL column beside the text).
func (r *ReaderAt) victim() *list.Element {
	for e := r.lru.Back(); e != nil; e = e.Prev() {
		if e.Value.(*span).consumed.Load() {
			return e
		}
	}
	return r.lru.Back()
}

func newSpan(start, end int64) *span {
	return &span{start: start, end: end, done: make(chan struct{})}
}

// fetch reads s with one request (more when it fails: see readRange). A
// failed span is forgotten, so a later read tries again; readers already
// waiting on it get the error.
func (r *ReaderAt) fetch(s *span) {
	defer close(s.done)
	n := s.end - s.start
	s.data, s.err = r.readRange(s.start, n)
	if s.err == nil {
		return
	}
	s.data = nil
	s.err = fmt.Errorf("%s: reading bytes %d-%d of %d: %w", r.name, s.start, s.end-1, r.size, s.err)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.tail == s:
		r.tail = nil
	case r.head == s:
		r.head = nil
	case s.elem != nil:
		r.lru.Remove(s.elem)
		s.elem = nil
	}
}

// readRange reads the n bytes at off. A request that fails, or whose body
// ends early, is followed by another for the bytes still missing, as
// withRetries allows.
func (r *ReaderAt) readRange(off, n int64) ([]byte, error) {
	buf := make([]byte, n)
	if err := r.fill(buf, off); err != nil {
		return nil, err
	}
	return buf, nil
}

// fill fills p with the bytes at off, asking again for those still
// missing after a failed or short request, as withRetries allows.
func (r *ReaderAt) fill(p []byte, off int64) error {
	var got int64
	return withRetries(r.ctx, func() error {
		k, err := r.readOnce(off+got, p[got:])
		got += int64(k)
		return err
	})
}

// readOnce fills p with one request for the bytes at off; on error, k is
// how many it holds all the same.
func (r *ReaderAt) readOnce(off int64, p []byte) (k int, err error) {
	body, err := r.rr.ReadRange(r.ctx, off, int64(len(p)))
	if err != nil {
		return 0, err
	}
	defer body.Close()
	r.requests.Add(1)
	defer func() { r.bytes.Add(int64(k)) }()
	if k, err = io.ReadFull(body, p); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			// The stores pin the version read, so a short body is a
			// transfer cut off, not a shorter object.
			return k, fmt.Errorf("the response ended after %d of the %d bytes asked for: %w", k, len(p), io.ErrUnexpectedEOF)
		}
		return k, err
	}
	// A server that ignores the range header sends more than asked for,
	// and from the wrong offset: refuse rather than return wrong bytes.
	var one [1]byte
	if extra, _ := body.Read(one[:]); extra > 0 {
		return 0, Permanent(fmt.Errorf("object store returned more than the %d bytes asked for (range ignored?)", len(p)))
	}
	return k, nil
}

// Close releases the cached data. Reads after Close fail.
func (r *ReaderAt) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed && r.onClose != nil {
		defer r.onClose(r.requests.Load(), r.bytes.Load())
	}
	r.closed = true
	r.head, r.tail, r.finished = nil, nil, nil
	r.lru.Init()
	return nil
}
