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
	var rows []Posting
	err := readColumns(ctx, name, []string{"shingle", "doc_id", "sketch_size", "rank"}, func(n int) { rows = slices.Grow(rows, n)[:len(rows)+n] },
		func(col, i int, v parquet.Value) {
			switch r := &rows[i]; col {
			case 0:
				r.Shingle = v.Int64()
			case 1:
				r.DocID = v.Int64()
			case 2:
				r.SketchSize = v.Int32()
			default:
				r.Rank = v.Int32()
			}
		})
	return rows, err
}

// ReadPairCounts reads the columns of a pairs shard that an update needs
// (doc_a, doc_b, shared, sketch sizes, resemblance) column by column, as
// ReadPostings does.
func ReadPairCounts(ctx context.Context, name string) ([]Pair, error) {
	var rows []Pair
	err := readColumns(ctx, name, []string{"doc_a", "doc_b", "shared", "sketch_size_a", "sketch_size_b", "resemblance"}, func(n int) { rows = slices.Grow(rows, n)[:len(rows)+n] },
		func(col, i int, v parquet.Value) {
			switch r := &rows[i]; col {
			case 0:
				r.DocA = v.Int64()
			case 1:
				r.DocB = v.Int64()
			case 2:
				r.Shared = v.Int32()
			case 3:
				r.SketchSizeA = v.Int32()
			case 4:
				r.SketchSizeB = v.Int32()
			default:
				r.Resemblance = v.Double()
			}
		})
	return rows, err
}

// readColumns reads the required, flat columns cols of a Parquet file
// column by column: grow adds n rows (a row group's) for set to fill with
// set(column's position in cols, row, value).
func readColumns(ctx context.Context, name string, cols []string, grow func(n int), set func(col, row int, v parquet.Value)) error {
	r, size, err := beamfs.OpenReaderAt(ctx, name)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	index := make([]int, len(cols))
	for c, col := range cols {
		leaf, ok := f.Schema().Lookup(col)
		if !ok {
			return fmt.Errorf("%s has no column %q: it was written by an earlier neardup (rerun the full pipeline)", name, col)
		}
		if leaf.MaxDefinitionLevel > 0 || leaf.MaxRepetitionLevel > 0 {
			return fmt.Errorf("%s: column %q is not a required flat column", name, col)
		}
		index[c] = leaf.ColumnIndex
	}
	buf := make([]parquet.Value, 4096)
	base := 0
	for _, rg := range f.RowGroups() {
		n := int(rg.NumRows())
		grow(n)
		for c := range cols {
			i := base
			err := eachPage(rg.ColumnChunks()[index[c]], func(vr parquet.ValueReader) error {
				for {
					k, err := vr.ReadValues(buf)
					if i+k > base+n {
						return fmt.Errorf("column %s has more values than rows", cols[c])
					}
					for _, v := range buf[:k] {
						set(c, i, v)
						i++
					}
					if errors.Is(err, io.EOF) {
						return nil
					}
					if err != nil {
						return err
					}
				}
			})
			if err == nil && i != base+n {
				err = fmt.Errorf("column %s has %d values for %d rows", cols[c], i-base, n)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		base += n
	}
	return nil
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
