package tables

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"

	"github.com/parquet-go/parquet-go"
)

// Lookups: the few rows of a finished shard whose key column holds a
// value, read from the pages that may hold it. Every table is written
// with a page index (each page's bounds, near the footer) and each shard
// sorted by the key its readers look up (docs and sketches by doc_id,
// clusters by cluster_id, members by cluster_id, urls by url, postings by
// shingle), so that a key's rows lie in one page or two of each column:
// a lookup reads the footer and page index once per open file, then
// those pages, whatever the table's size, locally or by ranged reads on
// an object store.

// LookupFile is one shard opened for lookups. It is not safe for
// concurrent use.
type LookupFile struct {
	Name   string
	f      *parquet.File
	r      io.Closer
	blocks []block // most recently read first, at most cachedBlocks
}

// Rows are read and kept in aligned blocks of blockRows rows of a row
// group, the cachedBlocks most recently read of each open file: a lookup
// decodes each column's page holding its row whole anyway (a zstd page
// of a docs shard holds hundreds of rows), so the rows beside it cost
// little more to keep, and the next lookup of a key near it (a cluster's
// members, the docs of a URL, a page of a server's listing) is served
// without decoding the pages again. At most cachedBlocks*blockRows rows
// a file, whatever the table's size.
const (
	blockRows    = 256
	cachedBlocks = 8
)

// block is the rows [first, first+len) of a row group, read as one type.
type block struct {
	typ   reflect.Type
	group int
	first int64
	rows  any // []T
}

// OpenLookup opens the shard name for lookups, reading its footer and
// page index.
func OpenLookup(ctx context.Context, name string) (*LookupFile, error) {
	f, closer, err := open(ctx, name)
	if err != nil {
		return nil, err
	}
	return &LookupFile{Name: name, f: f, r: closer}, nil
}

// Close closes the file.
func (l *LookupFile) Close() error { return l.r.Close() }

// Has reports whether the shard has the top-level column col (a flat
// column or a list).
func (l *LookupFile) Has(col string) bool {
	for _, f := range l.f.Schema().Fields() {
		if f.Name() == col {
			return true
		}
	}
	return false
}

// Int64Key is a key of an INT64 column.
func Int64Key(x int64) parquet.Value { return parquet.Int64Value(x) }

// StringKey is a key of a string (BYTE_ARRAY) column.
func StringKey(s string) parquet.Value { return parquet.ByteArrayValue([]byte(s)) }

// hit is a run of rows of one row group.
type hit struct {
	group      int
	first, end int64
}

// find returns the rows of l whose column col equals key, as runs of
// consecutive rows in file order.
func (l *LookupFile) find(col string, key parquet.Value) ([]hit, error) {
	return l.findAll(col, []parquet.Value{key})
}

// findAll returns the rows of l whose column col equals one of keys
// (sorted, ascending), as runs of consecutive rows in file order: each
// page that may hold some of them read once.
func (l *LookupFile) findAll(col string, keys []parquet.Value) ([]hit, error) {
	leaf, ok := l.f.Schema().Lookup(col)
	if !ok {
		return nil, noColumn(l.Name, col)
	}
	var hits []hit
	var vals []parquet.Value
	var buf []int64
	// A required INT64 key column is matched on its int64s.
	var ints []int64
	if leaf.Node.Type().Kind() == parquet.Int64 && leaf.Node.Required() {
		ints = make([]int64, len(keys))
		for i, k := range keys {
			ints[i] = k.Int64()
		}
	}
	for g, rg := range l.f.RowGroups() {
		chunk := rg.ColumnChunks()[leaf.ColumnIndex]
		typ := chunk.Type()
		// The pages whose bounds hold the key: all of them without a
		// page index.
		var firsts []int64
		ci, err1 := chunk.ColumnIndex()
		oi, err2 := chunk.OffsetIndex()
		if err1 != nil || err2 != nil || ci.NumPages() != oi.NumPages() {
			firsts = []int64{0}
		} else {
			for p := range ci.NumPages() {
				if ci.NullPage(p) {
					continue
				}
				// The first key at or above the page's minimum: is it
				// within its maximum?
				lo := ci.MinValue(p)
				k, _ := slices.BinarySearchFunc(keys, lo, typ.Compare)
				if k == len(keys) || typ.Compare(keys[k], ci.MaxValue(p)) > 0 {
					continue
				}
				firsts = append(firsts, oi.FirstRowIndex(p))
			}
		}
		whole := len(firsts) == 1 && (err1 != nil || err2 != nil)
		for _, first := range firsts {
			err := func() error {
				pages := chunk.Pages()
				defer pages.Close()
				if err := pages.SeekToRow(first); err != nil {
					return err
				}
				row := first
				for {
					page, err := pages.ReadPage()
					if errors.Is(err, io.EOF) {
						return nil
					}
					if err != nil {
						return err
					}
					n, err := matchPage(page, typ, keys, ints, &vals, &buf, func(j int) {
						r := row + int64(j)
						if k := len(hits) - 1; k >= 0 && hits[k].group == g && hits[k].end == r {
							hits[k].end++
						} else {
							hits = append(hits, hit{g, r, r + 1})
						}
					})
					parquet.Release(page)
					if err != nil {
						return err
					}
					row += int64(n)
					if !whole {
						return nil
					}
				}
			}()
			if err != nil {
				return nil, fmt.Errorf("%s: column %s: %w", l.Name, col, err)
			}
		}
	}
	return hits, nil
}

