package crawl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/io/objstore"
)

// JSON lines input: one JSON object per line, as C4 (.json.gz), Dolma and
// RedPajama (.jsonl.gz, .jsonl.zst) publish their crawls, read with the
// same column mapping as Parquet (Columns names keys of each object). A
// row is a line that is not blank; its index counts rows, not lines, and
// errors name the line (from 1). A compressed file is one split, read
// from its start; an uncompressed one is cut at line boundaries into
// splits of about jsonlSplitBytes, each read from its own byte offset.
// Each needs one pass over the file to find its rows (SplitsPinned):
// neither format has a footer that counts them.

// jsonlSplitBytes is about how many bytes of an uncompressed JSON lines
// file one split holds: a few seconds of a worker's time. A variable for
// the tests.
var jsonlSplitBytes int64 = 64 << 20

// JSONLinesTextBytes estimates the bytes of text in a JSON lines file of
// size bytes, without reading it, for sizing a run: the file's size, or
// four times it when compressed (web text compresses about 3-4x with
// gzip and zstd).
func JSONLinesTextBytes(path string, size int64) int64 {
	if c, _ := jsonlKind(path); c != plain {
		return 4 * size
	}
	return size
}

// compression is how a JSON lines file is compressed.
type compression int

const (
	plain compression = iota
	gzipped
	zstded
)

// jsonlKind reports whether path names a JSON lines file (.jsonl, .json
// or .ndjson, optionally followed by .gz or .zst) and how it is
// compressed; any other name is Parquet.
func jsonlKind(path string) (compression, bool) {
	name := strings.ToLower(path)
	c := plain
	switch {
	case strings.HasSuffix(name, ".gz"):
		c, name = gzipped, strings.TrimSuffix(name, ".gz")
	case strings.HasSuffix(name, ".zst"):
		c, name = zstded, strings.TrimSuffix(name, ".zst")
	}
	for _, ext := range []string{".jsonl", ".json", ".ndjson"} {
		if strings.HasSuffix(name, ext) {
			return c, true
		}
	}
	return plain, false
}

// IsJSONLines reports whether path is read as JSON lines (by its name:
// .jsonl, .json or .ndjson, optionally compressed as .gz or .zst) rather
// than as Parquet.
func IsJSONLines(path string) bool {
	_, ok := jsonlKind(path)
	return ok
}

// failedRead remembers the last error of the reader under a decompressor,
// so that a decompressor's error caused by a failed read is told from one
// caused by corrupt bytes.
type failedRead struct {
	r   io.Reader
	err error
}

func (f *failedRead) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && err != io.EOF {
		f.err = err
	}
	return n, err
}

// jsonlFile is an open JSON lines file, read line by line from a byte
// offset (0 for a compressed file).
type jsonlFile struct {
	path   string
	closer io.Closer
	under  *failedRead
	dec    io.Closer // the decompressor, if any
	br     *bufio.Reader
	line   int64 // the number (from 1) of the line last read
	long   []byte
}

// openJSONL opens the JSON lines file at path (at version pin, when
// nonzero) for reading its decompressed bytes from byte off to off+n
// (n < 0: to the end) of the file; off and n are for uncompressed files.
func openJSONL(ctx context.Context, path string, pin Pin, off, n int64, firstLine int64) (*jsonlFile, error) {
	c, _ := jsonlKind(path)
	r, size, err := openPinned(ctx, path, pin)
	if err != nil {
		return nil, err
	}
	if n < 0 || off+n > size {
		n = size - off
	}
	under := &failedRead{r: io.NewSectionReader(r, off, n)}
	f := &jsonlFile{path: path, closer: r, under: under, line: firstLine - 1}
	var src io.Reader = bufio.NewReaderSize(under, 1<<20)
	switch c {
	case gzipped:
		zr, err := gzip.NewReader(src)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("%s: %w", path, f.classify(fmt.Errorf("not a readable gzip file: %w", err)))
		}
		f.dec, src = zr, zr
	case zstded:
		zr, err := zstd.NewReader(src, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("%s: %w", path, f.classify(fmt.Errorf("not a readable zstd file: %w", err)))
		}
		f.dec, src = zr.IOReadCloser(), zr
	}
	f.br = bufio.NewReaderSize(src, 1<<20)
	return f, nil
}

func (f *jsonlFile) Close() error {
	if f.dec != nil {
		f.dec.Close()
	}
	return f.closer.Close()
}

// classify makes err a ReadError when a read under the decompressor
// failed, and a BadInputError otherwise (the bytes are not what their
// name says).
func (f *jsonlFile) classify(err error) error {
	if f.under.err != nil {
		return &ReadError{Err: fmt.Errorf("%w (%v)", err, f.under.err)}
	}
	return &BadInputError{Err: err}
}

