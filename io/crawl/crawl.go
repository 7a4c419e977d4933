// Package crawl reads crawl dumps: Parquet tables with a text (or raw HTML)
// column and optional url, id and date columns, as FineWeb publishes
// them, and JSON lines (.jsonl, .json, .ndjson, plain or compressed as .gz
// or .zst) with the same keys, as C4, Dolma and RedPajama do (jsonl.go). Work is cut by row group so one large file still spreads over every
// worker, and every error names the file, and where it can, the row and
// column.
//
// Its errors are of three kinds, which IsBadInput and IsChanged tell
// apart: bad input (not Parquet, a corrupt footer or page, a wanted column
// missing or of the wrong type), which --on-bad-file=skip may skip;
// a file that changed during the run; and everything else, chiefly failed
// reads (the network, an object store, the disk, after package objstore's
// retries), which must fail the work so that it is tried again.
package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/neardup/neardup/io/objstore"
	"github.com/neardup/neardup/io/store"
)

// Columns names the input columns. Text is read unless HTML is set, in which
// case the HTML column is read and its visible text extracted. URL, ID and
// Date are optional unless their Required flag is set (the user named them
// on the command line); an empty name means "do not read".
type Columns struct {
	Text, HTML, URL, ID, Date             string
	Score                                 string // a numeric column --keep=max/min ranks by; required when named
	Redirect                              string // the column of the URL a row redirects to (--redirect-column); required when named
	URLRequired, IDRequired, DateRequired bool
}

// Split is one row group of one input file: the unit of parallel reading.
type Split struct {
	FileIndex int    // position of the file in the sorted list of matched files
	Path      string // the file
	RowGroup  int    // index of the row group in the file
	FirstRow  int64  // index in the file of the row group's first row
	NumRows   int64
	// ContentBytes is the size of the row group's text (or HTML) column
	// chunk before compression, from the footer: about its text's bytes.
	ContentBytes int64
	// Pin is the version of the file the run reads (zero: any).
	Pin Pin
	// Footer is the file's footer cut to the split's row group, and
	// FooterAt where the file's own begins (footer.go): a pinned
	// Parquet split reads only its column chunks. nil: read the file's.
	Footer   []byte
	FooterAt int64
	// Offset and Length are the bytes of an uncompressed JSON lines file
	// that the split holds (Length -1: to the end, as for a compressed
	// one), and FirstLine the number (from 1) of the line at Offset, for
	// errors; zero for Parquet.
	Offset, Length, FirstLine int64
}

// Pin is a version of a file: its size and its store's name for the
// version (store.Version), as the run's launcher found them. A file read
// with a Pin that is no longer its version fails with objstore.ErrChanged,
// naming it: a file rewritten during a run must fail it, not mix two
// versions of its rows.
type Pin struct {
	Size    int64
	Version string
}

// Row is one input row as neardup sees it.
type Row struct {
	Index    int64 // row index in the file
	ID       string
	URL      string
	Date     string
	Content  string // the text, or the raw HTML with Columns.HTML
	Null     bool   // the text (or HTML) value is null
	Score    float64
	HasScore bool   // the Score column's value is present (not null)
	Redirect string // the URL the row redirects to; empty: none
	TypeNote string // set when a value of an unexpected type was read as text
}

// binding is where each wanted column sits in a file's schema.
type binding struct {
	content, url, id, date int           // leaf column index, -1 when absent
	score                  int           // the Score column's, -1 when not wanted
	redirect               int           // the Redirect column's, -1 when not wanted
	dateUnit               time.Duration // a timestamp date column's unit, 0 otherwise
}

// ContentColumn is the column that carries the document.
func (c Columns) ContentColumn() string {
	if c.HTML != "" {
		return c.HTML
	}
	return c.Text
}

