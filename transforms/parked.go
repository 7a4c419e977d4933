package transforms

import (
	"bytes"
	"context"
	"fmt"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/shuffle/packed"
)

// Parked sketches. The representatives' sketches are read on their doc
// partitions by phase 4 (the sketches table, each cluster's resemblances),
// the super-shingle join and lost and found, long after Identical made
// them. Sent through those steps' shuffles, each sketch crossed the
// network once more per reader, and Prism held them in every grouping
// bundle on the way. Instead Identical writes each partition's sketches
// to one file under the run's temporary folder and sends only the file's
// name: what reads the partition reads the file (one whole-file read; a
// worker shares no disk with the launcher, but the temporary folder is on
// the output's filesystem, which every worker reaches, as the features
// for verification are). Phase 4 parks the sketches of the documents in
// a component the same way (stem "clustered"), for the members writer and
// lost and found, which need no others.

var (
	parkedFiles = beam.NewCounter(Namespace, "parked_sketch_files")
	parkedBytes = beam.NewCounter(Namespace, "parked_sketch_bytes")
)

// parkedDir is the folder under a run's temporary folder that holds the
// parked sketches.
const parkedDir = "parked"

// parkedMark begins an element of a sketch stream that names a parked file
// rather than holding a sealed batch. No sealed batch begins with it: a
// zstd frame begins with its magic number's first byte, 0x28.
const parkedMark = "\x00parked:"

// sendSketches sends the sketches of doc partition part: with a tempDir,
// written to the partition's file of the stream named stem there
// (parkSketches) and the file's name emitted; the sketches being sorted by
// doc ID, a retried or doubled bundle writes the same bytes under the same
// name. Without one, as sealed batches.
func sendSketches(ctx context.Context, tempDir, stem string, part int, sks []packed.Sketch, emit func(int, []byte)) error {
	if len(sks) == 0 {
		return nil
	}
	if tempDir == "" {
		return eachSealedBatch(sks, func(sealed []byte) error {
			emit(part, sealed)
			return nil
		})
	}
	name := store.Join(tempDir, parkedDir, fmt.Sprintf("%s-%05d", stem, part))
	if err := parkSketches(ctx, name, sks); err != nil {
		return fmt.Errorf("parking the sketches of partition %d: %w", part, err)
	}
	emit(part, []byte(parkedMark+name))
	return nil
}

// parkSketches writes sks to the file name, sealed a batch at a time: the
// file is the batches' zstd frames one after another, which packed.Open
// reads as one.
func parkSketches(ctx context.Context, name string, sks []packed.Sketch) error {
	w, err := store.OpenWrite(ctx, name)
	if err != nil {
		return err
	}
	defer w.Abort()
	var n int64
	if err := eachSealedBatch(sks, func(sealed []byte) error {
		n += int64(len(sealed))
		_, err := w.Write(sealed)
		return err
	}); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	addCount(ctx, parkedFiles, 1) // from phase 4's lanes too
	addCount(ctx, parkedBytes, n)
	return nil
}

// eachSealedBatch encodes sks in batches of about maxBatchBytes and
// passes each, sealed (in a slice of its own), to fn.
func eachSealedBatch(sks []packed.Sketch, fn func(sealed []byte) error) error {
	var raw []byte
	for i, sk := range sks {
		raw = sk.Append(raw)
		if len(raw) >= maxBatchBytes || i == len(sks)-1 {
			if err := fn(packed.Seal(nil, raw)); err != nil {
				return err
			}
			raw = raw[:0]
		}
	}
	return nil
}

// readSketches reads a partition's sketch stream (of sendSketches, or
// sealed batches from elsewhere, such as ReadSketches) and returns all its
// sketches: decodeBatches over the stream with each parked file's name
// replaced by the file's sealed batches.
func readSketches(ctx context.Context, it func(*[]byte) bool) ([]packed.Sketch, error) {
	var readErr error
	unparked := func(elem *[]byte) bool {
		if !it(elem) {
			return false
		}
		if name, ok := bytes.CutPrefix(*elem, []byte(parkedMark)); ok {
			if *elem, readErr = store.ReadFile(ctx, string(name)); readErr != nil {
				return false
			}
		}
		return true
	}
	all, err := decodeBatches(unparked, packed.AppendSketches)
	if readErr != nil {
		return nil, fmt.Errorf("reading parked sketches: %w", readErr)
	}
	return all, err
}
