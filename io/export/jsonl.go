package export

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/store"
)

// CopyJSONLines writes to dst the lines of the JSON lines file src whose
// codes keep them, each as it is in src with the added columns' keys put
// before its closing brace, compressed as src is (by its name: gzip, zstd
// or none). codes (and values, with add's columns) are for every row of
// src from its first: src must hold exactly that many rows. It returns
// the rows written.
func CopyJSONLines(ctx context.Context, src, dst string, codes []Code, add Added, values []Values) (int64, error) {
	codec, ok := crawl.JSONLinesCompression(src)
	if !ok {
		return 0, fmt.Errorf("%s is not JSON lines", src)
	}
	if len(add.Columns) > 0 && len(values) != len(codes) {
		return 0, fmt.Errorf("%s: %d rows of added values for %d rows", src, len(values), len(codes))
	}
	out, err := store.OpenWrite(ctx, dst)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", dst, err)
	}
	fail := func(err error) (int64, error) {
		out.Abort() // never a truncated file in its place
		return 0, err
	}
	var w io.Writer = out
	var closer io.Closer
	switch codec {
	case "gzip":
		zw := gzip.NewWriter(out)
		w, closer = zw, zw
	case "zstd":
		zw, err := zstd.NewWriter(out, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return fail(err)
		}
		w, closer = zw, zw
	}
	var written, rows int64
	var buf []byte
	err = crawl.ReadLines(ctx, src, crawl.Pin{}, func(row int64, line []byte) error {
		rows = row + 1
		if row >= int64(len(codes)) {
			return fmt.Errorf("%s has more than the %d rows the run's docs table names: the file changed since the run", src, len(codes))
		}
		if !codes[row].Keeps() {
			return nil
		}
		buf = buf[:0]
		if len(add.Columns) > 0 {
			var err error
			if buf, err = add.appendJSON(buf, line, values[row]); err != nil {
				return fmt.Errorf("%s: row %d: %w", src, row, err)
			}
		} else {
			buf = append(buf, line...)
		}
		buf = append(buf, '\n')
		written++
		_, err := w.Write(buf)
		return err
	})
	if err != nil {
		return fail(err)
	}
	if rows != int64(len(codes)) {
		return fail(fmt.Errorf("%s has %d rows, the run's docs table names %d: the file changed since the run", src, rows, len(codes)))
	}
	if closer != nil {
		if err := closer.Close(); err != nil {
			return fail(err)
		}
	}
	if err := out.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", dst, err)
	}
	return written, nil
}

// appendJSON appends line, a JSON object, to b with the added columns'
// keys and values (JSON null where a value is absent) before its closing
// brace.
func (a Added) appendJSON(b, line []byte, v Values) ([]byte, error) {
	line = bytes.TrimSpace(line)
	if len(line) < 2 || line[0] != '{' || line[len(line)-1] != '}' {
		return nil, fmt.Errorf("not a JSON object")
	}
	body := line[:len(line)-1]
	b = append(b, body...)
	empty := len(bytes.TrimSpace(body[1:])) == 0
	for _, c := range a.Columns {
		if !empty {
			b = append(b, ',')
		}
		empty = false
		key, _ := json.Marshal(a.Prefix + string(c))
		b = append(b, key...)
		b = append(b, ':')
		switch c {
		case ColDocID:
			b = strconv.AppendInt(b, v.DocID, 10)
		case ColClusterID:
			b = appendOptional(b, v.Has&HasCluster != 0, func(b []byte) []byte { return strconv.AppendInt(b, v.ClusterID, 10) })
		case ColClusterSize:
			b = strconv.AppendInt(b, v.ClusterSize, 10)
		case ColKeptDocID:
			b = appendOptional(b, v.Has&HasKept != 0, func(b []byte) []byte { return strconv.AppendInt(b, v.KeptDocID, 10) })
		case ColResemblance:
			// The shortest decimal that reads back as the same float64.
			b = appendOptional(b, v.Has&HasResemblance != 0, func(b []byte) []byte { return strconv.AppendFloat(b, v.Resemblance, 'g', -1, 64) })
		}
	}
	return append(b, '}'), nil
}

func appendOptional(b []byte, set bool, value func([]byte) []byte) []byte {
	if !set {
		return append(b, "null"...)
	}
	return value(b)
}

// concatBytes writes parts to dst one after another, as they are, and
// returns the bytes written: JSON lines, and gzip members and zstd
// frames, concatenated are one file of their kind.
func concatBytes(ctx context.Context, parts []string, dst string) (int64, error) {
	out, err := store.OpenWrite(ctx, dst)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", dst, err)
	}
	var n int64
	for _, part := range parts {
		r, size, err := store.OpenReaderAt(ctx, part)
		if err != nil {
			out.Abort()
			return 0, fmt.Errorf("%s: %w", part, err)
		}
		k, err := io.Copy(out, io.NewSectionReader(r, 0, size))
		r.Close()
		if err != nil {
			out.Abort()
			return 0, fmt.Errorf("%s: %w", part, err)
		}
		n += k
	}
	if err := out.Close(); err != nil {
		return 0, fmt.Errorf("%s: %w", dst, err)
	}
	return n, nil
}