func bind(path string, schema *parquet.Schema, cols Columns) (binding, error) {
	look := func(name string, required bool, mustBeText bool) (int, error) {
		if name == "" {
			return -1, nil
		}
		leaf, ok := schema.Lookup(name)
		if !ok {
			if required {
				return -1, fmt.Errorf("%s: column %q not found (the file's columns: %s)", path, name, strings.Join(columnNames(schema), ", "))
			}
			return -1, nil
		}
		if leaf.MaxRepetitionLevel > 0 {
			return -1, fmt.Errorf("%s: column %q is repeated; neardup reads one value per row", path, name)
		}
		if mustBeText && leaf.Node.Type().Kind() != parquet.ByteArray {
			return -1, fmt.Errorf("%s: column %q has type %s, want a string (BYTE_ARRAY) column", path, name, leaf.Node.Type())
		}
		return leaf.ColumnIndex, nil
	}
	var b binding
	var err error
	if b.content, err = look(cols.ContentColumn(), true, true); err != nil {
		return b, err
	}
	if b.url, err = look(cols.URL, cols.URLRequired, false); err != nil {
		return b, err
	}
	if b.id, err = look(cols.ID, cols.IDRequired, false); err != nil {
		return b, err
	}
	if b.date, err = look(cols.Date, cols.DateRequired, false); err != nil {
		return b, err
	}
	if b.score, err = look(cols.Score, true, false); err != nil {
		return b, err
	}
	if b.redirect, err = look(cols.Redirect, true, true); err != nil {
		return b, err
	}
	if b.score >= 0 {
		leaf, _ := schema.Lookup(cols.Score)
		switch leaf.Node.Type().Kind() {
		case parquet.Int32, parquet.Int64, parquet.Float, parquet.Double:
		default:
			return b, fmt.Errorf("%s: column %q has type %s, want a number (INT32, INT64, FLOAT or DOUBLE) to rank documents by", path, cols.Score, leaf.Node.Type())
		}
	}
	if leaf, ok := schema.Lookup(cols.Date); ok && b.date >= 0 {
		if lt := leaf.Node.Type().LogicalType(); lt != nil {
			if ts, ok := lt.Value.(*format.TimestampType); ok && ts.Unit.Value != nil {
				b.dateUnit = ts.Unit.Value.Duration()
			}
		}
	}
	return b, nil
}

func columnNames(schema *parquet.Schema) []string {
	var names []string
	for _, f := range schema.Fields() {
		names = append(names, f.Name())
	}
	return names
}

// BadInputError is an error in what a file holds, as opposed to reading
// it: not Parquet, a corrupt footer or page, a wanted column missing,
// repeated or of the wrong type. Reading it again gives the same error.
type BadInputError struct{ Err error }

func (e *BadInputError) Error() string { return e.Err.Error() }
func (e *BadInputError) Unwrap() error { return e.Err }

// ReadError is a failure to read a file's bytes (to open it, the network,
// an object store, the disk) that package objstore's retries did not
// mend, however the Parquet decoder went on to report it. The file may
// well be fine: the work must fail, to be tried again.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// IsBadInput reports whether err, from this package, is the input's fault
// (a BadInputError not caused by a failed read): what --on-bad-file=skip
// may skip. Failed reads and files that changed during the run are not.
func IsBadInput(err error) bool {
	var bad *BadInputError
	var read *ReadError
	return errors.As(err, &bad) && !errors.As(err, &read) && !IsChanged(err)
}

// IsChanged reports whether err says that a file changed during the run
// (an object no longer the version opened, a row group the footer read
// earlier had and the file has no longer).
func IsChanged(err error) bool { return errors.Is(err, objstore.ErrChanged) }

// source is an open file as parquet-go reads it: it marks the errors of
// reading the file's bytes as ReadErrors, and remembers the first, so that
// a decoder's error is not taken for bad input when it follows a failed
// read, even should the decoder lose the failure from its error's chain.
type source struct {
	store.ReaderAt
	mu     sync.Mutex
	failed *ReadError
}

func (s *source) ReadAt(p []byte, off int64) (int, error) {
	n, err := s.ReaderAt.ReadAt(p, off)
	if err == nil || err == io.EOF { // io.EOF: a read past the end, as a truncated file asks for
		return n, err
	}
	e := &ReadError{Err: err}
	s.mu.Lock()
	if s.failed == nil {
		s.failed = e
	}
	s.mu.Unlock()
	return n, e
}

// classify marks err, met while decoding the file, as bad input, unless
// reading failed (a ReadError in its chain, or a read of this file
// failed before it), or the file changed during the run.
func (s *source) classify(err error) error {
	var read *ReadError
	switch {
	case err == nil || errors.As(err, &read) || IsChanged(err):
		return err
	}
	s.mu.Lock()
	failed := s.failed
	s.mu.Unlock()
	if failed != nil {
		return &ReadError{Err: fmt.Errorf("%w (after a failed read: %v)", err, failed.Err)}
	}
	return &BadInputError{Err: err}
}

