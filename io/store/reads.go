package store

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
)

// Reads is what reading a file cost: the requests made (an object
// store's GETs, retries included; a local file's reads) and the bytes
// they brought. On a cluster these are what the object store bills and
// the network carries, so a run counts them by the kind of file read.
type Reads struct {
	Requests int64 `json:"requests"`
	Bytes    int64 `json:"bytes"`
}

// Add adds o to r.
func (r *Reads) Add(o Reads) {
	r.Requests += o.Requests
	r.Bytes += o.Bytes
}

// ReadsByKind are reads summed by the kind of file read (ReadsInput…).
type ReadsByKind map[string]Reads

// Add adds r to kind's sum.
func (m ReadsByKind) Add(kind string, r Reads) {
	sum := m[kind]
	sum.Add(r)
	m[kind] = sum
}

// The kinds of files read, as ReadsAs labels them (and the pipeline
// classifies its temporary files by their folder).
const (
	ReadsInput     = "input"     // the crawl
	ReadsFeatures  = "features"  // the features written for verification
	ReadsTemporary = "temporary" // a run's other temporary files: parked sketches, shards, receipts
	ReadsOutput    = "output"    // an output's tables: an update's or recluster's index
	ReadsOther     = "other"     // anything else (manifests, leases)
)

type kindKey struct{}

// ReadsAs labels the reads made under ctx as of the given kind (the
// input, an index's tables), for the function OnReads set; unlabelled
// reads are classified by their names there.
func ReadsAs(ctx context.Context, kind string) context.Context {
	return context.WithValue(ctx, kindKey{}, kind)
}

// ReadKind is the kind ReadsAs gave ctx, "" when none.
func ReadKind(ctx context.Context) string {
	k, _ := ctx.Value(kindKey{}).(string)
	return k
}

var onReads atomic.Pointer[func(ctx context.Context, name string, r Reads)]

// OnReads makes fn be told, with the context the read was made under,
// what each read of a file cost: once per ReadFile, and once per reader
// of OpenReaderAt, when it closes. A binary that counts its reads (the
// pipeline's counters) sets it in init; fn must be safe for concurrent
// use.
func OnReads(fn func(ctx context.Context, name string, r Reads)) {
	onReads.Store(&fn)
}

func report(ctx context.Context, name string, r Reads) {
	if fn := onReads.Load(); fn != nil && (r.Requests > 0 || r.Bytes > 0) {
		(*fn)(ctx, name, r)
	}
}

// countedFile is a file read in place (a local one) that counts its
// reads and reports them when it closes.
type countedFile struct {
	ReaderAt
	ctx             context.Context
	name            string
	requests, bytes atomic.Int64
	once            sync.Once
}

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.ReaderAt.ReadAt(p, off)
	f.requests.Add(1)
	f.bytes.Add(int64(n))
	return n, err
}

func (f *countedFile) Close() error {
	f.once.Do(func() { report(f.ctx, f.name, Reads{f.requests.Load(), f.bytes.Load()}) })
	return f.ReaderAt.Close()
}

// countedReader is a stream that counts the bytes read through it, as
// one request, reported when it closes.
type countedReader struct {
	io.ReadCloser
	ctx   context.Context
	name  string
	bytes int64
	once  sync.Once
}

func (r *countedReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.bytes += int64(n)
	return n, err
}

func (r *countedReader) Close() error {
	r.once.Do(func() { report(r.ctx, r.name, Reads{1, r.bytes}) })
	return r.ReadCloser.Close()
}
