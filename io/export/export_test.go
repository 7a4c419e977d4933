package export

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// nested is a row with optional, repeated and nested columns.
type nested struct {
	ID    int64    `parquet:"id"`
	Text  *string  `parquet:"text,optional"`
	Tags  []string `parquet:"tags,list"`
	Meta  *meta    `parquet:"meta,optional"`
	Score float32  `parquet:"score"`
}

type meta struct {
	Lang  string  `parquet:"lang"`
	Links []int32 `parquet:"links"`
}

// TestCopyNested: Copy keeps the marked rows of a file with optional,
// list and nested struct columns, in order, values and schema as they
// were, in row groups about the input's.
func TestCopyNested(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "in.parquet"), filepath.Join(dir, "out.parquet")
	var rows []nested
	for i := range 1000 {
		r := nested{ID: int64(i), Score: float32(i) / 7}
		if i%3 != 0 {
			s := "text " + string(rune('a'+i%26))
			r.Text = &s
		}
		for j := range i % 4 {
			r.Tags = append(r.Tags, string(rune('A'+j)))
		}
		if i%5 != 0 {
			r.Meta = &meta{Lang: "en", Links: []int32{int32(i), int32(i * 2)}[:i%3]}
		}
		rows = append(rows, r)
	}
	f, _ := os.Create(src)
	w := parquet.NewGenericWriter[nested](f, parquet.MaxRowsPerRowGroup(300))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	w.Close()
	f.Close()

	back, err := parquet.ReadFile[nested](src) // as the reader gives them (nil and empty lists alike)
	if err != nil {
		t.Fatal(err)
	}
	marks := make([]Code, len(rows))
	var want []nested
	for i := range marks {
		marks[i] = []Code{Kept, DroppedNear, KeptInvalid, DroppedCopy, DroppedEmpty}[i*7%5]
		if marks[i].Keeps() {
			want = append(want, back[i])
		}
	}
	n, err := Copy(context.Background(), src, dst, marks)
	if err != nil || n != int64(len(want)) {
		t.Fatalf("Copy: %d rows, %v; want %d", n, err, len(want))
	}
	got, err := parquet.ReadFile[nested](dst)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the rows differ")
	}
	in, _ := os.Open(src)
	defer in.Close()
	st, _ := in.Stat()
	pin, _ := parquet.OpenFile(in, st.Size())
	out, _ := os.Open(dst)
	defer out.Close()
	st, _ = out.Stat()
	pout, _ := parquet.OpenFile(out, st.Size())
	if pin.Schema().String() != pout.Schema().String() {
		t.Errorf("schema\n%s\nwant\n%s", pout.Schema(), pin.Schema())
	}
	for _, rg := range pout.RowGroups() {
		if rg.NumRows() > 2*300 {
			t.Errorf("an output row group of %d rows, the input's are 300", rg.NumRows())
		}
	}
	if _, err := Copy(context.Background(), src, dst, marks[1:]); err == nil {
		t.Errorf("Copy with a row count that is not the file's: no error")
	}
}

// TestPackUnpack: Unpack gives back what Pack packed, in row order.
func TestPackUnpack(t *testing.T) {
	marks := []Mark{{Row: 1 << 39, Code: DroppedCopy}, {Row: 0, Code: Kept}, {Row: 5, Code: KeptInvalid}, {Row: 300, Code: DroppedEmpty}}
	want := slices.Clone(marks)
	slices.SortFunc(want, func(a, b Mark) int { return int(a.Row>>1 - b.Row>>1) })
	var got []Mark
	if err := Unpack(Pack(marks), func(m Mark) error { got = append(got, m); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if err := Unpack(nil, func(Mark) error { t.Error("a mark in an empty batch"); return nil }); err != nil {
		t.Error(err)
	}
}

// TestNames: base names when they differ; the paths below the shared
// folder when two clash.
func TestNames(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"/a/x/p.parquet", "/a/y/q.parquet"}, []string{"p.parquet", "q.parquet"}},
		{[]string{"/a/x/p.parquet", "/a/y/p.parquet", "/a/q.parquet"}, []string{"x/p.parquet", "y/p.parquet", "q.parquet"}},
		{[]string{"gs://b/2024/p.parquet", "gs://b/2025/deep/p.parquet"}, []string{"2024/p.parquet", "2025/deep/p.parquet"}},
	} {
		if got := Names(c.in); !slices.Equal(got, c.want) {
			t.Errorf("Names(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestDecide: each rule's decision for each kind of docs row.
func TestDecide(t *testing.T) {
	type row struct {
		status          string
		identical, kept bool
	}
	rows := []row{{"ok", false, true}, {"ok", false, false}, {"ok", true, false}, {"too_short", true, false}, {"empty", false, false}, {"rejected", false, false}}
	for _, c := range []struct {
		rule Rule
		want []Code
	}{
		{Rule{Drop: DropDuplicates}, []Code{Kept, DroppedNear, DroppedCopy, DroppedCopy, KeptInvalid, KeptInvalid}},
		{Rule{Drop: DropIdentical}, []Code{Kept, Kept, DroppedCopy, DroppedCopy, KeptInvalid, KeptInvalid}},
		{Rule{Drop: DropNone, DropInvalid: true}, []Code{Kept, Kept, Kept, Kept, DroppedEmpty, DroppedEmpty}},
	} {
		for i, r := range rows {
			if got := c.rule.Decide(r.status, r.identical, r.kept); got != c.want[i] {
				t.Errorf("%+v on %+v: %s, want %s", c.rule, r, got.Name(), c.want[i].Name())
			}
		}
	}
}
