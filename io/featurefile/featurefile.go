// Package featurefile writes and reads the files of documents' features
// that phase 1 leaves for verification: packed.Features records in
// document order, then an index of where each begins, so that a worker
// that needs a few documents of a file reads those records and the index
// (ranged reads on an object store), not the file.
//
// The layout, all little-endian:
//
//	record 0 … record n-1         packed.Features encodings
//	doc 0 - first, offset 0 … doc n-1 - first, offset n-1   4 + 4 bytes each
//	first                         8 bytes: the first record's document
//	n                             4 bytes
//	"NDF2"                        4 bytes
//
// The index is what a sparse reader pays for every file it touches, so it
// is kept small: a file's documents are one verify slice's (their numbers
// differ by less than 2^14) and its records are cut at a few MB, so 32-bit
// deltas and offsets hold them (Append refuses what would not fit). A
// reader told the file's Extent (which the writer can put in its name)
// reads only the index entries its documents can have, with the footer.
package featurefile

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/shuffle/packed"
)

var le = binary.LittleEndian

const (
	magic      = "NDF2"
	footerSize = 16
	entrySize  = 8
)

// Builder gathers one file's records. The zero Builder is empty.
type Builder struct {
	data  []byte
	docs  []uint64
	offs  []uint64 // where each record begins in data
	first uint64
}

// Append adds doc's record, which appendRecord appends to the buffer it
// is given (false: doc has none, and nothing is added). Documents come in
// increasing order. A record that would not fit the index's 32 bits (its
// document 2^32 or more after the file's first, or its offset past 4 GiB)
// is an error: the caller cuts the file before it.
func (b *Builder) Append(doc uint64, appendRecord func([]byte) ([]byte, bool)) error {
	n := len(b.data)
	if len(b.docs) > 0 && (doc-b.first > math.MaxUint32 || uint64(n) > math.MaxUint32) {
		return fmt.Errorf("featurefile: doc %d at offset %d does not fit a file that begins at doc %d", doc, n, b.first)
	}
	data, ok := appendRecord(b.data)
	if !ok {
		b.data = data[:n]
		return nil
	}
	if len(b.docs) == 0 {
		b.first = doc
	}
	b.data = data
	b.docs = append(b.docs, doc)
	b.offs = append(b.offs, uint64(n))
	return nil
}

// Len is the size of the records gathered.
func (b *Builder) Len() int { return len(b.data) }

// Empty reports whether the builder holds no record.
func (b *Builder) Empty() bool { return len(b.docs) == 0 }

// First is the first document gathered.
func (b *Builder) First() uint64 { return b.first }

// Count is how many records the builder holds.
func (b *Builder) Count() int { return len(b.docs) }

// Bytes returns the file: the records, their index and the footer. It
// reuses the builder's buffer: valid until the next Append or Reset.
func (b *Builder) Bytes() []byte {
	out := b.data
	for i, doc := range b.docs {
		out = le.AppendUint32(out, uint32(doc-b.first))
		out = le.AppendUint32(out, uint32(b.offs[i]))
	}
	out = le.AppendUint64(out, b.first)
	out = le.AppendUint32(out, uint32(len(b.docs)))
	out = append(out, magic...)
	b.data = out[:len(b.data)] // keep the grown buffer
	return out
}

// Grow makes room for n more bytes of records without another
// allocation.
func (b *Builder) Grow(n int) { b.data = slices.Grow(b.data, n) }

// Reset empties the builder, keeping its buffers.
func (b *Builder) Reset() {
	b.data, b.docs, b.offs = b.data[:0], b.docs[:0], b.offs[:0]
}

// mergeGap is the largest gap between two records needed that one read
// spans rather than two: about one record. On a local file a read costs
// about as much as copying 4 KB more (reading through 256 KB gaps on local
// disk read 2.9 GB to take 70 MB of records on a gigabyte of text, most of
// verify's time). On an object store the reads go out several at once
// (inFlight), so a request's latency is shared and what a gap costs is its
// bytes, in transfer and egress: 256 KB gaps read 8.4 GB of features for
// 215 MB of records on the Unicode gigabyte, 16 KB gaps 297 MB.
const mergeGap = 4 << 10

