package tables

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/io/beamfs"
)

// Read reads every row of one Parquet file written by Write.
func Read[T any](ctx context.Context, name string) ([]T, error) {
	r, size, err := beamfs.OpenReaderAt(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// A missing column would read as zeros: an output of an earlier
	// version must fail clearly instead.
	for _, path := range parquet.SchemaOf(*new(T)).Columns() {
		if _, ok := f.Schema().Lookup(path...); !ok {
			return nil, fmt.Errorf("%s has no column %q: it was written by an earlier neardup (rerun the full pipeline)", name, strings.Join(path, "."))
		}
	}
	rd := parquet.NewGenericReader[T](f)
	defer rd.Close()
	rows := make([]T, f.NumRows())
	n, err := rd.Read(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return rows[:n], nil
}

// ReadTable reads every shard of one table of an output folder.
func ReadTable[T any](ctx context.Context, dir, table string) ([]T, error) {
	shards, err := beamfs.List(ctx, beamfs.Join(dir, table, "*.parquet"))
	if err != nil {
		return nil, err
	}
	if len(shards) == 0 {
		return nil, fmt.Errorf("%s: no shards of table %s", dir, table)
	}
	var all []T
	for _, sh := range shards {
		rows, err := Read[T](ctx, sh)
		if err != nil {
			return nil, err
		}
		all = append(all, rows...)
	}
	return all, nil
}

// ReadPostings reads a postings shard as Read[Posting] does, column by
// column: parquet-go's generic reader assembles rows value by value, 15
// times slower on this table of millions of small rows, which an update
// reads whole.
func ReadPostings(ctx context.Context, name string) ([]Posting, error) {
	r, size, err := beamfs.OpenReaderAt(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cols := []string{"shingle", "doc_id", "sketch_size", "rank"}
	index := make([]int, len(cols))
	for c, col := range cols {
		leaf, ok := f.Schema().Lookup(col)
		if !ok {
			return nil, fmt.Errorf("%s has no column %q: it was written by an earlier neardup (rerun the full pipeline)", name, col)
		}
		index[c] = leaf.ColumnIndex
	}
	rows := make([]Posting, 0, f.NumRows())
	var i64 []int64
	var i32 []int32
	for _, rg := range f.RowGroups() {
		base := len(rows)
		rows = rows[:base+int(rg.NumRows())]
		for c := range cols {
			i := base
			err := eachPage(rg.ColumnChunks()[index[c]], func(v parquet.ValueReader) error {
				for {
					var n int
					var err error
					switch c {
					case 0, 1:
						r, ok := v.(parquet.Int64Reader)
						if !ok {
							return fmt.Errorf("column %s is not INT64", cols[c])
						}
						i64 = slices.Grow(i64[:0], 4096)[:4096]
						n, err = r.ReadInt64s(i64)
						if i+n > len(rows) {
							return fmt.Errorf("column %s has more values than rows", cols[c])
						}
						for k, x := range i64[:n] {
							if c == 0 {
								rows[i+k].Shingle = x
							} else {
								rows[i+k].DocID = x
							}
						}
					default:
						r, ok := v.(parquet.Int32Reader)
						if !ok {
							return fmt.Errorf("column %s is not INT32", cols[c])
						}
						i32 = slices.Grow(i32[:0], 4096)[:4096]
						n, err = r.ReadInt32s(i32)
						if i+n > len(rows) {
							return fmt.Errorf("column %s has more values than rows", cols[c])
						}
						for k, x := range i32[:n] {
							if c == 2 {
								rows[i+k].SketchSize = x
							} else {
								rows[i+k].Rank = x
							}
						}
					}
					i += n
					if errors.Is(err, io.EOF) {
						return nil
					}
					if err != nil {
						return err
					}
				}
			})
			if err == nil && i != len(rows) {
				err = fmt.Errorf("column %s has %d values for %d rows", cols[c], i-base, len(rows)-base)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return rows, nil
}

// eachPage calls fn with the values of every page of a column chunk.
func eachPage(chunk parquet.ColumnChunk, fn func(parquet.ValueReader) error) error {
	pages := chunk.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = fn(p.Values())
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
}
