package tables

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/io/beamfs"
)

// Read reads every row of one Parquet file written by Write.
func Read[T any](ctx context.Context, name string) ([]T, error) {
	f, closer, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	// A missing column would read as zeros: an output of an earlier
	// version must fail clearly instead.
	for _, path := range parquet.SchemaOf(*new(T)).Columns() {
		if _, ok := f.Schema().Lookup(path...); !ok {
			return nil, noColumn(name, strings.Join(path, "."))
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

// open opens the Parquet file name on any Beam filesystem; closer closes
// it.
func open(ctx context.Context, name string) (*parquet.File, io.Closer, error) {
	r, size, err := beamfs.OpenReaderAt(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		r.Close()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, r, nil
}

// ReadCopies reads the doc_id and identical_to columns of a docs shard,
// column by column: what an update needs of the index's documents to
// attach their identical copies.
func ReadCopies(ctx context.Context, name string) ([]Doc, error) {
	return readColumns(ctx, name, []column[Doc]{
		{"doc_id", func(r *Doc, v parquet.Value) { r.DocID = v.Int64() }},
		{"identical_to", func(r *Doc, v parquet.Value) {
			if !v.IsNull() {
				x := v.Int64()
				r.IdenticalTo = &x
			}
		}},
	})
}

// ReadSketches reads a sketches shard as Read[Sketch] does, column by
// column (3 times faster on the sketch lists).
func ReadSketches(ctx context.Context, name string) ([]Sketch, error) {
	return readColumns(ctx, name, []column[Sketch]{
		{"doc_id", func(r *Sketch, v parquet.Value) { r.DocID = v.Int64() }},
		{"identity_key", func(r *Sketch, v parquet.Value) { r.IdentityKey = v.Int64() }},
		{"sketch.list.element", func(r *Sketch, v parquet.Value) {
			if !v.IsNull() {
				r.Sketch = append(r.Sketch, v.Int64())
			}
		}},
	})
}

// ReadDocMeta reads the columns of a docs shard that phase 1 writes (all
// but the cluster columns, which stay empty) column by column: an update
// rewrites the index's docs rows with new cluster columns. The
// low-cardinality strings (sweep, source file, status, extraction) share
// one string per run of equal values.
func ReadDocMeta(ctx context.Context, name string) ([]Doc, error) {
	optional := func(v parquet.Value) *string {
		if v.IsNull() {
			return nil
		}
		s := string(v.ByteArray())
		return &s
	}
	// same returns the string of v, reusing *last when they are equal.
	same := func(last *string, v parquet.Value) string {
		if b := v.ByteArray(); string(b) != *last {
			*last = string(b)
		}
		return *last
	}
	var sweep, file, status, extraction string
	return readColumns(ctx, name, []column[Doc]{
		{"doc_id", func(r *Doc, v parquet.Value) { r.DocID = v.Int64() }},
		{"id", func(r *Doc, v parquet.Value) { r.ID = optional(v) }},
		{"url", func(r *Doc, v parquet.Value) { r.URL = optional(v) }},
		{"date", func(r *Doc, v parquet.Value) { r.Date = optional(v) }},
		{"sweep", func(r *Doc, v parquet.Value) { r.Sweep = same(&sweep, v) }},
		{"source_file", func(r *Doc, v parquet.Value) { r.SourceFile = same(&file, v) }},
		{"source_row", func(r *Doc, v parquet.Value) { r.SourceRow = v.Int64() }},
		{"status", func(r *Doc, v parquet.Value) { r.Status = same(&status, v) }},
		{"reason", func(r *Doc, v parquet.Value) { r.Reason = optional(v) }},
		{"extraction", func(r *Doc, v parquet.Value) { r.Extraction = same(&extraction, v) }},
		{"token_count", func(r *Doc, v parquet.Value) { r.TokenCount = v.Int64() }},
		{"shingle_count", func(r *Doc, v parquet.Value) { r.ShingleCount = v.Int64() }},
		{"sketch_size", func(r *Doc, v parquet.Value) { r.SketchSize = v.Int32() }},
		{"content_fingerprint", func(r *Doc, v parquet.Value) { r.ContentFingerprint = v.Int64() }},
		{"lexical_fingerprint", func(r *Doc, v parquet.Value) { r.LexicalFingerprint = v.Int64() }},
	})
}

// NumRows is the number of rows of the Parquet file name, from its footer.
func NumRows(ctx context.Context, name string) (int64, error) {
	f, closer, err := open(ctx, name)
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	return f.NumRows(), nil
}

// noColumn is the error for a table without one of its columns.
func noColumn(name, col string) error {
	return fmt.Errorf("%s has no column %q: it was written by an earlier neardup (rerun the full pipeline)", name, col)
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
// column: parquet-go's generic reader assembles rows value by value, 4
// times slower on this table of millions of small rows, which an update
// reads whole.
func ReadPostings(ctx context.Context, name string) ([]Posting, error) {
	return readColumns(ctx, name, []column[Posting]{
		{"shingle", func(r *Posting, v parquet.Value) { r.Shingle = v.Int64() }},
		{"doc_id", func(r *Posting, v parquet.Value) { r.DocID = v.Int64() }},
		{"sketch_size", func(r *Posting, v parquet.Value) { r.SketchSize = v.Int32() }},
		{"rank", func(r *Posting, v parquet.Value) { r.Rank = v.Int32() }},
	})
}

// ReadPairCounts reads the columns of a pairs shard that an update needs
// (doc_a, doc_b, shared, sketch sizes, resemblance, linked) column by
// column, as ReadPostings does.
func ReadPairCounts(ctx context.Context, name string) ([]Pair, error) {
	return readColumns(ctx, name, []column[Pair]{
		{"doc_a", func(r *Pair, v parquet.Value) { r.DocA = v.Int64() }},
		{"doc_b", func(r *Pair, v parquet.Value) { r.DocB = v.Int64() }},
		{"shared", func(r *Pair, v parquet.Value) { r.Shared = v.Int32() }},
		{"sketch_size_a", func(r *Pair, v parquet.Value) { r.SketchSizeA = v.Int32() }},
		{"sketch_size_b", func(r *Pair, v parquet.Value) { r.SketchSizeB = v.Int32() }},
		{"resemblance", func(r *Pair, v parquet.Value) { r.Resemblance = v.Double() }},
		{"linked", func(r *Pair, v parquet.Value) { r.Linked = v.Boolean() }},
	})
}

// column is a column that readColumns reads, flat or a list, and how its
// values go into a row: an optional column's nulls are null values, and
// a list's elements come one by one (an empty list as one null).
type column[T any] struct {
	name string
	set  func(*T, parquet.Value)
}

// readColumns reads the rows of a Parquet file column by column, filling
// only the columns given.
func readColumns[T any](ctx context.Context, name string, cols []column[T]) ([]T, error) {
	f, closer, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	index := make([]int, len(cols))
	for c, col := range cols {
		leaf, ok := f.Schema().Lookup(strings.Split(col.name, ".")...)
		if !ok {
			return nil, noColumn(name, col.name)
		}
		if leaf.MaxRepetitionLevel > 1 {
			return nil, fmt.Errorf("%s: column %q is nested more than a list", name, col.name)
		}
		index[c] = leaf.ColumnIndex
	}
	rows := make([]T, f.NumRows())
	buf := make([]parquet.Value, 4096)
	base := 0
	for _, rg := range f.RowGroups() {
		n := int(rg.NumRows())
		for c, col := range cols {
			i := base
			err := eachPage(rg.ColumnChunks()[index[c]], func(vr parquet.ValueReader) error {
				for {
					k, err := vr.ReadValues(buf)
					for _, v := range buf[:k] {
						if i == base+n && v.RepetitionLevel() == 0 {
							return fmt.Errorf("column %s has more values than rows", col.name)
						}
						if v.RepetitionLevel() > 0 {
							col.set(&rows[i-1], v) // the next element of a list
							continue
						}
						col.set(&rows[i], v)
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
				err = fmt.Errorf("column %s has %d values for %d rows", col.name, i-base, n)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		base += n
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