// matchPage calls match with the index of each value of page that is one
// of keys (as ints, for a required INT64 column, else nil), and returns
// the page's number of values.
func matchPage(page parquet.Page, typ parquet.Type, keys []parquet.Value, ints []int64, vals *[]parquet.Value, buf *[]int64, match func(int)) (int, error) {
	size := int(page.NumValues())
	if r, ok := page.Values().(parquet.Int64Reader); ok && ints != nil {
		*buf = slices.Grow((*buf)[:0], size)[:size]
		n, err := r.ReadInt64s(*buf)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		for j, v := range (*buf)[:n] {
			if _, ok := slices.BinarySearch(ints, v); ok {
				match(j)
			}
		}
		return n, nil
	}
	*vals = slices.Grow((*vals)[:0], size)[:size]
	n, err := page.Values().ReadValues(*vals)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	for j, v := range (*vals)[:n] {
		if _, ok := slices.BinarySearchFunc(keys, v, typ.Compare); ok {
			match(j)
		}
	}
	return n, nil
}

// Find returns the rows of l whose column col (a flat, required or
// optional column) equals key, in file order, each read whole.
func Find[T any](l *LookupFile, col string, key parquet.Value) ([]T, error) {
	return FindAll[T](l, col, []parquet.Value{key})
}

// FindAll is Find for several keys, sorted ascending: the rows of any of
// them, in file order, each page read once however many rows it holds.
func FindAll[T any](l *LookupFile, col string, keys []parquet.Value) ([]T, error) {
	hits, err := l.findAll(col, keys)
	if err != nil || len(hits) == 0 {
		return nil, err
	}
	rows, err := readRows[T](l, hits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name, err)
	}
	return rows, nil
}

// FindRange returns the rows of l from the first whose column col equals
// key, up to n of them, in file order: a page of a sorted shard's rows
// with one key (a cluster's members from the offset-th).
func FindRange[T any](l *LookupFile, col string, key parquet.Value, offset, n int64) ([]T, int64, error) {
	hits, err := l.find(col, key)
	if err != nil || len(hits) == 0 {
		return nil, 0, err
	}
	var total int64
	for _, h := range hits {
		total += h.end - h.first
	}
	var out []T
	for _, h := range hits {
		size := h.end - h.first
		if offset >= size {
			offset -= size
			continue
		}
		end := min(h.end, h.first+offset+n-int64(len(out)))
		rows, err := readRows[T](l, []hit{{h.group, h.first + offset, end}})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: %w", l.Name, err)
		}
		out, offset = append(out, rows...), 0
		if int64(len(out)) >= n {
			break
		}
	}
	return out, total, nil
}

// readRows reads the rows of runs, ascending: each run's rows copied from
// the blocks that hold them, a block not kept read through one reader of
// its row group, which serves a page it has decoded again to the next
// block in it. The rows share their slices and pointers with the kept
// blocks: callers read them, never change what they point to.
func readRows[T any](l *LookupFile, runs []hit) ([]T, error) {
	var n int64
	for _, h := range runs {
		n += h.end - h.first
	}
	out := make([]T, 0, n)
	typ := reflect.TypeFor[T]()
	groups := l.f.RowGroups()
	var rd *parquet.GenericReader[T]
	rdGroup := -1
	defer func() {
		if rd != nil {
			rd.Close()
		}
	}()
	for _, h := range runs {
		for at := h.first; at < h.end; {
			first := at - at%blockRows
			rows, ok := l.kept(typ, h.group, first)
			if !ok {
				rg := groups[h.group]
				if rdGroup != h.group {
					if rd != nil {
						rd.Close()
					}
					rd, rdGroup = parquet.NewGenericRowGroupReader[T](rg), h.group
				}
				r, err := readBlock(rd, first, min(first+blockRows, rg.NumRows()))
				if err != nil {
					return nil, err
				}
				l.keep(block{typ, h.group, first, r})
				rows = r
			}
			b := rows.([]T)
			end := min(h.end, first+int64(len(b)))
			out = append(out, b[at-first:end-first]...)
			at = end
		}
	}
	return out, nil
}

// readBlock reads the rows [first, end) through rd.
func readBlock[T any](rd *parquet.GenericReader[T], first, end int64) ([]T, error) {
	if err := rd.SeekToRow(first); err != nil {
		return nil, err
	}
	rows := make([]T, end-first)
	got, err := rd.Read(rows)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if got != len(rows) {
		return nil, fmt.Errorf("rows %d to %d: read %d", first, end, got)
	}
	return rows, nil
}

// kept returns the rows of a kept block, moving it to the front.
func (l *LookupFile) kept(typ reflect.Type, group int, first int64) (any, bool) {
	for i, b := range l.blocks {
		if b.typ == typ && b.group == group && b.first == first {
			copy(l.blocks[1:i+1], l.blocks[:i])
			l.blocks[0] = b
			return b.rows, true
		}
	}
	return nil, false
}

// keep puts b in front of the kept blocks, forgetting the least recently
// used past cachedBlocks.
func (l *LookupFile) keep(b block) {
	if len(l.blocks) < cachedBlocks {
		l.blocks = append(l.blocks, block{})
	}
	copy(l.blocks[1:], l.blocks)
	l.blocks[0] = b
}
