package transforms

import (
	"context"
	"fmt"
	"path"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

func init() {
	register.Function2x0(emptyBatch)
	register.Function3x1(copyShard)
	beam.RegisterType(reflect.TypeOf((*shardCopy)(nil)).Elem())
}

// IndexTables names the shards of an update's index by partition. An
// update partitions its records into a multiple of the index's partition
// count, so the records of its partition p are all in the index's shard p
// mod Partitions (packed.Partition is a hash mod the count): each keyed
// step of the update reads that shard where the new records of p meet,
// and the index's records never travel through a shuffle.
//
// A table that only grows (postings, sketches) is carried from run to run
// rather than rewritten: an update copies the index's shards (CarryShards)
// and writes its own rows only. A carried shard is named for the
// partition and the partition count it was cut by,
// part-QQQQQ-of-PPPPP-nNNNNN.parquet (N: the number of input files of the
// run that wrote it, unique to that run); the run's own shards are
// part-QQQQQ.parquet, cut by the manifest's partition count.
type IndexTables struct {
	Partitions                                       int
	Docs, Pairs, Contained, Sketches, Postings, URLs []Shard
}

// Shard is one file of a table: the records of the partitions p with
// p mod Of = Part. CarriedName is its name once carried into the output
// of an update or recluster of its output.
type Shard struct {
	Path        string
	Part, Of    int
	CarriedName string
}

// NewIndexTables reads the partitions of an index's shards, cut by
// partitions partitions unless carried, from their names; runs is the
// number of the index's input files, which names its own shards once
// carried.
func NewIndexTables(partitions, runs int, docs, pairs, contained, sketches, postings, urls []string) (IndexTables, error) {
	ix := IndexTables{Partitions: partitions}
	for _, t := range []struct {
		in  []string
		out *[]Shard
	}{{docs, &ix.Docs}, {pairs, &ix.Pairs}, {contained, &ix.Contained}, {sketches, &ix.Sketches}, {postings, &ix.Postings}, {urls, &ix.URLs}} {
		for _, name := range t.in {
			sh, err := parseShard(name, partitions, runs)
			if err != nil {
				return ix, err
			}
			*t.out = append(*t.out, sh)
		}
	}
	return ix, nil
}

// parseShard reads a shard's partition from its name, in an output with
// partitions partitions and runs input files. A shard carried already
// keeps its name.
func parseShard(name string, partitions, runs int) (Shard, error) {
	part, of, carried, err := tables.ShardPartition(name, partitions)
	sh := Shard{Path: name, Part: part, Of: of}
	switch {
	case err != nil:
		return sh, err
	case carried:
		sh.CarriedName = path.Base(name)
	default:
		sh.CarriedName = fmt.Sprintf("part-%05d-of-%05d-n%06d.parquet", sh.Part, sh.Of, runs)
	}
	return sh, nil
}

// readAligned reads, with read, the rows of the index's shards (one of
// IndexTables' lists) that fall in partition part of parts: partOf gives
// a row's partition.
func readAligned[T any](ctx context.Context, shards []Shard, part, parts int, read func(context.Context, string) ([]T, error), partOf func(*T, int) int) ([]T, error) {
	var all []T
	for _, sh := range shards {
		if part%sh.Of != sh.Part {
			continue
		}
		rows, err := read(ctx, sh.Path)
		if err != nil {
			return nil, err
		}
		if parts != sh.Of {
			kept := rows[:0]
			for i := range rows {
				if partOf(&rows[i], parts) == part {
					kept = append(kept, rows[i])
				}
			}
			rows = kept
		}
		all = append(all, rows...)
	}
	return all, nil
}

func emptyBatch(p int, emit func(int, []byte)) { emit(p, packed.Seal(nil, nil)) }

// CarryShards copies the shards of one table of an index (shards) into
// this run's table of that name, unchanged, under their carried names
// (see IndexTables): an update or a recluster keeps the rows of a table
// that only grows without rewriting them. The copies go under
// place.TempDir, when the run writes the table.
func CarryShards(s beam.Scope, shards []Shard, table string, place Placement) {
	tempDir := place.shards(table)
	if tempDir == "" || len(shards) == 0 {
		return
	}
	s = s.Scope("CarryShards")
	var copies []shardCopy
	for _, sh := range shards {
		copies = append(copies, shardCopy{From: sh.Path, TempDir: tempDir, Table: table, Name: sh.CarriedName})
	}
	drain(s, beam.ParDo(s, copyShard, spread(s, copies)))
}

// shardCopy is one file CarryShards copies, to Name in the run's Table.
type shardCopy struct{ From, TempDir, Table, Name string }

func copyShard(ctx context.Context, c shardCopy, emit func(string)) error {
	if err := output.CarryShard(ctx, c.From, c.TempDir, c.Table, c.Name); err != nil {
		return err
	}
	emit(c.Name)
	return nil
}
