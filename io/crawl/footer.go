package crawl

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// A split carries its own footer: the file's, cut to the split's row group
// (the schema and the group's column chunks, without statistics, page
// index offsets or key-value metadata). Every split of a file would
// otherwise read the whole footer again before its first row, and real
// footers are big: statistics hold each row group's least and greatest
// text, so multilingual-docs' 214 KB footer cost its 17.4 MB file 1.13x
// its bytes over its ten splits, and the Python docs' HTML 1.78 MB for
// each of six row groups of 1.8 MB. A split's own is a few hundred bytes.
//
// The split's reader sees the file as its bytes up to where its footer
// began (FooterAt) followed by the split's footer (tailReader): the
// column chunks keep their offsets, and the pin (size and version) it is
// read with proves that the bytes are those the footer was cut from.

// maxSplitFooter is the largest footer a split carries; past it (a schema
// of thousands of columns), the split reads the file's.
const maxSplitFooter = 64 << 10

// splitFooter is the footer of the file with metadata md cut to row group
// g, encoded; nil when the file's own must be read (an encrypted footer).
func splitFooter(md *format.FileMetaData, g int) ([]byte, error) {
	if md.EncryptionAlgorithm.Value != nil {
		return nil, nil
	}
	rg := md.RowGroups[g]
	cols := make([]format.ColumnChunk, len(rg.Columns))
	for i, c := range rg.Columns {
		c.MetaData.Statistics = format.Statistics{}
		c.MetaData.SizeStatistics = format.SizeStatistics{}
		c.MetaData.GeospatialStatistics = format.GeospatialStatistics{}
		c.MetaData.KeyValueMetadata = nil
		c.OffsetIndexOffset, c.OffsetIndexLength = 0, 0
		c.ColumnIndexOffset, c.ColumnIndexLength = 0, 0
		cols[i] = c
	}
	rg.Columns = cols
	rg.Ordinal = 0 // its position in the footer cut, which parquet-go checks
	one := format.FileMetaData{
		Version:      md.Version,
		Schema:       md.Schema,
		NumRows:      rg.NumRows,
		RowGroups:    []format.RowGroup{rg},
		CreatedBy:    md.CreatedBy,
		ColumnOrders: md.ColumnOrders,
	}
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &one)
	if err != nil || len(b) > maxSplitFooter {
		return nil, err
	}
	return b, nil
}

// footerStart is where the footer of a Parquet file of size bytes begins,
// from the length its trailer gives (read through r, which has it cached
// once parquet-go has opened the file).
func footerStart(r interface {
	ReadAt([]byte, int64) (int, error)
}, size int64) (int64, error) {
	var trailer [8]byte
	if _, err := r.ReadAt(trailer[:], size-8); err != nil {
		return 0, err
	}
	at := size - 8 - int64(binary.LittleEndian.Uint32(trailer[:4]))
	if at < 4 {
		return 0, fmt.Errorf("footer of %d bytes in a file of %d", size-8-at, size)
	}
	return at, nil
}

// tailReader is a file's bytes before at, followed by tail.
type tailReader struct {
	file interface {
		ReadAt([]byte, int64) (int, error)
	}
	at   int64
	tail []byte
}

func (t *tailReader) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < t.at {
		k := int(min(int64(len(p)), t.at-off))
		m, err := t.file.ReadAt(p[:k], off)
		if n = m; err != nil || m < k {
			return n, err
		}
		p, off = p[k:], t.at
	}
	if len(p) == 0 {
		return n, nil
	}
	m := copy(p, t.tail[min(off-t.at, int64(len(t.tail))):])
	if n += m; m < len(p) {
		return n, fmt.Errorf("read past the end of a split's file")
	}
	return n, nil
}

// openSplit opens the file of sp, pinned, as one row group whose footer
// the split carries (see tailReader): nothing of the file is read but the
// group's column chunks.
func openSplit(ctx context.Context, sp Split) (*parquet.File, *source, error) {
	r, size, err := openPinned(ctx, sp.Path, sp.Pin)
	if err != nil {
		return nil, nil, err
	}
	if sp.FooterAt >= size {
		r.Close()
		return nil, nil, fmt.Errorf("%s: its footer at byte %d of %d", sp.Path, sp.FooterAt, size)
	}
	tail := binary.LittleEndian.AppendUint32(append([]byte(nil), sp.Footer...), uint32(len(sp.Footer)))
	tail = append(tail, "PAR1"...)
	src := &source{ReaderAt: r}
	view := &tailReader{file: src, at: sp.FooterAt, tail: tail}
	f, err := openOn(r, src, view, sp.FooterAt+int64(len(tail)), false)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: row group %d: opening with the footer its split carries: %w", sp.Path, sp.RowGroup, err)
	}
	return f, src, nil
}