// windowGap is how many index entries (8 bytes each) apart two
// documents' windows of the index are still read in one request: 1 KB,
// about a record. On the 1.5M-page crawl, gaps of 64 entries read 356 MB
// of features in 576,070 requests; the whole index read for each file
// touched, 1,461 MB in 360,948.
const windowGap = 128

// inFlight is how many reads of one file go out at once.
const inFlight = 8

// directReader reads exactly the bytes asked, past any cache (an object
// store's ReaderAt, whose blocks would fetch 8 MiB for a 4 KB record).
type directReader interface {
	ReadDirect(p []byte, off int64) error
}

// Extent is what a reader can know of a file before reading any of it
// (the writer puts it in the file's name): its first document, how many
// records it holds, and the span of document numbers they cover (the
// last's minus the first's, plus one).
type Extent struct {
	First uint64
	Count int
	Span  uint64
}

// Extent is the file's Extent so far.
func (b *Builder) Extent() Extent {
	if len(b.docs) == 0 {
		return Extent{}
	}
	return Extent{First: b.first, Count: len(b.docs), Span: b.docs[len(b.docs)-1] - b.first + 1}
}

// Read returns the records of docs (sorted, distinct) that the file name
// of extent ext holds, in document order; documents it does not hold are
// left out.
//
// Told the file's Extent, Read needs no look at the file first: a
// document d's index entry can only be among the entries from
// d - First - (Span - Count), the records missing before it at most, up
// to d - First, so it reads those windows of the index (about one entry a
// document when few rows lack a record) with the footer, then the
// records. Records closer than mergeGap are read in one request, and up
// to inFlight requests of a file go out at once.
func Read(ctx context.Context, name string, ext Extent, docs []uint64) ([]packed.Features, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	r, size, err := store.OpenReaderAt(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f := &file{name: name, size: size, read: func(p []byte, off int64) error { return readAt(r, p, off) }, workers: 1}
	if d, ok := r.(directReader); ok {
		f.read, f.workers = d.ReadDirect, inFlight
	}
	if size < footerSize {
		return nil, f.bad("too short")
	}
	spans, err := f.spans(ext, docs)
	if err != nil {
		return nil, err
	}
	return f.records(spans)
}

// file is one features file being read.
type file struct {
	name    string
	size    int64
	read    func(p []byte, off int64) error
	workers int
}

func (f *file) bad(what string) error {
	return fmt.Errorf("%s: not a features file: %s", f.name, what)
}

// span is where a wanted document's record lies.
type span struct {
	doc      uint64
	from, to int64
}

// footer checks the footer b and returns the first document and the
// records it gives.
func (f *file) footer(b []byte) (first uint64, n int64, err error) {
	if string(b[len(b)-4:]) != magic {
		return 0, 0, f.bad("no footer")
	}
	return le.Uint64(b), int64(le.Uint32(b[8:])), nil
}

// entry is index entry i of index (entries from the index's start).
func entry(index []byte, i int64) (delta uint32, off int64) {
	return le.Uint32(index[i*entrySize:]), int64(le.Uint32(index[i*entrySize+4:]))
}

// spans reads the windows of the index where docs' entries can be, and
// the footer, all at once, for the spans of docs.
func (f *file) spans(ext Extent, docs []uint64) ([]span, error) {
	n := int64(ext.Count)
	indexAt := f.size - footerSize - n*entrySize
	if n <= 0 || indexAt < 0 || ext.Span < uint64(ext.Count) {
		return nil, f.bad(fmt.Sprintf("%d bytes cannot hold the %d records of its extent", f.size, ext.Count))
	}
	missing := int64(ext.Span) - n
	// Each document's window of entries, [lo, hi], and one more entry for
	// where its record ends; windows that touch are merged.
	type window struct {
		lo, hi int64 // entries lo..hi, hi+1 read too when there is one
		buf    []byte
	}
	var ws []window
	// The documents the file can hold, each with its entry's window.
	type want struct {
		doc    uint64
		at     int64 // its delta from the file's first
		lo, hi int64 // its window
		w      int   // the window of ws that holds it
	}
	var wants []want
	for _, d := range docs {
		if d < ext.First || d-ext.First >= ext.Span {
			continue
		}
		at := int64(d - ext.First)
		lo, hi := max(0, at-missing), min(n-1, at)
		if lo > hi {
			continue
		}
		if k := len(ws) - 1; k >= 0 && lo <= ws[k].hi+1+windowGap {
			ws[k].hi = max(ws[k].hi, hi)
		} else {
			ws = append(ws, window{lo: lo, hi: hi})
		}
		wants = append(wants, want{d, at, lo, hi, len(ws) - 1})
	}
	reads := make([]rangeRead, 0, len(ws)+1)
	for i := range ws {
		end := min(ws[i].hi+2, n) // the entry after, for the record's end
		ws[i].buf = make([]byte, (end-ws[i].lo)*entrySize)
		reads = append(reads, rangeRead{off: indexAt + ws[i].lo*entrySize, buf: ws[i].buf})
	}
	// The footer: with the last window when that ends close to it.
	var foot []byte
	if k := len(ws) - 1; k >= 0 && n-ws[k].lo <= int64(len(ws[k].buf))/entrySize+windowGap {
		buf := make([]byte, f.size-(indexAt+ws[k].lo*entrySize))
		reads[k].buf = buf
		foot = buf[len(buf)-footerSize:]
		ws[k].buf = buf[:len(ws[k].buf)]
	} else {
		foot = make([]byte, footerSize)
		reads = append(reads, rangeRead{off: f.size - footerSize, buf: foot})
	}
	if err := f.readAll(reads); err != nil {
		return nil, err
	}
	first, count, err := f.footer(foot)
	if err != nil {
		return nil, err
	}
	if count != n || first != ext.First {
		return nil, f.bad(fmt.Sprintf("it holds %d records from doc %d, not the %d from doc %d its name says", count, first, n, ext.First))
	}
	var spans []span
	for _, d := range wants {
		w := ws[d.w]
		// The entries' deltas increase: search the window for d's.
		i, found := sort.Find(int(d.hi-d.lo+1), func(j int) int {
			delta, _ := entry(w.buf, d.lo-w.lo+int64(j))
			return cmp.Compare(uint64(d.at), uint64(delta))
		})
		if !found {
			continue
		}
		e := d.lo - w.lo + int64(i)
		_, from := entry(w.buf, e)
		to := indexAt
		if w.lo+e+1 < n {
			_, to = entry(w.buf, e+1)
		}
		if from < 0 || to < from || to > indexAt {
			return nil, f.bad(fmt.Sprintf("record %d spans %d to %d of %d", w.lo+e, from, to, indexAt))
		}
		spans = append(spans, span{d.doc, from, to})
	}
	return spans, nil
}

// rangeRead is one read: buf filled from off.
type rangeRead struct {
	off int64
	buf []byte
}

// readAll does the reads, up to f.workers at once.
func (f *file) readAll(reads []rangeRead) error {
	errs := make([]error, len(reads))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(f.workers, len(reads)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				errs[k] = f.read(reads[k].buf, reads[k].off)
			}
		}()
	}
	for k := range reads {
		next <- k
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	return nil
}

