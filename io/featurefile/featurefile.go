// Package featurefile writes and reads the files of documents' features
// that phase 1 leaves for verification: packed.Features records in
// document order, then an index of where each begins, so that a worker
// that needs a few documents of a file reads those records and the index
// (ranged reads on an object store), not the file.
//
// The layout, all little-endian:
//
//	record 0 … record n-1         packed.Features encodings
//	doc 0, offset 0 … doc n-1, offset n-1   8 + 8 bytes each
//	n                             4 bytes
//	"NDF1"                        4 bytes
package featurefile

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/shuffle/packed"
)

var le = binary.LittleEndian

const (
	magic      = "NDF1"
	footerSize = 8
	entrySize  = 16
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
// increasing order.
func (b *Builder) Append(doc uint64, appendRecord func([]byte) ([]byte, bool)) {
	n := len(b.data)
	data, ok := appendRecord(b.data)
	if !ok {
		b.data = data[:n]
		return
	}
	if len(b.docs) == 0 {
		b.first = doc
	}
	b.data = data
	b.docs = append(b.docs, doc)
	b.offs = append(b.offs, uint64(n))
}

// Len is the size of the records gathered.
func (b *Builder) Len() int { return len(b.data) }

// Empty reports whether the builder holds no record.
func (b *Builder) Empty() bool { return len(b.docs) == 0 }

// First is the first document gathered.
func (b *Builder) First() uint64 { return b.first }

// Bytes returns the file: the records, their index and the footer. It
// reuses the builder's buffer: valid until the next Append or Reset.
func (b *Builder) Bytes() []byte {
	out := b.data
	for i, doc := range b.docs {
		out = le.AppendUint64(out, doc)
		out = le.AppendUint64(out, b.offs[i])
	}
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

// tailRead is how much of a file's end one read takes, to get the footer
// and, for a file of up to about 4,000 records, its whole index.
const tailRead = 64 << 10

// mergeGap is the largest gap between two records needed that one read
// spans rather than two: about one record. On a local file a read costs
// about as much as copying 4 KB more (reading through 256 KB gaps on local
// disk read 2.9 GB to take 70 MB of records on a gigabyte of text, most of
// verify's time). On an object store the reads go out several at once
// (inFlight), so a request's latency is shared and what a gap costs is its
// bytes, in transfer and egress: 256 KB gaps read 8.4 GB of features for
// 215 MB of records on the Unicode gigabyte, 16 KB gaps 297 MB.
const mergeGap = 4 << 10

// inFlight is how many reads of one file go out at once.
const inFlight = 8

// directReader reads exactly the bytes asked, past any cache (an object
// store's ReaderAt, whose blocks would fetch 8 MiB for a 4 KB record).
type directReader interface {
	ReadDirect(p []byte, off int64) error
}

// Read returns the records of docs (sorted, distinct) that the file name
// holds, in document order; documents it does not hold are left out. It
// reads the index and the records needed, merging close ones into one
// read.
func Read(ctx context.Context, name string, docs []uint64) ([]packed.Features, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	r, size, err := store.OpenReaderAt(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	bad := func(what string) error { return fmt.Errorf("%s: not a features file: %s", name, what) }
	if size < footerSize {
		return nil, bad("too short")
	}
	read := func(p []byte, off int64) error { return readAt(r, p, off) }
	workers := 1
	if d, ok := r.(directReader); ok {
		read, workers = d.ReadDirect, inFlight
	}
	tail := make([]byte, min(size, tailRead))
	if err := read(tail, size-int64(len(tail))); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if string(tail[len(tail)-4:]) != magic {
		return nil, bad("no footer")
	}
	n := int64(le.Uint32(tail[len(tail)-footerSize:]))
	indexAt := size - footerSize - n*entrySize
	if indexAt < 0 {
		return nil, bad("index larger than the file")
	}
	index := tail[:len(tail)-footerSize]
	if tailAt := size - int64(len(tail)); indexAt >= tailAt {
		index = index[indexAt-tailAt:]
	} else {
		index = make([]byte, n*entrySize)
		if err := read(index, indexAt); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	// The spans of the records wanted, in file order.
	type span struct {
		doc      uint64
		from, to int64
	}
	var spans []span
	for i := range n {
		doc := le.Uint64(index[i*entrySize:])
		if _, ok := slices.BinarySearch(docs, doc); !ok {
			continue
		}
		from, to := int64(le.Uint64(index[i*entrySize+8:])), indexAt
		if i+1 < n {
			to = int64(le.Uint64(index[(i+1)*entrySize+8:]))
		}
		if from < 0 || to < from || to > indexAt {
			return nil, bad(fmt.Sprintf("record %d spans %d to %d of %d", i, from, to, indexAt))
		}
		spans = append(spans, span{doc, from, to})
	}
	// The reads: runs of spans closer than the gap, each read in one.
	type run struct {
		i, j int // spans[i:j]
		buf  []byte
		err  error
	}
	var runs []run
	for i := 0; i < len(spans); {
		j := i + 1
		for j < len(spans) && spans[j].from-spans[j-1].to <= mergeGap {
			j++
		}
		runs = append(runs, run{i: i, j: j})
		i = j
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(runs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				ru := &runs[k]
				ru.buf = make([]byte, spans[ru.j-1].to-spans[ru.i].from)
				ru.err = read(ru.buf, spans[ru.i].from)
			}
		}()
	}
	for k := range runs {
		next <- k
	}
	close(next)
	wg.Wait()
	var out []packed.Features
	for _, ru := range runs {
		if ru.err != nil {
			return nil, fmt.Errorf("%s: %w", name, ru.err)
		}
		for _, sp := range spans[ru.i:ru.j] {
			rec := ru.buf[sp.from-spans[ru.i].from : sp.to-spans[ru.i].from]
			before := len(out)
			if out, err = packed.AppendFeatures(out, rec); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if len(out) != before+1 || out[before].Doc != sp.doc {
				return nil, bad(fmt.Sprintf("the index's span of doc %d is not its record", sp.doc))
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