// next returns the next line that is not blank, without its line ending,
// and the number of bytes it took in the decompressed file (with its
// ending and any blank lines before it); io.EOF after the last. The line
// is valid until the next call.
func (f *jsonlFile) next() ([]byte, int64, error) {
	var taken int64
	for {
		b, err := f.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			f.long = append(f.long[:0], b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = f.br.ReadSlice('\n')
				f.long = append(f.long, b...)
			}
			b = f.long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, fmt.Errorf("%s: line %d: %w", f.path, f.line+1, f.classify(fmt.Errorf("reading failed: %w", err)))
		}
		if len(b) == 0 && err != nil {
			return nil, taken, io.EOF
		}
		f.line++
		taken += int64(len(b))
		if line := bytes.TrimSpace(b); len(line) > 0 {
			return line, taken, nil
		}
		if err != nil {
			return nil, taken, io.EOF
		}
	}
}

// jsonlSplits reads the JSON lines file at path through once and returns
// its splits: one for a compressed file, one per jsonlSplitBytes or so of
// lines for an uncompressed one. The first row must be a JSON object with
// the content key (and the keys required), or the file is bad input.
func jsonlSplits(ctx context.Context, fileIndex int, path string, pin Pin, cols Columns) ([]Split, error) {
	c, _ := jsonlKind(path)
	f, err := openJSONL(ctx, path, pin, 0, -1, 1)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var splits []Split
	sp := Split{FileIndex: fileIndex, Path: path, Pin: pin, FirstLine: 1, Length: -1}
	var off, prevLine int64 // the byte offset and line number just after the last row
	for {
		line, taken, err := f.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(splits) == 0 && sp.NumRows == 0 {
			if err := checkKeys(path, f.line, line, cols); err != nil {
				return nil, err
			}
		}
		if c == plain && sp.NumRows > 0 && sp.ContentBytes >= jsonlSplitBytes {
			sp.Length = off - sp.Offset
			splits = append(splits, sp)
			sp = Split{FileIndex: fileIndex, Path: path, Pin: pin, RowGroup: sp.RowGroup + 1, FirstRow: sp.FirstRow + sp.NumRows,
				Offset: off, FirstLine: prevLine + 1, Length: -1}
		}
		sp.NumRows++
		sp.ContentBytes += taken
		off += taken
		prevLine = f.line
	}
	if sp.NumRows == 0 {
		return splits, nil // an empty file: no rows, no splits (as a Parquet file without row groups)
	}
	if c == plain {
		sp.Length = off - sp.Offset
	}
	return append(splits, sp), nil
}

// checkKeys checks the first row of a JSON lines file: a JSON object
// holding the content key and every key the user named.
func checkKeys(path string, line int64, b []byte, cols Columns) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return &BadInputError{Err: fmt.Errorf("%s: line %d: not a JSON object: %v", path, line, err)}
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, c := range []struct {
		name     string
		required bool
	}{{cols.ContentColumn(), true}, {cols.URL, cols.URLRequired}, {cols.ID, cols.IDRequired}, {cols.Date, cols.DateRequired}, {cols.Score, true}, {cols.Redirect, true}} {
		if _, ok := m[c.name]; c.name != "" && c.required && !ok {
			return &BadInputError{Err: fmt.Errorf("%s: line %d: column %q not found (the first row's keys: %s)", path, line, c.name, strings.Join(keys, ", "))}
		}
	}
	return nil
}

// jsonlRead calls fn for n rows of the split from its skip-th on (n < 0:
// every row to the split's end).
func jsonlRead(ctx context.Context, sp Split, skip, n int64, cols Columns, fn func(Row) error) error {
	f, err := openJSONL(ctx, sp.Path, sp.Pin, sp.Offset, sp.Length, max(sp.FirstLine, 1))
	if err != nil {
		return err
	}
	defer f.Close()
	index, end := sp.FirstRow, sp.FirstRow+skip+n
	for n < 0 || index < end {
		line, _, err := f.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if index == 0 {
			// The file's first row, as jsonlSplits checked it: a read
			// that makes no splits (jsonlScores) must refuse the same.
			if err := checkKeys(sp.Path, f.line, line, cols); err != nil {
				return err
			}
		}
		if index >= sp.FirstRow+skip {
			row, err := parseRow(line, cols)
			if err != nil {
				return &BadInputError{Err: fmt.Errorf("%s: line %d: %v", sp.Path, f.line, err)}
			}
			row.Index = index
			if err := fn(row); err != nil {
				return err
			}
		}
		index++
	}
	if n >= 0 && index != end {
		return fmt.Errorf("%s: split %d: read %d rows, %d when the run began: the file %w", sp.Path, sp.RowGroup, index-sp.FirstRow, skip+n, objstore.ErrChanged)
	}
	return nil
}

