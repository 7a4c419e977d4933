package export

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/neardup/neardup/io/store"
)

// Copy writes to dst the rows of the Parquet file src whose code in marks
// (one per row of src, in row order) keeps them, in src's order, with
// src's schema (nested and optional columns as they are) and key-value
// metadata, zstd-compressed. When add names columns, they follow src's,
// with each row's values (values, one per row of src). It streams: one row group of src is read at
// a time, a few hundred rows in memory, and output row groups are cut at
// the size (in rows) of src's largest. It returns the rows written.
func Copy(ctx context.Context, src, dst string, marks []Code, add Added, values []Values) (int64, error) {
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
	schema, err := add.Schema(f.Schema())
	if err != nil {
		return 0, fmt.Errorf("%s: %w", src, err)
	}
	if len(add.Columns) > 0 && len(values) != len(marks) {
		return 0, fmt.Errorf("%s: %d rows of added values for %d rows", src, len(values), len(marks))
	}
	leaves := len(f.Schema().Columns())
	var target int64 = 1
	for _, rg := range f.RowGroups() {
		target = max(target, rg.NumRows())
	}
	out, err := store.OpenWrite(ctx, dst)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", dst, err)
	}
	// The input schema's columns name the input's codecs, which the
	// writer would use instead of its Compression option.
	codec := &zstd.Codec{}
	opts := []parquet.WriterOption{parquet.NewSchema(schema.Name(), recompressed{schema, codec}), parquet.Compression(codec)}
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
					if len(add.Columns) > 0 {
						pr = add.Append(pr, leaves, values[row])
					}
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

// recompressed is a schema node whose leaf columns are compressed with
// codec, whatever codec the nodes it wraps name.
type recompressed struct {
	parquet.Node
	codec compress.Codec
}

func (n recompressed) Compression() compress.Codec {
	if n.Leaf() {
		return n.codec
	}
	return n.Node.Compression()
}

func (n recompressed) Fields() []parquet.Field {
	fields := n.Node.Fields()
	out := make([]parquet.Field, len(fields))
	for i, f := range fields {
		out[i] = recompressedField{f, n.codec}
	}
	return out
}

// recompressedField is recompressed for a field of a group.
type recompressedField struct {
	parquet.Field
	codec compress.Codec
}

func (f recompressedField) Compression() compress.Codec {
	return recompressed{f.Field, f.codec}.Compression()
}

func (f recompressedField) Fields() []parquet.Field {
	return recompressed{f.Field, f.codec}.Fields()
}