// badColumns marks an error of bind: always bad input.
func badColumns(err error) error {
	if err == nil {
		return nil
	}
	return &BadInputError{Err: err}
}

// unreadable is what to say of a file's data that could not be read:
// bad, when what it holds is at fault, and failed when reading it did,
// so that neither the run's hint nor a user takes a network error for a
// bad file.
func unreadable(err error, bad, failed string) string {
	if IsBadInput(err) {
		return bad
	}
	return failed
}

// open opens a Parquet file; with pageIndex, it reads the file's page
// index too, which lets a seek skip the pages before its row (without it,
// parquet-go decodes them).
func open(ctx context.Context, path string, pin Pin, pageIndex bool) (*parquet.File, *source, error) {
	r, size, err := openPinned(ctx, path, pin)
	if err != nil {
		return nil, nil, err
	}
	src := &source{ReaderAt: r}
	var f *parquet.File
	if err = checkMagic(src, size); err == nil {
		f, err = openOn(r, src, src, size, pageIndex)
	} else {
		r.Close()
		err = src.classify(err)
	}
	if err != nil {
		if IsBadInput(err) {
			return nil, nil, fmt.Errorf("%s: not a readable Parquet file: %w", path, err)
		}
		return nil, nil, fmt.Errorf("%s: reading the Parquet footer failed: %w", path, err)
	}
	return f, src, nil
}

// openOn opens the Parquet file that view shows in size bytes, read
// through src (r's reads), and bounds r's blocks to its column chunks
// (chunkBounds). On failure it closes r and returns parquet-go's error,
// classified (source.classify).
func openOn(r store.ReaderAt, src *source, view io.ReaderAt, size int64, pageIndex bool) (*parquet.File, error) {
	f, err := parquet.OpenFile(view, size,
		parquet.SkipPageIndex(!pageIndex), parquet.SkipBloomFilters(true), parquet.SkipMagicBytes(true))
	if err != nil {
		r.Close()
		return nil, src.classify(err)
	}
	if b, ok := r.(interface{ Bound(...int64) }); ok {
		b.Bound(chunkBounds(f)...)
	}
	return f, nil
}

// checkMagic checks the 4 bytes a Parquet file begins with, as
// parquet-go would, but reads only them where the store can (objstore's
// ReadDirect): its ReadAt takes a 64 KiB head for them, which every open
// of a file paid (the sample's 1.4 MB file read 1.48x over).
func checkMagic(src *source, size int64) error {
	if size < 12 {
		return fmt.Errorf("%d bytes, too short for Parquet", size)
	}
	var magic [4]byte
	var err error
	if d, ok := src.ReaderAt.(interface{ ReadDirect([]byte, int64) error }); ok {
		if err = d.ReadDirect(magic[:], 0); err != nil {
			err = &ReadError{Err: err}
		}
	} else {
		_, err = src.ReadAt(magic[:], 0)
	}
	switch {
	case err != nil:
		return fmt.Errorf("reading magic header of parquet file: %w", err)
	case string(magic[:]) != "PAR1":
		return fmt.Errorf("invalid magic header of parquet file: %q", magic[:])
	}
	return nil
}

// chunkBounds are where the file's column chunks begin and end: an
// object store's blocks stop there (objstore's Bound), so that a split
// fetches its own row group's chunks and not the next one's, which
// another split reads.
func chunkBounds(f *parquet.File) []int64 {
	var out []int64
	for _, rg := range f.Metadata().RowGroups {
		for _, c := range rg.Columns {
			md := c.MetaData
			start := md.DataPageOffset
			if d := md.DictionaryPageOffset; d > 0 && d < start {
				start = d
			}
			out = append(out, start, start+md.TotalCompressedSize)
		}
	}
	return out
}