// parseRow reads the wanted keys of one JSON object. A missing key or a
// null is a null; a string is its value; for url, id and date, a number
// or boolean is its JSON text. A content value that is not a string is
// read as its JSON text, with TypeNote saying so.
func parseRow(b []byte, cols Columns) (Row, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return Row{}, fmt.Errorf("not a JSON object: %v", err)
	}
	row := Row{Null: true}
	text := func(key string) (string, bool, error) {
		raw, ok := m[key]
		if key == "" || !ok || string(raw) == "null" {
			return "", false, nil
		}
		if raw[0] == '"' {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return "", false, fmt.Errorf("key %q: %v", key, err)
			}
			return s, true, nil
		}
		return string(raw), true, nil
	}
	content := cols.ContentColumn()
	s, ok, err := text(content)
	if err != nil {
		return Row{}, err
	}
	if ok {
		row.Content, row.Null = s, false
		if raw := m[content]; raw[0] != '"' {
			row.TypeNote = fmt.Sprintf("key %q holds %s, not a string: read as its JSON text", content, jsonKind(raw))
		}
	}
	for _, c := range []struct {
		key string
		dst *string
	}{{cols.URL, &row.URL}, {cols.ID, &row.ID}, {cols.Date, &row.Date}, {cols.Redirect, &row.Redirect}} {
		if *c.dst, _, err = text(c.key); err != nil {
			return Row{}, err
		}
	}
	row.Redirect = strings.TrimSpace(row.Redirect)
	if raw, ok := m[cols.Score]; cols.Score != "" && ok {
		if x, err := strconv.ParseFloat(string(raw), 64); err == nil {
			row.Score, row.HasScore = x, true
		} else if string(raw) != "null" {
			return Row{}, fmt.Errorf("key %q holds %s, want a number to rank documents by", cols.Score, jsonKind(raw))
		}
	}
	return row, nil
}

// jsonKind names the kind of a JSON value.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonlRows is ReadRows of a JSON lines file.
func jsonlRows(ctx context.Context, fileIndex int, path string, pin Pin, rows []int64, cols Columns, fn func(Split, Row) error) error {
	splits, err := jsonlSplits(ctx, fileIndex, path, pin, cols)
	if err != nil {
		return err
	}
	var total int64
	for _, sp := range splits {
		end := sp.FirstRow + sp.NumRows
		total = end
		var in []int64
		for len(rows) > 0 && rows[0] < end {
			if rows[0] < sp.FirstRow || (len(in) > 0 && rows[0] <= in[len(in)-1]) {
				return fmt.Errorf("%s: rows to read not sorted and distinct (row %d)", path, rows[0])
			}
			in, rows = append(in, rows[0]), rows[1:]
		}
		if len(in) == 0 {
			continue
		}
		err := jsonlRead(ctx, sp, in[0]-sp.FirstRow, in[len(in)-1]-in[0]+1, cols, func(r Row) error {
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
	if len(rows) > 0 {
		return fmt.Errorf("%s: no row %d (the file has %d rows); did the file change since the run?", path, rows[0], total)
	}
	return nil
}

// jsonlScores is ReadScores of a JSON lines file, in one pass over it.
func jsonlScores(ctx context.Context, path, column string) (scores []float64, has []bool, err error) {
	whole := Split{Path: path, Length: -1, FirstLine: 1}
	err = jsonlRead(ctx, whole, 0, -1, Columns{Score: column}, func(r Row) error {
		scores, has = append(scores, r.Score), append(has, r.HasScore)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return scores, has, nil
}

// JSONLinesCompression is how the JSON lines file at path is compressed,
// by its name: "gzip", "zstd" or "" (none); ok is false for a file that is
// not JSON lines.
func JSONLinesCompression(path string) (codec string, ok bool) {
	c, ok := jsonlKind(path)
	switch c {
	case gzipped:
		return "gzip", ok
	case zstded:
		return "zstd", ok
	}
	return "", ok
}

// ReadLines calls fn with each row of the JSON lines file at path (at
// version pin, when nonzero), in order: its index and the line as it is
// in the file, without its line ending or surrounding blanks (valid until
// fn returns). An export copies them as they are.
func ReadLines(ctx context.Context, path string, pin Pin, fn func(row int64, line []byte) error) error {
	f, err := openJSONL(ctx, path, pin, 0, -1, 1)
	if err != nil {
		return err
	}
	defer f.Close()
	for row := int64(0); ; row++ {
		line, _, err := f.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(row, line); err != nil {
			return err
		}
	}
}
