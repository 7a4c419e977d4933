package crawl

import (
	"context"
	"os"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/neardup/neardup/internal/faultstore"
)

// A pinned split carries its row group's footer and reads nothing of the
// file but its column chunks: with every request that touches the file's
// own footer, or its first bytes (the magic), refused for ever, each
// split still reads its rows, the same as the rows written; a split
// without its footer cannot.
func TestSplitCarriesFooter(t *testing.T) {
	fastRetries(t)
	path, rows := pages(t)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	name := faultstore.Name(path)
	splits, err := SplitsPinned(context.Background(), 0, name, Pin{Size: st.Size()}, defaults)
	if err != nil {
		t.Fatal(err)
	}
	if len(splits) != 4 {
		t.Fatalf("%d splits, want 4", len(splits))
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Where the file's footer begins, from its trailer as the format
	// defines it (not from footerStart).
	n := int64(raw[len(raw)-8]) | int64(raw[len(raw)-7])<<8 | int64(raw[len(raw)-6])<<16 | int64(raw[len(raw)-5])<<24
	at := int64(len(raw)) - 8 - n
	for i, sp := range splits {
		if sp.FooterAt != at || len(sp.Footer) == 0 || int64(len(sp.Footer)) >= n {
			t.Fatalf("split %d: footer of %d bytes at %d; want one smaller than the file's %d at %d", i, len(sp.Footer), sp.FooterAt, n, at)
		}
	}
	faultstore.Inject(faultstore.Fault{Path: path, From: 0, To: 4, Kind: faultstore.Refuse, Times: faultstore.Always})
	faultstore.Inject(faultstore.Fault{Path: path, From: at, Kind: faultstore.Refuse, Times: faultstore.Always})
	var got []Row
	for i, sp := range splits {
		err := ReadSplit(context.Background(), sp, defaults, func(r Row) error { got = append(got, r); return nil })
		if err != nil {
			t.Fatalf("split %d, with its footer: %v", i, err)
		}
	}
	if len(got) != len(rows) {
		t.Fatalf("read %d rows, want %d", len(got), len(rows))
	}
	for i, r := range got {
		if r.Index != int64(i) || r.Content != *rows[i].Text || r.URL != rows[i].URL {
			t.Fatalf("row %d: index %d url %q: not the row written", i, r.Index, r.URL)
		}
	}
	sp := splits[1]
	sp.Footer = nil
	if err := ReadSplit(context.Background(), sp, defaults, func(Row) error { return nil }); err == nil {
		t.Fatal("a split without its footer read with the file's footer refused: the tripwire is not set")
	}
}

// A split's footer is its row group's: one of another row group (or of a
// file with other rows there) is a changed file, not rows read wrong.
func TestSplitFooterOfAnotherGroup(t *testing.T) {
	path, _ := pages(t)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	splits, err := SplitsPinned(context.Background(), 0, path, Pin{Size: st.Size()}, defaults)
	if err != nil {
		t.Fatal(err)
	}
	sp := splits[1]
	sp.NumRows++
	err = ReadSplit(context.Background(), sp, defaults, func(Row) error { return nil })
	if err == nil || IsBadInput(err) || !IsChanged(err) {
		t.Errorf("a split whose row group has another size now: %v; want changed, not bad input", err)
	}
}

// A split's footer is its row group's column chunks as the file's footer
// gives them (read here by parquet-go), one group, no statistics: a few
// hundred bytes where the file's holds every group's least and greatest
// text.
func TestSplitFooterIsSmall(t *testing.T) {
	path, _ := pages(t)
	raw, f := readParquet(t, path)
	file := f.Metadata()
	splits, err := SplitsPinned(context.Background(), 0, path, Pin{Size: int64(len(raw))}, defaults)
	if err != nil {
		t.Fatal(err)
	}
	for i, sp := range splits {
		var md format.FileMetaData
		if err := thrift.Unmarshal(new(thrift.CompactProtocol), sp.Footer, &md); err != nil {
			t.Fatalf("split %d: %v", i, err)
		}
		if len(md.RowGroups) != 1 || md.RowGroups[0].NumRows != file.RowGroups[i].NumRows || md.NumRows != sp.NumRows {
			t.Fatalf("split %d: %d row groups, %d rows", i, len(md.RowGroups), md.NumRows)
		}
		for j, c := range md.RowGroups[0].Columns {
			want := file.RowGroups[i].Columns[j].MetaData
			if c.MetaData.DataPageOffset != want.DataPageOffset || c.MetaData.TotalCompressedSize != want.TotalCompressedSize || c.MetaData.Codec != want.Codec {
				t.Errorf("split %d column %d: chunk at %d (%d bytes), the file's at %d (%d)", i, j,
					c.MetaData.DataPageOffset, c.MetaData.TotalCompressedSize, want.DataPageOffset, want.TotalCompressedSize)
			}
			if len(c.MetaData.Statistics.MinValue)+len(c.MetaData.Statistics.MaxValue)+len(c.MetaData.Statistics.Min)+len(c.MetaData.Statistics.Max) > 0 {
				t.Errorf("split %d column %d: its footer keeps the statistics", i, j)
			}
		}
		if len(sp.Footer) > 1024 {
			t.Errorf("split %d carries a footer of %d bytes", i, len(sp.Footer))
		}
	}
}