// openPinned opens the file at path, of any format, for random access,
// and checks that it is the version pin names (when nonzero). Its errors
// name the file: ErrChanged for another version, a ReadError otherwise.
func openPinned(ctx context.Context, path string, pin Pin) (store.ReaderAt, int64, error) {
	r, size, err := store.OpenReaderAt(store.ReadsAs(ctx, store.ReadsInput), path)
	if err == nil && pin != (Pin{}) {
		if err = checkPin(ctx, path, r, size, pin); err != nil {
			r.Close()
		}
	}
	if err != nil {
		if !IsChanged(err) {
			err = &ReadError{Err: err}
		}
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return r, size, nil
}

// checkPin fails with objstore.ErrChanged when the file r opened is not
// the version pin names.
func checkPin(ctx context.Context, path string, r store.ReaderAt, size int64, pin Pin) error {
	if size != pin.Size {
		return fmt.Errorf("%d bytes, %d when the run began: the file %w", size, pin.Size, objstore.ErrChanged)
	}
	if pin.Version == "" {
		return nil
	}
	v, err := store.ReaderVersion(ctx, path, r)
	if err != nil {
		return err
	}
	if v != pin.Version {
		return fmt.Errorf("version %s, %s when the run began: the file %w", v, pin.Version, objstore.ErrChanged)
	}
	return nil
}

// Splits opens one input file, checks that it has the wanted columns, and
// returns one Split per row group.
func Splits(ctx context.Context, fileIndex int, path string, cols Columns) ([]Split, error) {
	return SplitsPinned(ctx, fileIndex, path, Pin{}, cols)
}

// SplitsPinned is Splits of the version pin of the file: it, and every
// read of its splits, fail with objstore.ErrChanged on any other.
func SplitsPinned(ctx context.Context, fileIndex int, path string, pin Pin, cols Columns) ([]Split, error) {
	if IsJSONLines(path) {
		return jsonlSplits(ctx, fileIndex, path, pin, cols)
	}
	f, c, err := open(ctx, path, pin, false)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	b, err := bind(path, f.Schema(), cols)
	if err != nil {
		return nil, badColumns(err)
	}
	var splits []Split
	var first int64
	md := f.Metadata()
	meta := md.RowGroups
	// Only a pinned split may carry its footer: the pin proves the bytes
	// it reads are those the footer describes.
	var footerAt int64 = -1
	if pin.Size > 0 {
		if footerAt, err = footerStart(c, f.Size()); err != nil {
			return nil, c.classify(fmt.Errorf("%s: not a readable Parquet file: %w", path, err))
		}
	}
	for i, rg := range f.RowGroups() {
		n := rg.NumRows()
		sp := Split{FileIndex: fileIndex, Path: path, RowGroup: i, FirstRow: first, NumRows: n, Pin: pin}
		if i < len(meta) && b.content < len(meta[i].Columns) {
			sp.ContentBytes = meta[i].Columns[b.content].MetaData.TotalUncompressedSize
		}
		if footerAt > 0 && i < len(meta) {
			if sp.Footer, err = splitFooter(md, i); err != nil {
				return nil, fmt.Errorf("%s: row group %d: cutting its footer: %w", path, i, err)
			}
			if sp.Footer != nil {
				sp.FooterAt = footerAt
			}
		}
		splits = append(splits, sp)
		first += n
	}
	return splits, nil
}

// ReadSplit calls fn for every row of the split, in row order.
func ReadSplit(ctx context.Context, sp Split, cols Columns, fn func(Row) error) error {
	return readRows(ctx, sp, 0, sp.NumRows, cols, fn)
}

// readRows calls fn for n rows of the split from its skip-th on: the
// pages before them are skipped where the file's page index allows.
func readRows(ctx context.Context, sp Split, skip, n int64, cols Columns, fn func(Row) error) error {
	if IsJSONLines(sp.Path) {
		return jsonlRead(ctx, sp, skip, n, cols, fn)
	}
	if sp.Footer != nil && skip == 0 && sp.Pin.Size > 0 {
		f, c, err := openSplit(ctx, sp)
		if err != nil {
			return err
		}
		defer c.Close()
		return readOpen(f, c, sp, 0, skip, n, cols, fn)
	}
	f, c, err := open(ctx, sp.Path, sp.Pin, skip > 0)
	if err != nil {
		return err
	}
	defer c.Close()
	return readOpen(f, c, sp, sp.RowGroup, skip, n, cols, fn)
}

// readOpen is readRows on the split's file, open, whose row group number
// group is the split's (sp.RowGroup in the file; 0 when opened with the
// split's own footer). The errors of fn are returned as they are.
func readOpen(f *parquet.File, src *source, sp Split, group int, skip, n int64, cols Columns, fn func(Row) error) error {
	b, err := bind(sp.Path, f.Schema(), cols)
	if err != nil {
		return badColumns(err)
	}
	groups := f.RowGroups()
	// A split made from the footer of another version of the file.
	if group >= len(groups) {
		return fmt.Errorf("%s: row group %d not found (the file has %d): the file %w", sp.Path, sp.RowGroup, len(groups), objstore.ErrChanged)
	}
	if k := groups[group].NumRows(); k != sp.NumRows {
		return fmt.Errorf("%s: row group %d has %d rows, %d when the run began: the file %w", sp.Path, sp.RowGroup, k, sp.NumRows, objstore.ErrChanged)
	}
	rows := groups[group].Rows()
	defer rows.Close()
	if skip > 0 {
		if err := rows.SeekToRow(skip); err != nil {
			err = src.classify(err)
			return fmt.Errorf("%s: row group %d: seeking row %d: %w", sp.Path, sp.RowGroup, sp.FirstRow+skip, err)
		}
	}
	buf := make([]parquet.Row, min(64, n))
	index := sp.FirstRow + skip
	end := index + n
	for index < end {
		k, err := rows.ReadRows(buf[:min(int64(len(buf)), end-index)])
		for _, pr := range buf[:k] {
			row := Row{Index: index, Null: true}
			for _, v := range pr {
				switch v.Column() {
				case b.content:
					if !v.IsNull() {
						row.Content, row.Null = string(v.ByteArray()), false
					}
				case b.url:
					row.URL = valueString(v)
				case b.id:
					row.ID = valueString(v)
				case b.score:
					row.Score, row.HasScore = numberOf(v)
				case b.redirect:
					row.Redirect = strings.TrimSpace(valueString(v))
				case b.date:
					if b.dateUnit > 0 && v.Kind() == parquet.Int64 {
						row.Date = time.Unix(0, 0).Add(time.Duration(v.Int64()) * b.dateUnit).UTC().Format(time.RFC3339Nano)
					} else {
						row.Date = valueString(v)
					}
				}
			}
			if err := fn(row); err != nil {
				return err
			}
			index++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			err = src.classify(err)
			return fmt.Errorf("%s: row group %d, rows from %d: %s: %w", sp.Path, sp.RowGroup, index, unreadable(err, "column data unreadable", "reading column data failed"), err)
		}
	}
	if index != end {
		return src.classify(fmt.Errorf("%s: row group %d: read %d rows, footer says %d", sp.Path, sp.RowGroup, index-sp.FirstRow, sp.NumRows))
	}
	return nil
}

// numberOf reads a numeric value; ok is false for a null.
func numberOf(v parquet.Value) (float64, bool) {
	switch v.Kind() {
	case parquet.Int32:
		return float64(v.Int32()), true
	case parquet.Int64:
		return float64(v.Int64()), true
	case parquet.Float:
		return float64(v.Float()), true
	case parquet.Double:
		return v.Double(), true
	}
	return 0, false
}

// valueString renders an id, url or date value of any primitive type as
// text, so integer ids and timestamp dates read as users expect.
func valueString(v parquet.Value) string {
	switch v.Kind() {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return string(v.ByteArray())
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean())
	case parquet.Float:
		return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case parquet.Int96:
		return v.Int96().String()
	}
	if v.IsNull() {
		return ""
	}
	return v.String()
}

