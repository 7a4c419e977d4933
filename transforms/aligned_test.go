package transforms

import (
	"context"
	"slices"
	"testing"

	"github.com/neardup/neardup/shuffle/packed"
)

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		name       string
		partitions int
		want       Shard
		carried    string
	}{
		{"out/postings/part-00003.parquet", 8, Shard{Path: "out/postings/part-00003.parquet", Part: 3, Of: 8}, "part-00003-of-00008-n000002.parquet"},
		{"out/postings/part-00001-of-00004-n000001.parquet", 8, Shard{Path: "out/postings/part-00001-of-00004-n000001.parquet", Part: 1, Of: 4}, "part-00001-of-00004-n000001.parquet"},
	} {
		got, err := parseShard(c.name, c.partitions, 2)
		if n := got.CarriedName; n != c.carried {
			t.Errorf("%q carried as %q, want %q", c.name, n, c.carried)
		}
		if got.CarriedName = ""; err != nil || got != c.want {
			t.Errorf("parseShard(%q, %d) = %+v, %v; want %+v", c.name, c.partitions, got, err, c.want)
		}
	}
	for _, bad := range []struct {
		name       string
		partitions int
	}{
		{"part-00008.parquet", 8},                  // no such partition
		{"part-00001-of-00003-n000001.parquet", 8}, // 8 is no multiple of 3
		{"other.parquet", 8},
	} {
		if sh, err := parseShard(bad.name, bad.partitions, 2); err == nil {
			t.Errorf("parseShard(%q, %d) = %+v, want an error", bad.name, bad.partitions, sh)
		}
	}
}

// TestReadAligned: partition p of a multiple of a shard's count reads the
// shard with p mod count and keeps its own records only; every record is
// read by exactly one partition.
func TestReadAligned(t *testing.T) {
	const of, parts = 3, 12
	var keys []uint64
	for k := uint64(0); k < 1000; k++ {
		keys = append(keys, k)
	}
	shards := make([]Shard, of)
	byShard := map[string][]uint64{}
	for q := range shards {
		shards[q] = Shard{Path: string(rune('a' + q)), Part: q, Of: of}
	}
	for _, k := range keys {
		q := packed.Partition(k, of)
		byShard[shards[q].Path] = append(byShard[shards[q].Path], k)
	}
	read := func(_ context.Context, name string) ([]uint64, error) { return slices.Clone(byShard[name]), nil }
	partOf := func(k *uint64, n int) int { return packed.Partition(*k, n) }
	var all []uint64
	for p := range parts {
		got, err := readAligned(context.Background(), shards, p, parts, read, partOf)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range got {
			if packed.Partition(k, parts) != p {
				t.Fatalf("partition %d read key %d of partition %d", p, k, packed.Partition(k, parts))
			}
		}
		all = append(all, got...)
	}
	slices.Sort(all)
	if !slices.Equal(all, keys) {
		t.Fatalf("the partitions read %d keys of %d, or some twice", len(all), len(keys))
	}
}
