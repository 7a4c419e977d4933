package export

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
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
// were, in row groups about the input's, zstd-compressed (the input is
// not).
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
	n, err := Copy(context.Background(), src, dst, 0, marks, Added{}, nil)
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
	for _, rg := range pout.Metadata().RowGroups { // the input is uncompressed
		for _, c := range rg.Columns {
			if c.MetaData.Codec != format.Zstd {
				t.Errorf("column %v compressed with %v, want zstd", c.MetaData.PathInSchema, c.MetaData.Codec)
			}
		}
	}
	for _, rg := range pout.RowGroups() {
		if rg.NumRows() > 2*300 {
			t.Errorf("an output row group of %d rows, the input's are 300", rg.NumRows())
		}
	}
	if _, err := Copy(context.Background(), src, dst, 1, marks, Added{}, nil); err == nil {
		t.Errorf("Copy of rows past the file's end: no error")
	}

	// In slices that cut row groups, joined by Concat: the same rows.
	var parts []string
	for i, cut := range [][2]int{{0, 250}, {250, 777}, {777, 1000}} {
		part := filepath.Join(dir, fmt.Sprint("part", i))
		if _, err := Copy(context.Background(), src, part, int64(cut[0]), marks[cut[0]:cut[1]], Added{}, nil); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part)
	}
	joined := filepath.Join(dir, "joined.parquet")
	if n, err := Concat(context.Background(), parts, joined); err != nil || n != int64(len(want)) {
		t.Fatalf("Concat: %d rows, %v; want %d", n, err, len(want))
	}
	if got, err := parquet.ReadFile[nested](joined); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("the sliced and joined copy differs: %v", err)
	}
}

// TestPackUnpack: Unpack gives back what Pack packed, in file and row
// order, with and without values.
func TestPackUnpack(t *testing.T) {
	marks := []Mark{
		{File: 2, Row: 1 << 39, Code: DroppedCopy, Values: Values{DocID: 1 << 50, ClusterSize: 1}},
		{File: 0, Row: 7, Code: Kept, Values: Values{DocID: 7, ClusterID: 3, ClusterSize: 12, KeptDocID: 3, Resemblance: 0.625, Has: HasCluster | HasKept | HasResemblance}},
		{File: 2, Row: 5, Code: KeptInvalid, Values: Values{DocID: 9, ClusterSize: 1}},
		{File: 0, Row: 300, Code: DroppedEmpty, Values: Values{DocID: 0, ClusterSize: 1, KeptDocID: -4, Has: HasKept}},
		{File: 1, Row: 0, Code: DroppedNear, Values: Values{DocID: 2, ClusterID: 2, ClusterSize: 2, Has: HasCluster}},
	}
	want := []Mark{marks[1], marks[3], marks[4], marks[2], marks[0]}
	for _, withValues := range []bool{false, true} {
		var got []Mark
		if err := Unpack(Pack(slices.Clone(marks), withValues), func(m Mark) error { got = append(got, m); return nil }); err != nil {
			t.Fatal(err)
		}
		w := slices.Clone(want)
		if !withValues {
			for i := range w {
				w[i].Values = Values{}
			}
		}
		if !slices.Equal(got, w) {
			t.Errorf("with values %v: got %v, want %v", withValues, got, w)
		}
		b := Pack(slices.Clone(marks), withValues)
		if err := Unpack(b[:len(b)-1], func(Mark) error { return nil }); err == nil {
			t.Errorf("with values %v: a cut batch unpacked", withValues)
		}
	}
	if err := Unpack(nil, func(Mark) error { t.Error("a mark in an empty batch"); return nil }); err != nil {
		t.Error(err)
	}
}

// added is nested with the columns an export adds, as a reader would
// read them by name.
type added struct {
	nested
	DocID       int64    `parquet:"x_doc_id"`
	ClusterID   *int64   `parquet:"x_cluster_id,optional"`
	ClusterSize int64    `parquet:"x_cluster_size"`
	KeptDocID   *int64   `parquet:"x_kept_doc_id,optional"`
	Resemblance *float64 `parquet:"x_resemblance_to_kept,optional"`
}

