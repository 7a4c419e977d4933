package export

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/neardup/neardup/io/store"
)

// Copy writes to dst the rows of the Parquet file src whose code in marks
// (one per row of src, in row order) keeps them, in src's order, with
// src's schema (nested and optional columns as they are) and key-value
// metadata, zstd-compressed. It streams: one row group of src is read at
// a time, a few hundred rows in memory, and output row groups are cut at
// the size (in rows) of src's largest. It returns the rows written.
func Copy(ctx context.Context, src, dst string, marks []Code) (int64, error) {
	r, size, err := store.OpenReaderAt(ctx, src)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", src, err)
	}
	defer r.Close()
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return 0, fmt.Errorf("%s: not a readable Parquet file: %w", src, err)
	}
	if f.NumRows() != int64(len(marks)) {
		return 0, fmt.Errorf("%s has %d rows, the run's docs table %d: the file changed since the run", src, f.NumRows(), len(marks))
	}
	var target int64 = 1
	for _, rg := range f.RowGroups() {
		target = max(target, rg.NumRows())
	}
	out, err := store.OpenWrite(ctx, dst)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", dst, err)
	}
	opts := []parquet.WriterOption{f.Schema(), parquet.Compression(&zstd.Codec{})}
	for _, kv := range f.Metadata().KeyValueMetadata {
		opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
	}
	w := parquet.NewWriter(out, opts...)
	written, pending, row := int64(0), int64(0), int64(0)
	// kept is a slice of its own: ReadRows reuses each buf[i]'s memory,
	// so buf's entries must not be moved around.
	buf, kept := make([]parquet.Row, 256), make([]parquet.Row, 0, 256)
	fail := func(err error) (int64, error) {
		out.Close()
		return 0, err
	}
	for g, rg := range f.RowGroups() {
		rows := rg.Rows()
		for {
			n, rerr := rows.ReadRows(buf)
			kept = kept[:0]
			if row+int64(n) > int64(len(marks)) {
				rows.Close()
				return fail(fmt.Errorf("%s: row group %d holds more rows than its footer says", src, g))
			}
			for _, pr := range buf[:n] {
				if marks[row].Keeps() {
					kept = append(kept, pr)
				}
				row++
			}
			if len(kept) > 0 {
				if _, err := w.WriteRows(kept); err != nil {
					rows.Close()
					return fail(fmt.Errorf("%s: %w", dst, err))
				}
				written += int64(len(kept))
				pending += int64(len(kept))
			}
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				rows.Close()
				return fail(fmt.Errorf("%s: row group %d: %w", src, g, rerr))
			}
		}
		rows.Close()
		if pending >= target {
			if err := w.Flush(); err != nil {
				return fail(fmt.Errorf("%s: %w", dst, err))
			}
			pending = 0
		}
	}
	if row != int64(len(marks)) {
		return fail(fmt.Errorf("%s: read %d rows, its footer says %d", src, row, len(marks)))
	}
	if err := w.Close(); err != nil {
		return fail(fmt.Errorf("%s: %w", dst, err))
	}
	if err := out.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", dst, err)
	}
	return written, nil
}
