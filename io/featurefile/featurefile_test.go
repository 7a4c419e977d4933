package featurefile

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/shuffle/packed"
)

// write makes a file of n records with random features (some documents
// have none and are skipped) and returns its name and the records it
// holds, as the test made them.
func write(t *testing.T, n int, rng *rand.Rand) (string, []packed.Features) {
	t.Helper()
	var b Builder
	var want []packed.Features
	doc := uint64(1 << 40)
	for range n {
		doc += 1 + rng.Uint64N(3)
		x := packed.Features{Doc: doc, N: rng.Uint32N(1000), K: rng.Uint32N(4)}
		for range rng.IntN(40) {
			x.Values = append(x.Values, rng.Uint64())
		}
		has := rng.IntN(10) > 0
		b.Append(doc, func(buf []byte) ([]byte, bool) {
			buf = append(buf, "junk"...) // what a record-less append may leave
			if !has {
				return buf, false
			}
			return x.Append(buf[:len(buf)-4]), true
		})
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
	return name, want
}

func TestReadWhatWasWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	// 9,000 records: an index larger than one tail read.
	for _, n := range []int{1, 7, 300, 9000} {
		name, all := write(t, n, rng)
		for trial := range 20 {
			var docs []uint64
			var want []packed.Features
			for _, x := range all {
				if trial == 0 || rng.IntN(1+trial) == 0 {
					docs = append(docs, x.Doc)
					want = append(want, x)
				} else if rng.IntN(5) == 0 {
					docs = append(docs, x.Doc+1<<30) // not in the file
				}
			}
			sortUnique(&docs)
			got, err := Read(context.Background(), name, docs)
			if err != nil {
				t.Fatal(err)
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
		"short":    "NDF",
		"nofooter": "some other file's bytes",
		"huge":     "\xff\xff\xff\x00NDF1",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Read(context.Background(), path, []uint64{1})
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the file", name, err)
		}
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
	local, all := write(t, 40000, rng)
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
	var recordBytes int64
	for _, x := range all {
		if rng.IntN(50) == 0 {
			docs = append(docs, x.Doc)
			want = append(want, x)
			recordBytes += int64(len(x.Append(nil)))
		}
	}
	got, err := Read(ctx, name, docs)
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
	// The index is read whole: an entry for every record in the file.
	limit := recordBytes + tailRead + int64(len(all))*entrySize + int64(len(docs))*mergeGap
	t.Logf("file %d bytes, %d records asked (%d bytes): the store served %d bytes in %d requests (limit %d)",
		len(data), len(docs), recordBytes, reads.Bytes, reads.Requests, limit)
	if reads.Bytes < recordBytes || reads.Bytes > limit {
		t.Errorf("the store served %d bytes for %d bytes of records, want at most %d (records, tail, index and gaps)", reads.Bytes, recordBytes, limit)
	}
	if reads.Bytes > int64(len(data))/4 {
		t.Errorf("the store served %d bytes of a %d-byte file for 2%% of its records", reads.Bytes, len(data))
	}
}
