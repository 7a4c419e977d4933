package output

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/neardup/neardup/internal/fanout"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
)

// Every shard a run writes is recorded after it, in a small JSON file
// under the run's ReceiptsDir: a Record of the step and key (partition)
// that wrote it, with a Receipt of each shard (table, rows, bytes) and the
// step's counts for the manifest. A keyed step writes a record for every
// key it sees, with a receipt of no file for a table the key had no rows
// of, and the pipelines make such steps see every key (transforms'
// everyPartition), so Publish knows what to expect without trusting a
// listing: every key of every keyed table, and each shard whole, at the
// size its writer wrote. Records are written after their shards, under
// names fixed by step and key, so a retried bundle, or two attempts of it
// at once, write the same ones. One file per step and key, not per shard:
// on a local disk every file created costs a few hundred microseconds.

// ReceiptsDir is where, under the run's temporary folder, the writers
// leave their records.
const ReceiptsDir = "_receipts"

// Receipt is the record of one shard written, or of a key with no rows.
type Receipt struct {
	Table string `json:"table"`
	// Key is the partition of the keyed step that wrote it; -1 for a
	// shard carried from an earlier output as it was.
	Key   int    `json:"key"`
	File  string `json:"file,omitempty"` // the shard's name in the table's folder; "" when no rows
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// Record is what one step wrote for one key: its shards' receipts and
// its counts (summed over the records into the manifest's counts, as
// tallies are).
type Record struct {
	Receipts []Receipt        `json:"receipts"`
	Counts   map[string]int64 `json:"counts,omitempty"`
}

// WriteRecord records under tempDir what step wrote for key (-1: a step
// not keyed, whose step names it alone): its receipts and counts. A
// tempDir of "" (the transforms' tests) writes nothing.
func WriteRecord(ctx context.Context, tempDir, step string, key int, counts map[string]int64, receipts ...Receipt) error {
	if tempDir == "" {
		return nil
	}
	b, err := json.Marshal(Record{Receipts: receipts, Counts: counts})
	if err != nil {
		return err
	}
	name := step + ".json"
	if key >= 0 {
		name = fmt.Sprintf("%s-%06d.json", step, key)
	}
	return store.WriteFile(ctx, store.Join(tempDir, ReceiptsDir, strings.ReplaceAll(name, "/", "_")), b)
}

// WriteShard writes the rows of key of table under tempDir, as the shard
// tables.ShardName(key) when there are any, and returns its receipt (of no
// file when there are none), for WriteRecord. A tempDir of "" (the
// transforms' tests) writes nothing.
func WriteShard[T any](ctx context.Context, tempDir, table string, key int, rows []T) (Receipt, error) {
	return WriteShardEach(ctx, tempDir, table, key, len(rows), func(buf []T, from int) { copy(buf, rows[from:]) })
}

// WriteShardEach is WriteShard for n rows made a chunk at a time by fill
// (see tables.WriteEach).
func WriteShardEach[T any](ctx context.Context, tempDir, table string, key, n int, fill func(buf []T, from int)) (Receipt, error) {
	r := Receipt{Table: table, Key: key}
	if tempDir == "" || n == 0 {
		return r, nil
	}
	r.File, r.Rows = tables.ShardName(key), int64(n)
	var err error
	r.Bytes, err = tables.WriteEach(ctx, store.Join(tempDir, table, r.File), n, fill)
	return r, err
}

// CarryShard copies the shard from, of an earlier output's table, into
// this run's table under tempDir as name, and records it (key -1).
func CarryShard(ctx context.Context, from, tempDir, table, name string) error {
	to := store.Join(tempDir, table, name)
	if err := store.Copy(ctx, from, to); err != nil {
		return err
	}
	rows, err := tables.NumRows(ctx, to)
	if err != nil {
		return err
	}
	size, err := store.Size(ctx, to)
	if err != nil {
		return err
	}
	return WriteRecord(ctx, tempDir, "carried-"+table+"-"+name, -1, nil, Receipt{Table: table, Key: -1, File: name, Rows: rows, Bytes: size})
}

// readRecords reads every record under tempDir, and returns their
// receipts by table and their counts summed (maxima for MaxTallies).
func readRecords(ctx context.Context, tempDir string) (map[string][]Receipt, map[string]int64, error) {
	names, err := store.List(ctx, store.Join(tempDir, ReceiptsDir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	rs := make([]Record, len(names))
	err = fanout.Each(len(names), 32, func(i int) error {
		b, err := store.ReadFile(ctx, names[i])
		if err == nil {
			err = json.Unmarshal(b, &rs[i])
		}
		if err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	by, sums := map[string][]Receipt{}, map[string]int64{}
	for _, r := range rs {
		for _, rc := range r.Receipts {
			by[rc.Table] = append(by[rc.Table], rc)
		}
		for k, v := range r.Counts {
			if MaxTallies[k] {
				sums[k] = max(sums[k], v)
			} else {
				sums[k] += v
			}
		}
	}
	return by, sums, nil
}

// Expect is what a run's Publish requires of its tables beyond their
// receipts' shards: the keys of its keyed tables, and the docs rows.
type Expect struct {
	// Keys are, by table, how many keys (partitions) the step writing it
	// sees: a receipt of each of 0..n-1 is required. Tables not named
	// here (the pairs, carried or not, and the lost) are checked shard by
	// shard only.
	Keys map[string]int
	// DocsRows is the rows the docs table must hold: the input's rows
	// from its Parquet footers (an update's: the index's docs rows too;
	// a recluster's: its source's). Publish checks it against the docs
	// shards' footers, or without a docs table against the tallied docs.
	DocsRows int64
	// Counted are the inputs whose rows no footer gave the launcher (JSON
	// lines): the split reader's record of each (InputRows) adds its rows
	// to DocsRows. A record missing fails the run, unless the file is
	// listed bad as a whole.
	Counted []string
}

// InputRowsDir is where, under the run's temporary folder, the split
// reader records the rows it counted in each input file that has no
// footer to say (Expect.Counted).
const InputRowsDir = "_input_rows"

// InputRows is the record of one such file: its path and its rows.
type InputRows struct {
	Path string `json:"path"`
	Rows int64  `json:"rows"`
}

// verified checks the receipts of table against what was expected and
// against the shards themselves (each there, at the size written, the
// docs shards' rows read from their footers), and returns the receipts of
// the shards to publish and their rows.
func verified(ctx context.Context, tempDir, table string, receipts []Receipt, keys int) ([]Receipt, int64, error) {
	seen := map[int]bool{}
	var files []Receipt
	for _, r := range receipts {
		seen[r.Key] = true
		if r.File != "" {
			files = append(files, r)
		}
	}
	var missing []string
	for k := range keys {
		if !seen[k] {
			missing = append(missing, fmt.Sprint(k))
		}
	}
	if len(missing) > 0 {
		more := ""
		if len(missing) > 5 {
			more = fmt.Sprintf(" and %d more", len(missing)-5)
			missing = missing[:5]
		}
		return nil, 0, listed{fmt.Errorf("the %s table has no receipt of partition %s%s of %d: a writer's files were lost", table, strings.Join(missing, ", "), more, keys)}
	}
	found, err := store.List(ctx, store.Join(tempDir, table, "*.parquet"))
	if err != nil {
		return nil, 0, err
	}
	named := map[string]bool{}
	for _, r := range files {
		named[r.File] = true
	}
	for _, l := range found {
		if !named[l[strings.LastIndex(l, "/")+1:]] {
			return nil, 0, listed{fmt.Errorf("%s has no receipt: a writer that did not finish, or another run's file", l)}
		}
	}
	var rows int64
	err = fanout.Each(len(files), 32, func(i int) error {
		r := files[i]
		name := store.Join(tempDir, table, r.File)
		size, err := store.Size(ctx, name)
		if err != nil {
			return fmt.Errorf("%s, written with %d rows, is missing: %w", name, r.Rows, err)
		}
		if size != r.Bytes {
			return fmt.Errorf("%s holds %d bytes, its writer wrote %d", name, size, r.Bytes)
		}
		if table == tables.DocsTable {
			n, err := tables.NumRows(ctx, name)
			if err != nil {
				return err
			}
			if n != r.Rows {
				return fmt.Errorf("%s holds %d rows, its writer wrote %d", name, n, r.Rows)
			}
		}
		return nil
	})
	for _, r := range files {
		rows += r.Rows
	}
	slices.SortFunc(files, func(a, b Receipt) int { return strings.Compare(a.File, b.File) })
	return files, rows, err
}
