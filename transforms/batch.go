package transforms

import (
	"context"
	"maps"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/shuffle/packed"
)

// The batching every shuffle goes through: records packed per partition,
// sealed, emitted at a bounded size, and opened again on the other side.

// maxBatchBytes bounds one shuffled batch: large enough that per-element
// costs vanish, well under the 4 MB gRPC message limit runners impose.
const maxBatchBytes = 1 << 20

// maxBuffered bounds what one batcher holds across its partitions: a
// batcher that lives for a whole bundle must not grow with the bundle. A
// full flush emits one batch per partition, so the bound grows with the
// partition count, 128 KiB per partition (at least 1 MiB): batches
// average 128 KiB or more whatever the count, so a stream of D bytes makes
// about D / 128 KiB elements, linear in the data, not D × partitions. Up
// to maxBufferedBytes, where memory wins: past 512 partitions (about
// 512 GiB of Parquet under AutoPartitions, or a cluster of 256 slots) the
// batches of a full flush shrink instead (39 KiB on average at 1,691
// partitions, so 3.3 times the elements), and a DoFn's buffers stay within
// a few times 64 MiB whatever the partition count (sketchFn's four
// batchers and its docs rows: at most 320 MiB; at 1,691 partitions they
// could reach 1.4 GiB before).
func maxBuffered(partitions int) int {
	return min(max(1<<20, partitions*(128<<10)), maxBufferedBytes)
}

// maxBufferedBytes is the most any batcher holds (see maxBuffered).
const maxBufferedBytes = 64 << 20

// batcher packs records into per-partition batches and emits each batch when
// it fills and at the end, sealed (compressed, see packed.Seal): every batch
// goes into a shuffle, whose reader opens it with eachBatch. It counts what
// it emits, and the manifest reports elements and sealed bytes shuffled per
// stream (shuffled_<name>_elements, shuffled_<name>_bytes).
//
// The number of elements a shuffle carries is what costs (microseconds and
// a kilobyte of runner memory each), and a batcher emits at least one per
// partition it touches. A batcher per element would emit up to
// elements × partitions batches, which grows faster than the input when
// the partition count grows with it; the DoFns of the big streams keep one
// batcher per bundle instead (bind it to each element's emitter, flush in
// FinishBundle), so the count is bundles × partitions plus one per full
// batch, and maxBuffered keeps the memory bounded.
type batcher struct {
	bufs            [][]byte
	pack            func(dst, batch []byte) []byte // if set, re-encodes a batch before it is sealed (packed.PackPairs)
	buffered, limit int
	emitFn          func(int, []byte)
	elements, bytes beam.Counter
	ctx             context.Context
}

func newBatcher(ctx context.Context, name string, partitions int, emit func(int, []byte)) *batcher {
	b := &batcher{bufs: make([][]byte, partitions), limit: maxBuffered(partitions),
		elements: beam.NewCounter(Namespace, "shuffled_"+name+"_elements"),
		bytes:    beam.NewCounter(Namespace, "shuffled_"+name+"_bytes")}
	b.bind(ctx, emit)
	return b
}

// bind makes the batcher emit through emit from now on: the emitter of the
// element (or of FinishBundle) being processed.
func (b *batcher) bind(ctx context.Context, emit func(int, []byte)) {
	b.ctx, b.emitFn = ctx, emit
}

// bundleBatcher is the batcher a DoFn keeps for its bundle in *b: made at
// the bundle's first element, bound to this element's emitter. The DoFn
// sets *b to nil in StartBundle (a retried bundle starts afresh) and
// hands it to finishBatcher in FinishBundle.
func bundleBatcher(b **batcher, ctx context.Context, name string, partitions int, emit func(int, []byte)) *batcher {
	if *b == nil {
		*b = newBatcher(ctx, name, partitions, emit)
	}
	(*b).bind(ctx, emit)
	return *b
}

// bundleOut is the batcher of a DoFn with one keyed output, kept for the
// bundle: a DoFn embeds it, takes the batcher with bundle in
// ProcessElement, and gets its StartBundle and FinishBundle from it.
type bundleOut struct{ out *batcher }

// StartBundle forgets any batcher: a retried bundle starts afresh.
func (b *bundleOut) StartBundle(ctx context.Context, emit func(int, []byte)) { b.out = nil }

