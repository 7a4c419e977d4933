package featurefile

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/shuffle/packed"
)

// write makes a file of n records with random features (some documents
// have none and are skipped) and returns its name, the records it holds,
// as the test made them, and its Extent as the test counts it.
// One row in missing has no record (0: none).
func write(t *testing.T, n int, rng *rand.Rand, missing int) (string, []packed.Features, Extent) {
	t.Helper()
	var b Builder
	var want []packed.Features
	defer func() {
		if b.Count() != len(want) {
			t.Fatalf("Count %d, want %d", b.Count(), len(want))
		}
	}()
	doc := uint64(1 << 40)
	for range n {
		doc++
		x := packed.Features{Doc: doc, N: rng.Uint32N(1000), K: rng.Uint32N(4)}
		for range rng.IntN(40) {
			x.Values = append(x.Values, rng.Uint64())
		}
		has := missing == 0 || rng.IntN(missing) > 0
		if err := b.Append(doc, func(buf []byte) ([]byte, bool) {
			buf = append(buf, "junk"...) // what a record-less append may leave
			if !has {
				return buf, false
			}
			return x.Append(buf[:len(buf)-4]), true
		}); err != nil {
			t.Fatal(err)
		}
		if has {
			want = append(want, x)
		}
	}
	name := filepath.Join(t.TempDir(), "f.features")
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(want) > 0 && b.First() != want[0].Doc {
		t.Fatalf("First %d, want %d", b.First(), want[0].Doc)
	}
	var ext Extent
	if len(want) > 0 {
		ext = Extent{First: want[0].Doc, Count: len(want), Span: want[len(want)-1].Doc - want[0].Doc + 1}
	}
	if b.Extent() != ext {
		t.Fatalf("Extent %+v, want %+v", b.Extent(), ext)
	}
	return name, want, ext
}

func TestReadWhatWasWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// Files with rows lacking a record often (wide windows of the index),
	// rarely, and never.
	for _, c := range []struct{ n, missing int }{{1, 10}, {7, 10}, {300, 10}, {9000, 10}, {9000, 2}, {9000, 100}, {2000, 0}} {
		n := c.n
		name, all, ext := write(t, n, rng, c.missing)
		for trial := range 20 {
			var docs []uint64
			var want []packed.Features
			for _, x := range all {
				if trial == 0 || rng.IntN(1+trial) == 0 {
					docs = append(docs, x.Doc)
					want = append(want, x)
				} else if rng.IntN(5) == 0 {
					docs = append(docs, x.Doc+1<<30) // not in the file
				} else if rng.IntN(5) == 0 && x.Doc > 1<<40+1 {
					docs = append(docs, x.Doc-1) // a row without a record, or another's
				}
			}
			sortUnique(&docs)
			got, err := Read(context.Background(), name, ext, docs)
			if err != nil {
				t.Fatal(err)
			}
			want = want[:0]
			for _, x := range all {
				if _, ok := slices.BinarySearch(docs, x.Doc); ok {
					want = append(want, x)
				}
			}
			if len(got) != len(want) {
				t.Fatalf("n=%d: read %d records, want %d", n, len(got), len(want))
			}
			for i := range want {
				if got[i].Doc != want[i].Doc || got[i].N != want[i].N || got[i].K != want[i].K || !equalValues(got[i].Values, want[i].Values) {
					t.Fatalf("n=%d: record %d is %+v, want %+v", n, i, got[i], want[i])
				}
			}
		}
	}
}

func equalValues(a, b []uint64) bool {
	return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b))
}

func sortUnique(docs *[]uint64) {
	d := *docs
	for i := 1; i < len(d); i++ { // insertion sort: the test's own
		for j := i; j > 0 && d[j] < d[j-1]; j-- {
			d[j], d[j-1] = d[j-1], d[j]
		}
	}
	out := d[:0]
	for i, x := range d {
		if i == 0 || x != d[i-1] {
			out = append(out, x)
		}
	}
	*docs = out
}

func TestReadRefusesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{
		"short":     "NDF",
		"nofooter":  "some other file's bytes",
		"huge":      "\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\x00NDF2",
		"oldformat": "\x00\x00\x00\x00NDF1",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(context.Background(), path, Extent{First: 1, Count: 1, Span: 1}, []uint64{1})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
	}
	// A file whose name says another count than it holds.
	var b Builder
	for doc := uint64(10); doc < 13; doc++ {
		if err := b.Append(doc, func(buf []byte) ([]byte, bool) { return packed.Features{Doc: doc}.Append(buf), true }); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "three")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, wrong := range []Extent{{First: 10, Count: 4, Span: 4}, {First: 9, Count: 3, Span: 4}} {
		if _, err := Read(context.Background(), path, wrong, []uint64{11}); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("a file of 3 records from doc 10 read as %+v: %v", wrong, err)
		}
	}
	if got, err := Read(context.Background(), path, b.Extent(), []uint64{11}); err != nil || len(got) != 1 || got[0].Doc != 11 {
		t.Errorf("told its extent: %+v, %v", got, err)
	}
}

