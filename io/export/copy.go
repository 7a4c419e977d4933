package export

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	kzstd "github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
)

// Copy writes to dst the rows lo to lo+len(marks) of the Parquet file src
// whose code in marks (one per row of the range, in row order) keeps
// them, in src's order, with src's schema (nested and optional columns as
// they are) and key-value metadata, every column zstd-compressed. When
// add names columns, they follow src's, with each row's values (values,
// one per row of the range). It streams: one row group of src is read at
// a time, a few hundred rows in memory, and output row groups are cut at
// the size (in rows) of src's largest. It returns the rows written.
func Copy(ctx context.Context, src, dst string, lo int64, marks []Code, add Added, values []Values) (int64, error) {
	r, size, err := store.OpenReaderAt(ctx, src)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", src, err)
	}
	defer r.Close()
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return 0, fmt.Errorf("%s: not a readable Parquet file: %w", src, err)
	}
	hi := lo + int64(len(marks))
	if lo < 0 || hi > f.NumRows() {
		return 0, fmt.Errorf("%s has %d rows, the run's docs table names rows %d to %d: the file changed since the run", src, f.NumRows(), lo, hi-1)
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
	codec := zstdCodec
	opts := []parquet.WriterOption{parquet.NewSchema(schema.Name(), recompressed{schema, codec}), parquet.Compression(codec)}
	opts = append(opts, keyValues(f, schema)...)
	w := parquet.NewWriter(out, opts...)
	written, pending, row := int64(0), int64(0), lo
	// kept is a slice of its own: ReadRows reuses each buf[i]'s memory,
	// so buf's entries must not be moved around.
	buf, kept := make([]parquet.Row, 256), make([]parquet.Row, 0, 256)
	fail := func(err error) (int64, error) {
		out.Abort() // never a truncated file in its place
		return 0, err
	}
	var start int64 // the first row of row group g
	for g, rg := range f.RowGroups() {
		end := start + rg.NumRows()
		if end <= lo || start >= hi {
			start = end
			continue
		}
		rows := rg.Rows()
		if lo > start {
			if err := rows.SeekToRow(lo - start); err != nil {
				rows.Close()
				return fail(fmt.Errorf("%s: row group %d: %w", src, g, err))
			}
		}
		for row < min(end, hi) {
			n, rerr := rows.ReadRows(buf[:min(int64(len(buf)), min(end, hi)-row)])
			kept = kept[:0]
			for _, pr := range buf[:n] {
				if marks[row-lo].Keeps() {
					if len(add.Columns) > 0 {
						pr = add.Append(pr, leaves, values[row-lo])
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
		if row != min(end, hi) {
			return fail(fmt.Errorf("%s: row group %d holds %d rows, its footer says %d", src, g, row-max(start, lo), min(end, hi)-max(start, lo)))
		}
		if pending >= target {
			if err := w.Flush(); err != nil {
				return fail(fmt.Errorf("%s: %w", dst, err))
			}
			pending = 0
		}
		start = end
	}
	if err := w.Close(); err != nil {
		return fail(fmt.Errorf("%s: %w", dst, err))
	}
	if err := out.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", dst, err)
	}
	return written, nil
}

// keyValues are the key-value metadata of an export file copied from f
// with schema (the input's and the added columns): the input's, with
// pandas told the dtypes of the nullable integer columns, ours and any of
// the input's it did not know of (tables.PandasMetadata), so that
// pd.read_parquet reads the added ids exactly.
func keyValues(f *parquet.File, schema *parquet.Schema) []parquet.WriterOption {
	var opts []parquet.WriterOption
	existing := ""
	for _, kv := range f.Metadata().KeyValueMetadata {
		if kv.Key == tables.PandasKey {
			existing = kv.Value
			continue
		}
		opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
	}
	if md, ok := tables.PandasMetadata(schema, existing); ok {
		opts = append(opts, parquet.KeyValueMetadata(tables.PandasKey, md))
	}
	return opts
}

// Concat writes to dst the row groups of the Parquet files parts (Copy's
// slices of one input, of one schema), in order, with the first part's
// schema and key-value metadata. parquet-go copies each row group's
// compressed column chunks as they are, without decoding them. It
// returns the rows written. JSON lines parts (CopyJSONLines') are joined
// byte for byte, and their bytes returned.
func Concat(ctx context.Context, parts []string, dst string) (int64, error) {
	if crawl.IsJSONLines(dst) {
		return concatBytes(ctx, parts, dst)
	}
	out, err := store.OpenWrite(ctx, dst)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", dst, err)
	}
	var w *parquet.Writer
	var written int64
	fail := func(err error) (int64, error) {
		out.Abort() // never a truncated file in its place
		return 0, err
	}
	for _, part := range parts {
		r, size, err := store.OpenReaderAt(ctx, part)
		if err != nil {
			return fail(fmt.Errorf("%s: %w", part, err))
		}
		f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		if err != nil {
			r.Close()
			return fail(fmt.Errorf("%s: %w", part, err))
		}
		if w == nil {
			opts := []parquet.WriterOption{f.Schema()}
			for _, kv := range f.Metadata().KeyValueMetadata {
				opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
			}
			w = parquet.NewWriter(out, opts...)
		}
		for _, rg := range f.RowGroups() {
			n, err := w.WriteRowGroup(rg)
			if err != nil {
				r.Close()
				return fail(fmt.Errorf("%s: %w", dst, err))
			}
			written += n
		}
		r.Close()
	}
	if w == nil {
		return fail(fmt.Errorf("%s: no parts to join", dst))
	}
	if err := w.Close(); err != nil {
		return fail(fmt.Errorf("%s: %w", dst, err))
	}
	if err := out.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", dst, err)
	}
	return written, nil
}

// zstdCodec compresses every export's pages: parquet-go's zstd codec,
// with encoders of a 1 MB window, pooled for all exports. parquet-go's own
// encoders keep an 8 MB history each, and one codec per file left each
// file's pool to the collector: they were 352 MB of the 670 MB live in an
// export of 4.5 GB of text. A page (256 KB) fits the window, so the
// compressed bytes are the same.
var zstdCodec = &smallWindowZstd{}

type smallWindowZstd struct {
	zstd.Codec // String, CompressionCodec, Decode
	encoders   sync.Pool
}

func (c *smallWindowZstd) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*kzstd.Encoder)
	if e == nil {
		var err error
		e, err = kzstd.NewWriter(nil, kzstd.WithEncoderConcurrency(1), kzstd.WithEncoderLevel(zstd.DefaultLevel),
			kzstd.WithZeroFrames(true), kzstd.WithEncoderCRC(false), kzstd.WithWindowSize(1<<20))
		if err != nil {
			return nil, err
		}
	}
	defer c.encoders.Put(e)
	return e.EncodeAll(src, dst[:0]), nil
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
