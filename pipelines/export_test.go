package pipelines

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/tables"
)

// readParquet reads every row of a Parquet file with parquet-go directly,
// and its schema.
func readParquet(t *testing.T, path string) (*parquet.Schema, []parquet.Row, *parquet.File) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	st, _ := fh.Stat()
	f, err := parquet.OpenFile(fh, st.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var rows []parquet.Row
	for _, rg := range f.RowGroups() {
		rr := rg.Rows()
		buf := make([]parquet.Row, 100)
		for {
			n, err := rr.ReadRows(buf)
			for _, r := range buf[:n] {
				rows = append(rows, r.Clone())
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
		rr.Close()
	}
	return f.Schema(), rows, f
}

// wantKept is the reference: whether the rule keeps an input row, from
// its docs row, as docs/export.md words it.
func wantKept(d tables.Doc, drop export.Drop, dropInvalid bool) bool {
	if d.Status == tables.StatusEmpty || d.Status == tables.StatusRejected {
		return !dropInvalid
	}
	switch drop {
	case export.DropNone:
		return true
	case export.DropIdentical:
		return d.IdenticalTo == nil
	}
	return d.IsRepresentative
}

// checkExport exports the run r under rule and compares every output file
// with the reference: the input's rows, read directly, that wantKept
// keeps, every column value, in order, and the input's schema.
func checkExport(t *testing.T, r *result, rule export.Rule) *export.Manifest {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dedup")
	m, err := Export(context.Background(), ExportOptions{From: r.dir, Output: out, Rule: rule})
	if err != nil {
		t.Fatalf("Export %+v: %v", rule, err)
	}
	if _, err := os.Stat(filepath.Join(out, export.SuccessMarker)); err != nil {
		t.Fatalf("no %s: %v", export.SuccessMarker, err)
	}
	docs := map[string]tables.Doc{}
	for _, d := range r.docs {
		docs[fmt.Sprintf("%s#%d", d.SourceFile, d.SourceRow)] = d
	}
	var read, kept, invalidKept int64
	for _, in := range r.manifest.Inputs {
		inSchema, inRows, _ := readParquet(t, in.Path)
		outSchema, outRows, outFile := readParquet(t, filepath.Join(out, filepath.Base(in.Path)))
		if !parquet.EqualNodes(inSchema, outSchema) || inSchema.String() != outSchema.String() {
			t.Errorf("%s: schema\n%s\nwant\n%s", in.Path, outSchema, inSchema)
		}
		for _, rg := range outFile.Metadata().RowGroups {
			for _, c := range rg.Columns {
				if c.MetaData.Codec != format.Zstd {
					t.Fatalf("%s: column %v compressed with %v, want zstd", in.Path, c.MetaData.PathInSchema, c.MetaData.Codec)
				}
			}
		}
		var want []parquet.Row
		for i, row := range inRows {
			d, ok := docs[fmt.Sprintf("%s#%d", in.Path, i)]
			if !ok {
				t.Fatalf("%s row %d has no docs row", in.Path, i)
			}
			read++
			if wantKept(d, rule.Drop, rule.DropInvalid) {
				want = append(want, row)
				if d.Status == tables.StatusEmpty || d.Status == tables.StatusRejected {
					invalidKept++
				}
			}
		}
		kept += int64(len(want))
		if len(outRows) != len(want) {
			t.Fatalf("%s under %+v: %d rows written, want %d", in.Path, rule, len(outRows), len(want))
		}
		for i := range want {
			if !outRows[i].Equal(want[i]) {
				for j := range want[i] {
					if j >= len(outRows[i]) || !parquet.Equal(want[i][j], outRows[i][j]) {
						t.Logf("value %d: in %v, out %v", j, want[i][j], outRows[i][min(j, len(outRows[i])-1)])
					}
				}
				t.Fatalf("%s under %+v: output row %d differs from the input row it should be", in.Path, rule, i)
			}
		}
	}
	c := m.Counts
	if c["rows_read"] != read || c["rows_kept"] != kept || c["rows_dropped"] != read-kept || c[export.KeptInvalid.Name()] != invalidKept {
		t.Errorf("under %+v: counts %v; want %d read, %d kept (%d invalid), %d dropped", rule, c, read, kept, invalidKept, read-kept)
	}
	var onDisk export.Manifest
	if b, err := os.ReadFile(filepath.Join(out, export.ManifestFile)); err != nil || json.Unmarshal(b, &onDisk) != nil || onDisk.Counts["rows_kept"] != kept {
		t.Errorf("%s: %v, counts %v", export.ManifestFile, err, onDisk.Counts)
	}
	return m
}

// TestExport: on the sample crawl, every --drop mode with and without
// --drop-invalid writes exactly the input rows the docs table says to
// keep, column for column, with the input's schema.
func TestExport(t *testing.T) {
	r := run(t, "../testdata/crawl/*.parquet", defaultConfig())
	var near, copies, invalid int64
	for _, d := range r.docs {
		switch {
		case d.Status == tables.StatusEmpty || d.Status == tables.StatusRejected:
			invalid++
		case d.IdenticalTo != nil:
			copies++
		case !d.IsRepresentative:
			near++
		}
	}
	if near == 0 || copies == 0 || invalid == 0 {
		t.Fatalf("the sample has %d near duplicates, %d identical copies, %d invalid rows: the test needs some of each", near, copies, invalid)
	}
	for _, rule := range []export.Rule{
		{Drop: export.DropDuplicates},
		{Drop: export.DropDuplicates, DropInvalid: true},
		{Drop: export.DropIdentical},
		{Drop: export.DropNone},
		{Drop: export.DropNone, DropInvalid: true},
	} {
		m := checkExport(t, r, rule)
		t.Logf("%+v: %v", rule, m.Counts)
		if rule.Drop == export.DropDuplicates && (m.Counts[export.DroppedNear.Name()] != near || m.Counts[export.DroppedCopy.Name()] != copies) {
			t.Errorf("%+v: dropped %v, want %d near duplicates and %d identical copies", rule, m.Counts, near, copies)
		}
	}
}

// TestExportSharedCorpus: the same on a real corpus, Debian's copyright
// files (about 335 exact copies).
func TestExportSharedCorpus(t *testing.T) {
	path := shareddata.Path(t, "deb-copyright.parquet")
	r := run(t, path, defaultConfig())
	m := checkExport(t, r, export.Rule{Drop: export.DropDuplicates})
	if m.Counts["rows_dropped"] == 0 {
		t.Errorf("nothing dropped from deb-copyright: %v", m.Counts)
	}
}

// TestExportRefusals: an input that changed size since the run, a
// missing input and an --output inside the run's output are refused,
// naming the file or folder.
func TestExportRefusals(t *testing.T) {
	in := t.TempDir()
	for _, name := range []string{"part-00000.parquet", "part-00001.parquet"} {
		b, err := os.ReadFile(filepath.Join("../testdata/crawl", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := run(t, filepath.Join(in, "*.parquet"), defaultConfig())
	ctx := context.Background()
	rule := export.Rule{Drop: export.DropDuplicates}
	expect := func(what, output, want string) {
		t.Helper()
		_, err := Export(ctx, ExportOptions{From: r.dir, Output: output, Rule: rule})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", what, err, want)
		}
		if _, serr := os.Stat(filepath.Join(output, export.SuccessMarker)); serr == nil {
			t.Errorf("%s: %s written", what, export.SuccessMarker)
		}
	}
	expect("output inside the run's output", filepath.Join(r.dir, "dedup"), r.dir)
	expect("output holding an input", in, "part-0000")

	changed := filepath.Join(in, "part-00001.parquet")
	f, err := os.OpenFile(changed, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	f.Close()
	expect("changed size", filepath.Join(t.TempDir(), "dedup"), changed)

	missing := filepath.Join(in, "part-00000.parquet")
	if err := os.Remove(missing); err != nil {
		t.Fatal(err)
	}
	expect("missing input", filepath.Join(t.TempDir(), "dedup"), missing)
}