// ReadScores reads one numeric column of a whole file, and nothing else:
// the value of every row in file order (has[i] false for a null), for
// ranking documents without reading their text (recluster --keep=max:C).
func ReadScores(ctx context.Context, path, column string) (scores []float64, has []bool, err error) {
	if IsJSONLines(path) {
		return jsonlScores(ctx, path, column)
	}
	f, c, err := open(ctx, path, Pin{}, false)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	b, err := bind(path, f.Schema(), Columns{Score: column})
	if err != nil {
		return nil, nil, badColumns(err)
	}
	n := f.NumRows()
	scores, has = make([]float64, 0, n), make([]bool, 0, n)
	buf := make([]parquet.Value, 1024)
	for rg, group := range f.RowGroups() {
		pages := group.ColumnChunks()[b.score].Pages()
		for {
			page, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				err = c.classify(err)
				return nil, nil, fmt.Errorf("%s: row group %d, column %q %s: %w", path, rg, column, unreadable(err, "unreadable", "could not be read"), err)
			}
			values := page.Values()
			for {
				k, err := values.ReadValues(buf)
				for _, v := range buf[:k] {
					x, ok := numberOf(v)
					scores, has = append(scores, x), append(has, ok)
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					pages.Close()
					err = c.classify(err)
					return nil, nil, fmt.Errorf("%s: row group %d, column %q %s: %w", path, rg, column, unreadable(err, "unreadable", "could not be read"), err)
				}
			}
			parquet.Release(page)
		}
		pages.Close()
	}
	if int64(len(scores)) != n {
		return nil, nil, c.classify(fmt.Errorf("%s: column %q holds %d values, the file %d rows", path, column, len(scores), n))
	}
	return scores, has, nil
}