// FinishBundle emits what the bundle's batcher still holds.
func (b *bundleOut) FinishBundle(ctx context.Context, emit func(int, []byte)) {
	finishBatcher(&b.out, ctx, emit)
}

// bundle is the bundle's batcher, bound to this element's emitter.
func (b *bundleOut) bundle(ctx context.Context, name string, partitions int, emit func(int, []byte)) *batcher {
	return bundleBatcher(&b.out, ctx, name, partitions, emit)
}

// finishBatcher emits what the bundle's batcher in *b still holds through
// FinishBundle's emitter, and forgets it.
func finishBatcher(b **batcher, ctx context.Context, emit func(int, []byte)) {
	if *b != nil {
		(*b).bind(ctx, emit)
		(*b).flush()
		*b = nil
	}
}

func (b *batcher) emit(k int, v []byte) {
	if b.pack != nil {
		v = b.pack(nil, v)
	}
	v = packed.Seal(nil, v)
	b.elements.Inc(b.ctx, 1)
	b.bytes.Inc(b.ctx, int64(len(v)))
	b.emitFn(k, v)
}

// add appends a record to partition p, emitting the batch first if the
// record would overflow it, and every batch if the batcher holds too much.
func (b *batcher) add(p int, rec interface{ Append([]byte) []byte }) {
	before := len(b.bufs[p])
	b.bufs[p] = rec.Append(b.bufs[p])
	b.buffered += len(b.bufs[p]) - before
	if len(b.bufs[p]) > maxBatchBytes && before > 0 {
		b.emit(p, b.bufs[p][:before])
		// emit sealed a copy, so the buffer is free again.
		b.bufs[p] = append(b.bufs[p][:0], b.bufs[p][before:]...)
		b.buffered -= before
	}
	if b.buffered > b.limit {
		b.flush()
	}
}

func (b *batcher) flush() {
	for p, buf := range b.bufs {
		if len(buf) > 0 {
			b.emit(p, buf)
			b.bufs[p] = nil // a bundle's batcher must not keep partitions × 1 MiB
		}
	}
	b.buffered = 0
}

// eachBatch calls fn with every batch of a shuffled stream, opened (the
// batcher and emitDocRows seal what they send through a shuffle, see
// packed.Seal). fn must not keep b: its buffer is reused.
func eachBatch(it func(*[]byte) bool, fn func(b []byte) error) error {
	var sealed, buf []byte
	for it(&sealed) {
		var err error
		if buf, err = packed.Open(buf[:0], sealed); err != nil {
			return err
		}
		if err := fn(buf); err != nil {
			return err
		}
	}
	return nil
}

// decodeBatches opens every batch of a shuffled stream and decodes its
// records with decode (one of packed's Append functions, or tables.Decode),
// returning them all.
func decodeBatches[T any](it func(*[]byte) bool, decode func([]T, []byte) ([]T, error)) ([]T, error) {
	var all []T
	err := eachBatch(it, func(b []byte) error {
		var err error
		all, err = decode(all, b)
		return err
	})
	return all, err
}

// holdSealed reads a shuffled stream's sealed batches and keeps them, for
// a reader that goes over them more than once (the stream is read once).
func holdSealed(it func(*[]byte) bool) ([][]byte, error) {
	var held [][]byte
	var b []byte
	for it(&b) {
		held = append(held, b)
		b = nil // the next batch in a slice of its own
	}
	return held, nil
}

// sortHeld is sortBatches over held batches (holdSealed), adding only the
// records keep takes: each batch's records are decoded into a scratch
// slice, and those kept copied into a slice of their own for s.
func sortHeld[T any](held [][]byte, decode func([]T, []byte) ([]T, error), keep func(*T) bool, s *packed.RangeSorter[T]) error {
	var buf []byte
	var scratch []T
	for _, b := range held {
		var err error
		if buf, err = packed.Open(buf[:0], b); err != nil {
			return err
		}
		if scratch, err = decode(scratch[:0], buf); err != nil {
			return err
		}
		n := 0
		for i := range scratch {
			if keep(&scratch[i]) {
				n++
			}
		}
		if n == 0 {
			continue
		}
		recs := make([]T, 0, n)
		for i := range scratch {
			if keep(&scratch[i]) {
				recs = append(recs, scratch[i])
			}
		}
		s.Add(recs)
	}
	return nil
}