// TestCopyAddedColumns: the added columns follow the input's, in the
// order of Columns, named with the prefix, each row with its values
// (nulls where Has says so); a name the input has already is refused.
func TestCopyAddedColumns(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "in.parquet"), filepath.Join(dir, "out.parquet")
	var rows []nested
	for i := range 500 {
		s := fmt.Sprint("text ", i)
		rows = append(rows, nested{ID: int64(i), Text: &s, Tags: []string{"a", "b"}[:i%3], Meta: &meta{Lang: "en"}, Score: float32(i)}) // Meta set: a null group reads back as an empty one through the embedding
	}
	if err := parquet.WriteFile(src, rows, parquet.MaxRowsPerRowGroup(128)); err != nil {
		t.Fatal(err)
	}
	back, err := parquet.ReadFile[nested](src)
	if err != nil {
		t.Fatal(err)
	}
	marks := make([]Code, len(rows))
	values := make([]Values, len(rows))
	var want []added
	for i := range rows {
		marks[i] = []Code{Kept, DroppedNear, KeptInvalid}[i%3]
		v := Values{DocID: int64(1000 + i), ClusterSize: 1}
		w := added{nested: back[i], DocID: v.DocID, ClusterSize: 1}
		if i%4 == 0 {
			c, k, r := int64(i/4), int64(7*i), float64(i)/500
			v.ClusterID, v.KeptDocID, v.Resemblance, v.ClusterSize = c, k, r, int64(i%9+2)
			v.Has = HasCluster | HasKept | HasResemblance
			w.ClusterID, w.KeptDocID, w.Resemblance, w.ClusterSize = &c, &k, &r, v.ClusterSize
		}
		values[i] = v
		if marks[i].Keeps() {
			want = append(want, w)
		}
	}
	add := Added{Columns: Columns, Prefix: "x_"}
	if _, err := Copy(context.Background(), src, dst, 0, marks, add, values); err != nil {
		t.Fatal(err)
	}
	got, err := parquet.ReadFile[added](dst)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows differ: first got %+v, want %+v", got[0], want[0])
	}
	out, _ := os.Open(dst)
	defer out.Close()
	st, _ := out.Stat()
	f, err := parquet.OpenFile(out, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fl := range f.Schema().Fields() {
		names = append(names, fl.Name())
	}
	wantNames := []string{"id", "text", "tags", "meta", "score", "x_doc_id", "x_cluster_id", "x_cluster_size", "x_kept_doc_id", "x_resemblance_to_kept"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("columns %v, want %v", names, wantNames)
	}
	// The output has the added columns: exporting it again with them is
	// refused, naming the column.
	again := make([]Code, len(want))
	if _, err := Copy(context.Background(), dst, filepath.Join(dir, "again.parquet"), 0, again, add, make([]Values, len(want))); err == nil || !strings.Contains(err.Error(), "x_doc_id") {
		t.Errorf("an added column named as an input column: %v", err)
	}
}

// TestParseColumns: the list, all, none, and an unknown name.
func TestParseColumns(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Column
		err  bool
	}{
		{"", nil, false}, {"none", nil, false}, {"all", Columns, false},
		{"resemblance_to_kept, doc_id", []Column{ColDocID, ColResemblance}, false},
		{"cluster_size,cluster_size", []Column{ColClusterSize}, false},
		{"size", nil, true},
	} {
		got, err := ParseColumns(c.in)
		if (err != nil) != c.err || !slices.Equal(got, c.want) {
			t.Errorf("ParseColumns(%q) = %v, %v; want %v (error %v)", c.in, got, err, c.want, c.err)
		}
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
	rows := []row{{"ok", false, true}, {"ok", false, false}, {"ok", true, false}, {"too_short", true, false}, {"empty", false, false}, {"rejected", false, false},
		{"redirect", false, false}}
	for _, c := range []struct {
		rule Rule
		want []Code
	}{
		{Rule{Drop: DropDuplicates}, []Code{Kept, DroppedNear, DroppedCopy, DroppedCopy, KeptInvalid, KeptInvalid, DroppedRedirect}},
		{Rule{Drop: DropDuplicates, DropInvalid: true}, []Code{Kept, DroppedNear, DroppedCopy, DroppedCopy, DroppedEmpty, DroppedEmpty, DroppedRedirect}},
		{Rule{Drop: DropIdentical}, []Code{Kept, Kept, DroppedCopy, DroppedCopy, KeptInvalid, KeptInvalid, Kept}},
		{Rule{Drop: DropNone, DropInvalid: true}, []Code{Kept, Kept, Kept, Kept, DroppedEmpty, DroppedEmpty, Kept}},
	} {
		for i, r := range rows {
			if got := c.rule.Decide(r.status, r.identical, r.kept); got != c.want[i] {
				t.Errorf("%+v on %+v: %s, want %s", c.rule, r, got.Name(), c.want[i].Name())
			}
		}
	}
}