// ReadRow reads row number row (from 0) of the file at path, for a look at
// one document's text after a run (query's exact resemblance, serve's side
// by side): it opens the file once, with its page index, and decodes only
// the pages that hold the row.
func ReadRow(ctx context.Context, path string, row int64, cols Columns) (Row, error) {
	if IsJSONLines(path) {
		var found Row
		err := jsonlRows(ctx, 0, path, Pin{}, []int64{row}, cols, func(_ Split, r Row) error { found = r; return nil })
		return found, err
	}
	f, c, err := open(ctx, path, Pin{}, true)
	if err != nil {
		return Row{}, err
	}
	defer c.Close()
	var first int64
	for i, rg := range f.RowGroups() {
		if n := rg.NumRows(); row >= first && row < first+n {
			var found Row
			err := readOpen(f, c, Split{Path: path, RowGroup: i, FirstRow: first, NumRows: n}, i, row-first, 1, cols, func(r Row) error { found = r; return nil })
			return found, err
		}
		first += rg.NumRows()
	}
	return Row{}, fmt.Errorf("%s: no row %d (the file has %d rows); did the file change since the run?", path, row, first)
}

// ReadRows calls fn for the rows of the file at path whose numbers
// (from 0) rows holds, sorted and distinct, in that order, with the split
// each is in. It opens the file once, with its page index, and reads each
// row group that holds some of them from its first wanted row to its
// last, so that a few rows of a big file cost a few pages, and many cost
// one pass (transforms.Verify's features, read again for the pairs that
// need them). A nonzero pin is the version to read (see Pin).
func ReadRows(ctx context.Context, fileIndex int, path string, pin Pin, rows []int64, cols Columns, fn func(Split, Row) error) error {
	if len(rows) == 0 {
		return nil
	}
	if IsJSONLines(path) {
		return jsonlRows(ctx, fileIndex, path, pin, rows, cols, fn)
	}
	f, c, err := open(ctx, path, pin, true)
	if err != nil {
		return err
	}
	defer c.Close()
	var first int64
	for i, rg := range f.RowGroups() {
		n := rg.NumRows()
		end := first + n
		var in []int64 // the wanted rows in this row group
		for len(rows) > 0 && rows[0] < end {
			if rows[0] < first || (len(in) > 0 && rows[0] <= in[len(in)-1]) {
				return fmt.Errorf("%s: rows to read not sorted and distinct (row %d)", path, rows[0])
			}
			in, rows = append(in, rows[0]), rows[1:]
		}
		if len(in) > 0 {
			sp := Split{FileIndex: fileIndex, Path: path, RowGroup: i, FirstRow: first, NumRows: n}
			err := readOpen(f, c, sp, i, in[0]-first, in[len(in)-1]-in[0]+1, cols, func(r Row) error {
				if r.Index != in[0] {
					return nil
				}
				in = in[1:]
				return fn(sp, r)
			})
			if err != nil {
				return err
			}
		}
		first = end
	}
	if len(rows) > 0 {
		return fmt.Errorf("%s: no row %d (the file has %d rows); did the file change since the run?", path, rows[0], first)
	}
	return nil
}

// DocID is a document's ID: the position of its file in the sorted list of
// matched files in the high 24 bits, its row in the file in the low 40. It is
// the same on every run over the same input, with no global counter, and
// orders documents as the input does.
func DocID(fileIndex int, row int64) uint64 { return uint64(fileIndex)<<40 | uint64(row) }
