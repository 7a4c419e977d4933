package tables

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/io/store"
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
	r, size, err := store.OpenReaderAt(store.ReadsAs(ctx, store.ReadsOutput), name)
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
// attach their identical copies; with meta, also the columns phase 1
// writes (ReadDocMeta's), which rank them under --keep.
func ReadCopies(ctx context.Context, name string, meta bool) ([]Doc, error) {
	cols := docMetaColumns()
	if !meta {
		cols = cols[:1] // doc_id
	}
	return readColumns(ctx, name, append(cols, column[Doc]{name: "identical_to", set: func(r *Doc, v parquet.Value) {
		if !v.IsNull() {
			x := v.Int64()
			r.IdenticalTo = &x
		}
	}}))
}

// ReadSketches reads a sketches shard as Read[Sketch] does, column by
// column (3 times faster on the sketch lists).
func ReadSketches(ctx context.Context, name string) ([]Sketch, error) {
	return readColumns(ctx, name, append(identityColumns(), column[Sketch]{name: "sketch.list.element", set: func(r *Sketch, v parquet.Value) {
		if !v.IsNull() {
			r.Sketch = append(r.Sketch, v.Int64())
		}
	}}))
}

// ReadIdentityKeys reads the doc_id and identity_key columns of a
// sketches shard: what an update's identical shortcut needs of the
// index's representatives.
func ReadIdentityKeys(ctx context.Context, name string) ([]Sketch, error) {
	return readColumns(ctx, name, identityColumns())
}

func identityColumns() []column[Sketch] {
	return []column[Sketch]{
		{name: "doc_id", integer: func(r *Sketch, x int64) { r.DocID = x }},
		{name: "identity_key", integer: func(r *Sketch, x int64) { r.IdentityKey = x }},
	}
}

// ReadDocMeta reads the columns of a docs shard that phase 1 writes (all
// but the cluster columns, which stay empty) column by column: an update
// rewrites the index's docs rows with new cluster columns.
func ReadDocMeta(ctx context.Context, name string) ([]Doc, error) {
	return readColumns(ctx, name, docMetaColumns())
}

// ReadClaims reads what redirect resolution needs of a docs shard, column
// by column: doc_id, url, sweep, status and redirect_to.
func ReadClaims(ctx context.Context, name string) ([]Doc, error) {
	var cols []column[Doc]
	for _, c := range docMetaColumns() {
		switch c.name {
		case "doc_id", "url", "sweep", "status", "redirect_to":
			cols = append(cols, c)
		}
	}
	return readColumns(ctx, name, cols)
}

// ReadDocs reads a docs shard as Read[Doc] does, column by column (query
// loads a whole docs table).
func ReadDocs(ctx context.Context, name string) ([]Doc, error) {
	return readColumns(ctx, name, append(docMetaColumns(),
		column[Doc]{name: "cluster_id", set: optionalInt(func(r *Doc, x *int64) { r.ClusterID = x })},
		column[Doc]{name: "identical_to", set: optionalInt(func(r *Doc, x *int64) { r.IdenticalTo = x })},
		column[Doc]{name: "is_representative", set: func(r *Doc, v parquet.Value) { r.IsRepresentative = v.Boolean() }},
		column[Doc]{name: "kept_doc_id", set: optionalInt(func(r *Doc, x *int64) { r.KeptDocID = x })},
		column[Doc]{name: "resemblance_to_kept", set: setResemblanceToKept},
		column[Doc]{name: "joined_by", newer: true, set: func(r *Doc, v parquet.Value) { r.JoinedBy = optionalString(v) }},
		column[Doc]{name: "redirect_target", newer: true, set: optionalInt(func(r *Doc, x *int64) { r.RedirectTarget = x })},
		column[Doc]{name: "redirect_hops", newer: true, set: func(r *Doc, v parquet.Value) {
			if !v.IsNull() {
				x := v.Int32()
				r.RedirectHops = &x
			}
		}},
	))
}

// optionalString reads a nullable string.
func optionalString(v parquet.Value) *string {
	if v.IsNull() {
		return nil
	}
	s := string(v.ByteArray())
	return &s
}

// ReadKeepColumns reads, column by column, what an export needs of a
// docs shard to decide which input rows it keeps: source_file,
// source_row, status, identical_to and is_representative; with values,
// also doc_id, cluster_id, kept_doc_id and resemblance_to_kept, for the
// columns it adds (the other fields stay zero).
func ReadKeepColumns(ctx context.Context, name string, values bool) ([]Doc, error) {
	var file, status string
	cols := []column[Doc]{
		{name: "source_file", set: func(r *Doc, v parquet.Value) { r.SourceFile = reuse(&file, v) }},
		{name: "source_row", integer: func(r *Doc, x int64) { r.SourceRow = x }},
		{name: "status", set: func(r *Doc, v parquet.Value) { r.Status = reuse(&status, v) }},
		{name: "identical_to", set: optionalInt(func(r *Doc, x *int64) { r.IdenticalTo = x })},
		{name: "is_representative", set: func(r *Doc, v parquet.Value) { r.IsRepresentative = v.Boolean() }},
	}
	if values {
		cols = append(cols,
			column[Doc]{name: "doc_id", integer: func(r *Doc, x int64) { r.DocID = x }},
			column[Doc]{name: "cluster_id", set: optionalInt(func(r *Doc, x *int64) { r.ClusterID = x })},
			column[Doc]{name: "kept_doc_id", set: optionalInt(func(r *Doc, x *int64) { r.KeptDocID = x })},
			column[Doc]{name: "resemblance_to_kept", set: setResemblanceToKept},
		)
	}
	return readColumns(ctx, name, cols)
}

