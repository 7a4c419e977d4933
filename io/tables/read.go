package tables

import (
	"context"
	"errors"
	"fmt"
	"io"

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
