package transforms

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

// Reading stored tables: whole shards, one per element, where a run reads
// an earlier output's table (recluster, update); and, in an update, the
// index's rows of one partition, where a keyed step meets them (see
// IndexTables).

func init() {
	{
		fn := &readSketchesFn{}
		register.Function2x0(fn.StartBundle)
		register.Function3x1(fn.ProcessElement)
		register.Function2x0(fn.FinishBundle)
		registerDoFn(fn)
	}
}

// spread makes one element of each of shards (table shards or input
// files, any list), redistributed so that every worker reads some.
func spread(s beam.Scope, shards any) beam.PCollection {
	return beam.Reshuffle(s, beam.CreateList(s, shards))
}

// readSketchesFn reads sketches shards into packed.Sketch batches: each
// representative's whole record keyed by its doc partition (ReadSketches)
// or, with KeysOnly, its identity key and doc ID only, keyed by the key's
// partition (IndexKeys).
type readSketchesFn struct {
	Partitions int
	KeysOnly   bool
	bundleOut  // its batcher, kept for the bundle (see batcher)
}

func (f *readSketchesFn) ProcessElement(ctx context.Context, shard string, emit func(int, []byte)) error {
	defer outputTime.done(ctx, time.Now())
	read, name := tables.ReadSketches, "rep_sketches"
	if f.KeysOnly {
		read, name = tables.ReadIdentityKeys, "index_keys" // the two columns only
	}
	rows, err := read(ctx, shard)
	if err != nil {
		return err
	}
	out := f.bundle(ctx, name, f.Partitions, emit)
	for _, r := range rows {
		if f.KeysOnly {
			out.add(packed.Partition(uint64(r.IdentityKey), f.Partitions), packed.Sketch{Key: uint64(r.IdentityKey), Doc: uint64(r.DocID)})
		} else {
			out.add(packed.Partition(uint64(r.DocID), f.Partitions), sketchOf(r))
		}
	}
	return nil
}

// sketchOf is a representative's record from its sketches-table row.
func sketchOf(r tables.Sketch) packed.Sketch {
	sk := packed.Sketch{Key: uint64(r.IdentityKey), Doc: uint64(r.DocID), Values: make([]uint64, len(r.Sketch))}
	for i, v := range r.Sketch {
		sk.Values[i] = uint64(v)
	}
	return sk
}

// docPartition is readAligned's partition of a row by its doc ID.
func docPartition(doc int64, n int) int { return packed.Partition(uint64(doc), n) }

// appendIndexDocs appends to dst the docs rows of doc partition part of
// parts in the index's docs shards (their metadata: the cluster columns
// are left empty). With no shards (not an update) it appends none.
func appendIndexDocs(ctx context.Context, dst []tables.Doc, shards []Shard, part, parts int) ([]tables.Doc, error) {
	old, err := readAligned(ctx, shards, part, parts, tables.ReadDocMeta, func(d *tables.Doc, n int) int { return docPartition(d.DocID, n) })
	for i := range old {
		clearClusterColumns(&old[i]) // a redirect's reason too: its chain is followed again
	}
	return append(dst, old...), err
}

// appendIndexSketches appends to dst the representatives' sketches of doc
// partition part of parts in the index's sketches shards.
func appendIndexSketches(ctx context.Context, dst []packed.Sketch, shards []Shard, part, parts int) ([]packed.Sketch, error) {
	old, err := readAligned(ctx, shards, part, parts, tables.ReadSketches, func(r *tables.Sketch, n int) int { return docPartition(r.DocID, n) })
	for _, r := range old {
		dst = append(dst, sketchOf(r))
	}
	return dst, err
}

// partitionSketches is every representative's sketch of doc partition
// part of parts: those of the stream reps (parked files or sealed
// batches, readSketches) and, in an update, the index's (its sketches
// shards, IndexTables).
func partitionSketches(ctx context.Context, reps func(*[]byte) bool, index []Shard, part, parts int) ([]packed.Sketch, error) {
	out, err := readSketches(ctx, reps)
	if err != nil {
		return nil, err
	}
	return appendIndexSketches(ctx, out, index, part, parts)
}

// appendIndexPostings appends to dst the postings of shingle partition
// part of parts in the index's postings shards.
func appendIndexPostings(ctx context.Context, dst []packed.Posting, shards []Shard, part, parts int) ([]packed.Posting, error) {
	old, err := readAligned(ctx, shards, part, parts, tables.ReadPostings, func(r *tables.Posting, n int) int {
		return packed.Partition(uint64(r.Shingle), n)
	})
	dst = slices.Grow(dst, len(old))
	for _, r := range old {
		dst = append(dst, packed.Posting{Shingle: uint64(r.Shingle), Doc: uint64(r.DocID), Size: uint32(r.SketchSize), Rank: uint16(r.Rank)})
	}
	return dst, err
}

// readIndexURLs reads the urls rows of URL partition part of parts in the
// index's urls shards, whose URLs are placed by their fingerprints under h.
func readIndexURLs(ctx context.Context, shards []Shard, part, parts int, h fingerprint.Hasher) ([]tables.URL, error) {
	return readAligned(ctx, shards, part, parts, tables.ReadURLs, func(u *tables.URL, n int) int {
		return packed.Partition(h.String(u.URL), n)
	})
}

// readIndexPairs reads the stored pairs of the index's pairs shard sh that
// fall in pair partition part of parts, as rows and as counted pairs on
// sketches sk.
func readIndexPairs(ctx context.Context, sh Shard, part, parts int, sk sketch.Spec) ([]tables.Pair, []packed.Pair, error) {
	rows, err := readAligned(ctx, []Shard{sh}, part, parts, tables.ReadPairCounts, func(r *tables.Pair, n int) int {
		return int(packed.PairHash(uint64(r.DocA), uint64(r.DocB)) % uint64(n))
	})
	if err != nil {
		return nil, nil, err
	}
	pairs := make([]packed.Pair, len(rows))
	for i, r := range rows {
		p := packed.Pair{A: uint64(r.DocA), B: uint64(r.DocB), Count: uint32(r.Shared), SizeA: uint32(r.SketchSizeA), SizeB: uint32(r.SketchSizeB)}
		if sk.Kind == sketch.Min {
			// clusters.Estimate's division, undone: exact for these small integers.
			union := min(sk.N, int(p.SizeA)+int(p.SizeB)-int(p.Count))
			p.MinShared = uint32(math.Round(r.Resemblance * float64(union)))
		}
		pairs[i] = p
	}
	return rows, pairs, nil
}