// optionalInt sets an optional int64 field from a value, nil when null.
func optionalInt(set func(*Doc, *int64)) func(*Doc, parquet.Value) {
	return func(r *Doc, v parquet.Value) {
		if !v.IsNull() {
			x := v.Int64()
			set(r, &x)
		}
	}
}

func setResemblanceToKept(r *Doc, v parquet.Value) { r.ResemblanceToKept = optionalDouble(v) }

// docMetaColumns are the docs columns phase 1 writes, doc_id first. The
// low-cardinality strings (sweep, source file, status, extraction) share
// one string per run of equal values: the list is one read's.
func docMetaColumns() []column[Doc] {
	optional := optionalString
	var sweep, file, status, extraction string
	return []column[Doc]{
		{name: "doc_id", integer: func(r *Doc, x int64) { r.DocID = x }},
		{name: "id", set: func(r *Doc, v parquet.Value) { r.ID = optional(v) }},
		{name: "url", set: func(r *Doc, v parquet.Value) { r.URL = optional(v) }},
		{name: "date", set: func(r *Doc, v parquet.Value) { r.Date = optional(v) }},
		{name: "sweep", set: func(r *Doc, v parquet.Value) { r.Sweep = reuse(&sweep, v) }},
		{name: "source_file", set: func(r *Doc, v parquet.Value) { r.SourceFile = reuse(&file, v) }},
		{name: "source_row", integer: func(r *Doc, x int64) { r.SourceRow = x }},
		{name: "status", set: func(r *Doc, v parquet.Value) { r.Status = reuse(&status, v) }},
		{name: "reason", set: func(r *Doc, v parquet.Value) { r.Reason = optional(v) }},
		{name: "extraction", set: func(r *Doc, v parquet.Value) { r.Extraction = reuse(&extraction, v) }},
		{name: "token_count", integer: func(r *Doc, x int64) { r.TokenCount = x }},
		{name: "shingle_count", integer: func(r *Doc, x int64) { r.ShingleCount = x }},
		{name: "sketch_size", integer: func(r *Doc, x int64) { r.SketchSize = int32(x) }},
		{name: "content_fingerprint", integer: func(r *Doc, x int64) { r.ContentFingerprint = x }},
		{name: "lexical_fingerprint", integer: func(r *Doc, x int64) { r.LexicalFingerprint = x }},
		{name: "redirect_to", newer: true, set: func(r *Doc, v parquet.Value) { r.RedirectTo = optional(v) }},
	}
}

// ReadURLs reads a urls shard as Read[URL] does, column by column (the
// sweeps share one string per run of equal values).
func ReadURLs(ctx context.Context, name string) ([]URL, error) {
	var first, last string
	return readColumns(ctx, name, []column[URL]{
		{name: "url", set: func(r *URL, v parquet.Value) { r.URL = string(v.ByteArray()) }},
		{name: "first_sweep", set: func(r *URL, v parquet.Value) { r.FirstSweep = reuse(&first, v) }},
		{name: "last_sweep", set: func(r *URL, v parquet.Value) { r.LastSweep = reuse(&last, v) }},
		{name: "docs", integer: func(r *URL, x int64) { r.Docs = x }},
		{name: "last_doc_id", integer: func(r *URL, x int64) { r.LastDocID = x }},
		{name: "doc_ids.list.element", newer: true, set: func(r *URL, v parquet.Value) {
			if !v.IsNull() {
				r.DocIDs = append(r.DocIDs, v.Int64())
			}
		}},
	})
}

// reuse returns the string of v, reusing *last when they are equal (a
// column of few distinct values allocates once per run of them).
func reuse(last *string, v parquet.Value) string {
	if b := v.ByteArray(); string(b) != *last {
		*last = string(b)
	}
	return *last
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
	shards, err := store.List(ctx, store.Join(dir, table, "*.parquet"))
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
		{name: "shingle", integer: func(r *Posting, x int64) { r.Shingle = x }},
		{name: "doc_id", integer: func(r *Posting, x int64) { r.DocID = x }},
		{name: "sketch_size", integer: func(r *Posting, x int64) { r.SketchSize = int32(x) }},
		{name: "rank", integer: func(r *Posting, x int64) { r.Rank = int32(x) }},
	})
}