// records reads the records of spans (in file order): runs of spans
// closer than mergeGap, each in one read.
func (f *file) records(spans []span) ([]packed.Features, error) {
	type run struct{ i, j int } // spans[i:j]
	var runs []run
	var reads []rangeRead
	for i := 0; i < len(spans); {
		j := i + 1
		for j < len(spans) && spans[j].from-spans[j-1].to <= mergeGap {
			j++
		}
		runs = append(runs, run{i, j})
		reads = append(reads, rangeRead{off: spans[i].from, buf: make([]byte, spans[j-1].to-spans[i].from)})
		i = j
	}
	if err := f.readAll(reads); err != nil {
		return nil, err
	}
	var out []packed.Features
	var err error
	for k, ru := range runs {
		buf := reads[k].buf
		for _, sp := range spans[ru.i:ru.j] {
			rec := buf[sp.from-spans[ru.i].from : sp.to-spans[ru.i].from]
			before := len(out)
			if out, err = packed.AppendFeatures(out, rec); err != nil {
				return nil, fmt.Errorf("%s: %w", f.name, err)
			}
			if len(out) != before+1 || out[before].Doc != sp.doc {
				return nil, f.bad(fmt.Sprintf("the index's span of doc %d is not its record", sp.doc))
			}
		}
	}
	return out, nil
}

// readAt fills p from r at off: an io.ReaderAt may report io.EOF with p
// full when p ends the file.
func readAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}
