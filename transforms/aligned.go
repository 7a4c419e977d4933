package transforms

import (
	"context"
	"fmt"
	"path"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/io/beamfs"
	"github.com/neardup/neardup/packed"
)

func init() {
	register.Function2x0(emptyBatch)
	register.DoFn3x1[context.Context, string, func(string), error](&copyShardFn{})
}

// IndexTables names the shards of an update's index by the index's
// partition (the shard of partition q, or "" when it wrote none). An
// update partitions its records into a multiple of the index's partition
// count, so the records of its partition p are all in the index's shard p
// mod Partitions (packed.Partition is a hash mod the count): each keyed
// step of the update reads that shard where the new records of p meet,
// and the index's records never travel through a shuffle.
type IndexTables struct {
	Partitions                            int
	Docs, Pairs, Sketches, Postings, URLs []string
}

// NewIndexTables sorts the shards of an index with partitions partitions
// by their partition, from their names (tables.ShardName).
func NewIndexTables(partitions int, docs, pairs, sketches, postings, urls []string) (IndexTables, error) {
	ix := IndexTables{Partitions: partitions}
	for _, t := range []struct {
		in  []string
		out *[]string
	}{{docs, &ix.Docs}, {pairs, &ix.Pairs}, {sketches, &ix.Sketches}, {postings, &ix.Postings}, {urls, &ix.URLs}} {
		*t.out = make([]string, partitions)
		for _, name := range t.in {
			var q int
			if _, err := fmt.Sscanf(path.Base(name), "part-%05d.parquet", &q); err != nil || q < 0 || q >= partitions {
				return ix, fmt.Errorf("%s is not a shard of an output with %d partitions", name, partitions)
			}
			(*t.out)[q] = name
		}
	}
	return ix, nil
}

// readAligned reads, with read, the rows of the index's shards (one of
// IndexTables' lists) that fall in partition part of parts: partOf gives
// a row's partition.
func readAligned[T any](ctx context.Context, ix IndexTables, shards []string, part, parts int, read func(context.Context, string) ([]T, error), partOf func(*T, int) int) ([]T, error) {
	name := shards[part%ix.Partitions]
	if name == "" {
		return nil, nil
	}
	rows, err := read(ctx, name)
	if err != nil || parts == ix.Partitions {
		return rows, err
	}
	kept := rows[:0]
	for i := range rows {
		if partOf(&rows[i], parts) == part {
			kept = append(kept, rows[i])
		}
	}
	return kept, nil
}

// everyPartition returns PCollection<KV<int, []byte>>: an empty sealed
// batch for each of cfg's partitions. Flattened into a keyed stream, it
// makes a keyed step see every partition, also those no new record
// reaches, whose index shards must still be carried over.
func everyPartition(s beam.Scope, cfg Config) beam.PCollection {
	parts := make([]int, cfg.Partitions)
	for p := range parts {
		parts[p] = p
	}
	return beam.ParDo(s, emptyBatch, beam.CreateList(s, parts))
}

func emptyBatch(p int, emit func(int, []byte)) { emit(p, packed.Seal(nil, nil)) }

// CopyShards copies the shards of one table of an earlier output (shards)
// into this run's table of that name, unchanged: recluster carries the
// postings table over so that its output can take updates.
func CopyShards(s beam.Scope, shards []string, table string, cfg Config) {
	if cfg.TempDir == "" || len(shards) == 0 {
		return
	}
	s = s.Scope("CopyShards")
	drain(s, beam.ParDo(s, &copyShardFn{Dir: beamfs.Join(cfg.TempDir, table)}, beam.Reshuffle(s, beam.CreateList(s, shards))))
}

type copyShardFn struct{ Dir string }

func (f *copyShardFn) ProcessElement(ctx context.Context, shard string, emit func(string)) error {
	b, err := beamfs.ReadFile(ctx, shard)
	if err != nil {
		return err
	}
	name := beamfs.Join(f.Dir, path.Base(shard))
	if err := beamfs.WriteFile(ctx, name, b); err != nil {
		return err
	}
	emit(name)
	return nil
}