// TestAppendRefusesWhatTheIndexCannotHold: a document 2^32 or more after
// the file's first has no 32-bit delta; the builder says so rather than
// writing an index that names another document.
func TestAppendRefusesWhatTheIndexCannotHold(t *testing.T) {
	var b Builder
	rec := func(doc uint64) func([]byte) ([]byte, bool) {
		return func(buf []byte) ([]byte, bool) { return packed.Features{Doc: doc}.Append(buf), true }
	}
	if err := b.Append(5, rec(5)); err != nil {
		t.Fatal(err)
	}
	if err := b.Append(5+1<<32-1, rec(5+1<<32-1)); err != nil {
		t.Fatalf("the largest delta refused: %v", err)
	}
	if err := b.Append(5+1<<32, rec(5+1<<32)); err == nil {
		t.Fatal("a delta of 2^32 taken")
	}
	if b.Count() != 2 {
		t.Fatalf("Count %d after a refused record, want 2", b.Count())
	}
}

// TestReadsOnlyWhatItNeeds: on an object store, a sparse read of a
// features file fetches the records asked for, the file's tail and gaps
// of at most mergeGap between them, not the blocks of a cached reader
// (8 MiB ones fetched 8.4 GB of features for 215 MB of records on a
// gigabyte of text). The bytes are the store's own count.
func TestReadsOnlyWhatItNeeds(t *testing.T) {
	srv := s3test.Start(t, "features")
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	// A file as phase 1 writes them (4 MB, some 2,400 records of a verify
	// slice), one row in a hundred without a record (empty and too short
	// pages), of which a partner slice's verifier wants a few records.
	local, all, ext := write(t, 2400, rng, 100)
	data, err := os.ReadFile(local)
	if err != nil {
		t.Fatal(err)
	}
	const name = "s3://features/run/f.features"
	if err := srv.Put(ctx, name, data); err != nil {
		t.Fatal(err)
	}
	var docs []uint64
	var want []packed.Features
	var recordBytes, gapBytes, at, lastEnd int64
	for _, x := range all {
		size := int64(len(x.Append(nil)))
		if rng.IntN(200) == 0 {
			docs = append(docs, x.Doc)
			want = append(want, x)
			recordBytes += size
			// Records closer than mergeGap are read in one, the gap too.
			if len(docs) > 1 && at-lastEnd <= mergeGap {
				gapBytes += at - lastEnd
			}
			lastEnd = at + size
		}
		at += size
	}
	got, err := Read(ctx, name, ext, docs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Doc != want[i].Doc || !equalValues(got[i].Values, want[i].Values) {
			t.Fatalf("record %d is %+v, want %+v", i, got[i], want[i])
		}
	}
	reads := srv.Reads()["features/run/f.features"]
	// Told the extent, the index is read where each document's entry can
	// be: its window of 8-byte entries, as wide as the rows without a
	// record, and one more; then the footer's 16 bytes.

	// Windows closer than windowGap entries are read in one, the gap too.
	window := int64(ext.Span) - int64(ext.Count) + 2 + windowGap
	index := reads.Bytes - recordBytes - gapBytes
	t.Logf("file %d bytes, %d records asked (%d bytes, %d of gaps between them): the store served %d bytes in %d requests, %d of index and footer (at most %d)",
		len(data), len(docs), recordBytes, gapBytes, reads.Bytes, reads.Requests, index, int64(len(docs))*window*8+16)
	if index < 16 || index > int64(len(docs))*window*8+16 {
		t.Errorf("the store served %d bytes of index and footer, want at most %d (each document's window, the footer)", index, int64(len(docs))*window*8+16)
	}
	if whole := int64(len(all)) * 8; index > whole/2 {
		t.Errorf("the store served %d bytes of index, not far below the whole index's %d", index, whole)
	}
	if reads.Bytes > int64(len(data))/4 {
		t.Errorf("the store served %d bytes of a %d-byte file for 2%% of its records", reads.Bytes, len(data))
	}
}