// ReadPairCounts reads the columns of a pairs shard that an update needs
// (doc_a, doc_b, shared, sketch sizes, resemblance, linked, and the
// verified resemblances its carried links take) column by column, as
// ReadPostings does.
func ReadPairCounts(ctx context.Context, name string) ([]Pair, error) {
	return readColumns(ctx, name, []column[Pair]{
		{name: "doc_a", integer: func(r *Pair, x int64) { r.DocA = x }},
		{name: "doc_b", integer: func(r *Pair, x int64) { r.DocB = x }},
		{name: "shared", integer: func(r *Pair, x int64) { r.Shared = int32(x) }},
		{name: "sketch_size_a", integer: func(r *Pair, x int64) { r.SketchSizeA = int32(x) }},
		{name: "sketch_size_b", integer: func(r *Pair, x int64) { r.SketchSizeB = int32(x) }},
		{name: "resemblance", set: func(r *Pair, v parquet.Value) { r.Resemblance = v.Double() }},
		{name: "linked", set: func(r *Pair, v parquet.Value) { r.Linked = v.Boolean() }},
		{name: "exact_resemblance", set: func(r *Pair, v parquet.Value) { r.ExactResemblance = optionalDouble(v) }},
		{name: "bloom_resemblance", set: func(r *Pair, v parquet.Value) { r.BloomResemblance = optionalDouble(v) }},
		{name: "dense_resemblance", newer: true, set: func(r *Pair, v parquet.Value) { r.DenseResemblance = optionalDouble(v) }},
	})
}

// optionalDouble is an optional DOUBLE column's value: nil for a null.
func optionalDouble(v parquet.Value) *float64 {
	if v.IsNull() {
		return nil
	}
	x := v.Double()
	return &x
}

// column is a column that readColumns reads, flat or a list, and how its
// values go into a row: an optional column's nulls are null values, and
// a list's elements come one by one (an empty list as one null). A
// required INT32 or INT64 column may give integer instead, which reads
// the page's values without boxing each in a parquet.Value (twice as
// fast).
type column[T any] struct {
	name    string
	set     func(*T, parquet.Value)
	integer func(*T, int64)
	// newer is set on a column later versions added: a file without it
	// (written before) leaves the field zero.
	newer bool
}

// readIntegers reads the values of a page of a required integer column
// into rows through set, advancing *i, if the page can give them as
// integers; done reports whether it could.
func readIntegers[T any](vr parquet.ValueReader, rows []T, set func(*T, int64), i *int) (done bool, err error) {
	var buf [4096]int64
	var buf32 [4096]int32
	for k := 0; ; {
		var n int
		var err error
		switch r := vr.(type) {
		case parquet.Int64Reader:
			n, err = r.ReadInt64s(buf[:])
		case parquet.Int32Reader:
			n, err = r.ReadInt32s(buf32[:])
			for j, x := range buf32[:n] {
				buf[j] = int64(x)
			}
		default:
			return false, nil
		}
		if k+n > len(rows) {
			return true, fmt.Errorf("a column has more values than rows")
		}
		for j, x := range buf[:n] {
			set(&rows[k+j], x)
		}
		k += n
		*i += n
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return true, err
		}
	}
}

// readColumns reads the rows of a Parquet file column by column, filling
// only the columns given.
func readColumns[T any](ctx context.Context, name string, cols []column[T]) ([]T, error) {
	f, closer, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	present := cols[:0:0]
	for _, col := range cols {
		if _, ok := f.Schema().Lookup(strings.Split(col.name, ".")...); ok || !col.newer {
			present = append(present, col)
		}
	}
	cols = present
	index, flat := make([]int, len(cols)), make([]bool, len(cols))
	for c, col := range cols {
		leaf, ok := f.Schema().Lookup(strings.Split(col.name, ".")...)
		if !ok {
			return nil, noColumn(name, col.name)
		}
		if leaf.MaxRepetitionLevel > 1 {
			return nil, fmt.Errorf("%s: column %q is nested more than a list", name, col.name)
		}
		index[c] = leaf.ColumnIndex
		flat[c] = leaf.MaxDefinitionLevel == 0 && leaf.MaxRepetitionLevel == 0
	}
	for c := range cols {
		if cols[c].set == nil {
			integer := cols[c].integer // a page that gives no integers
			cols[c].set = func(r *T, v parquet.Value) { integer(r, v.Int64()) }
		}
	}
	rows := make([]T, f.NumRows())
	buf := make([]parquet.Value, 4096)
	base := 0
	for _, rg := range f.RowGroups() {
		n := int(rg.NumRows())
		for c, col := range cols {
			i := base
			err := EachPage(rg.ColumnChunks()[index[c]], func(vr parquet.ValueReader) error {
				if col.integer != nil && flat[c] {
					if done, err := readIntegers(vr, rows[i:base+n], col.integer, &i); done || err != nil {
						return err
					}
				}
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

// EachPage calls fn with the values of every page of a column chunk.
func EachPage(chunk parquet.ColumnChunk, fn func(parquet.ValueReader) error) error {
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