// sortBatches opens every batch of a shuffled stream, decodes its records
// with decode into a slice of their own (of size records, when they have
// a fixed size; 0 lets the slice grow) and adds them to s, which sorts
// them a key range at a time: a partition held once, not grown by append
// and copied again by its sort (see packed.RangeSorter).
func sortBatches[T any](it func(*[]byte) bool, decode func([]T, []byte) ([]T, error), size int, s *packed.RangeSorter[T]) error {
	return eachBatch(it, func(b []byte) error {
		var recs []T
		if size > 0 {
			recs = make([]T, 0, len(b)/size)
		}
		recs, err := decode(recs, b)
		s.Add(recs)
		return err
	})
}

var (
	countedElements = beam.NewCounter(Namespace, "shuffled_counted_pairs_elements")
	countedBytes    = beam.NewCounter(Namespace, "shuffled_counted_pairs_bytes")
)

// emitPairBatches emits a pair partition's counted pairs, given in
// Pair.Append's layout, as batches of at most maxBatchBytes of them, each
// packed (packed.PackPairs) and sealed: the form in which phase 3 and the
// super-shingle candidates hand pairs to Verify and phase 4, and an update
// to IndexPairs. A partition of a pair-heavy crawl is tens of MB, which a
// runner holds and moves several times over as one element.
func emitPairBatches(ctx context.Context, part int, raw []byte, emit func(int, []byte)) {
	const chunk = maxBatchBytes / packed.PairSize * packed.PairSize
	for len(raw) > 0 {
		n := min(chunk, len(raw))
		sealed := packed.Seal(nil, packed.PackPairs(nil, raw[:n]))
		countedElements.Inc(ctx, 1)
		countedBytes.Inc(ctx, int64(len(sealed)))
		emit(part, sealed)
		raw = raw[n:]
	}
}

// openPairBatch decodes a batch emitPairBatches made.
func openPairBatch(b []byte) ([]packed.Pair, error) {
	raw, err := packed.Open(nil, b)
	if err != nil {
		return nil, err
	}
	return packed.AppendPackedPairs(nil, raw)
}

// keyedBatcher is a batcher whose keys have no bound (an input slice, not
// a partition): it keeps a batch per key met, under the same limits, and
// emits sealed batches with the same counters. A DoFn keeps one for its
// bundle (bundleKeyed).
type keyedBatcher struct {
	b    batcher
	bufs map[int][]byte
}

func (k *keyedBatcher) add(key int, rec interface{ Append([]byte) []byte }) {
	buf := k.bufs[key]
	before := len(buf)
	buf = rec.Append(buf)
	k.b.buffered += len(buf) - before
	if len(buf) > maxBatchBytes && before > 0 {
		k.b.emit(key, buf[:before])
		buf = append(buf[:0], buf[before:]...)
		k.b.buffered -= before
	}
	k.bufs[key] = buf
	if k.b.buffered > k.b.limit {
		k.flush()
	}
}

// flush emits every batch, in key order, so that a bundle's output does
// not depend on map order.
func (k *keyedBatcher) flush() {
	for _, key := range slices.Sorted(maps.Keys(k.bufs)) {
		k.b.emit(key, k.bufs[key])
	}
	clear(k.bufs)
	k.b.buffered = 0
}

// bundleKeyed is the keyed batcher a DoFn keeps for its bundle in *k, as
// bundleBatcher is for partitions: made at the bundle's first element,
// bound to this element's emitter; the DoFn sets *k to nil in StartBundle
// and hands it to finishKeyed in FinishBundle.
func bundleKeyed(k **keyedBatcher, ctx context.Context, name string, emit func(int, []byte)) *keyedBatcher {
	if *k == nil {
		nb := newBatcher(ctx, name, 0, emit)
		*k = &keyedBatcher{b: *nb, bufs: map[int][]byte{}}
	}
	(*k).b.bind(ctx, emit)
	return *k
}

// finishKeyed emits what the bundle's keyed batcher in *k still holds
// through FinishBundle's emitter, and forgets it.
func finishKeyed(k **keyedBatcher, ctx context.Context, emit func(int, []byte)) {
	if *k != nil {
		(*k).b.bind(ctx, emit)
		(*k).flush()
		*k = nil
	}
}
