package exports

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
)

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
func checkExport(t *testing.T, r *pipelinetest.Result, rule export.Rule) *export.Manifest {
	t.Helper()
	return checkExportOf(t, r, pipelines.ExportOptions{Rule: rule}, r.Manifest.Inputs)
}

// checkExportOf is checkExport for the export opt of r (its From and
// Output set here) that writes the files of inputs; the added columns'
// values are checked against r's docs and clusters tables.
func checkExportOf(t *testing.T, r *pipelinetest.Result, opt pipelines.ExportOptions, inputs []output.Input) *export.Manifest {
	t.Helper()
	rule := opt.Rule
	out := filepath.Join(t.TempDir(), "dedup")
	opt.From, opt.Output = r.Dir, out
	m, err := pipelines.Export(context.Background(), opt)
	if err != nil {
		t.Fatalf("Export %+v: %v", opt, err)
	}
	if len(m.Files) != len(inputs) {
		t.Fatalf("Export %+v wrote %d files, want %d", opt, len(m.Files), len(inputs))
	}
	size := map[int64]int64{}
	for _, c := range r.Clusters {
		size[c.ClusterID] = c.Size
	}
	if _, err := os.Stat(filepath.Join(out, export.SuccessMarker)); err != nil {
		t.Fatalf("no %s: %v", export.SuccessMarker, err)
	}
	docs := map[string]tables.Doc{}
	for _, d := range r.Docs {
		docs[fmt.Sprintf("%s#%d", d.SourceFile, d.SourceRow)] = d
	}
	var read, kept, invalidKept int64
	for _, in := range inputs {
		inSchema, inRows, _ := pipelinetest.ReadParquet(t, in.Path)
		outSchema, outRows, outFile := pipelinetest.ReadParquet(t, filepath.Join(out, filepath.Base(in.Path)))
		if len(opt.Add.Columns) == 0 && (!parquet.EqualNodes(inSchema, outSchema) || inSchema.String() != outSchema.String()) {
			t.Errorf("%s: schema\n%s\nwant\n%s", in.Path, outSchema, inSchema)
		}
		if len(opt.Add.Columns) > 0 {
			checkAddedSchema(t, inSchema, outSchema, opt.Add)
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
				want = append(want, append(row.Clone(), wantAdded(d, size, opt.Add, len(inSchema.Columns()))...))
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
	// The folder read whole by the readers people train from: pandas,
	// pyarrow datasets and Spark skip only names that start with _ or
	// ., and fail on any other file that is not Parquet.
	filepath.WalkDir(out, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if name := e.Name(); path != out && (strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) {
			if e.IsDir() {
				return fs.SkipDir
			}
		} else if !e.IsDir() && !strings.HasSuffix(name, ".parquet") {
			t.Errorf("%s: not Parquet, and its name does not start with _ or . (a folder read of the export fails on it)", path)
		}
		return nil
	})
	return m
}

// checkAddedSchema: the output's columns are the input's, then the added
// ones, named with the prefix, of the docs table's types.
func checkAddedSchema(t *testing.T, in, out *parquet.Schema, add export.Added) {
	t.Helper()
	fields := out.Fields()
	if len(fields) != len(in.Fields())+len(add.Columns) {
		t.Fatalf("output columns %d, want the input's %d and %d added", len(fields), len(in.Fields()), len(add.Columns))
	}
	for i, f := range in.Fields() {
		if fields[i].Name() != f.Name() || !parquet.EqualNodes(fields[i], f) {
			t.Errorf("output column %d is %s, the input's is %s", i, fields[i].Name(), f.Name())
		}
	}
	// As docs/export.md lists them: the docs table's types, the size an
	// int64 that is never null.
	want := map[export.Column]struct {
		kind     parquet.Kind
		optional bool
	}{
		export.ColDocID: {parquet.Int64, false}, export.ColClusterID: {parquet.Int64, true}, export.ColClusterSize: {parquet.Int64, false},
		export.ColKeptDocID: {parquet.Int64, true}, export.ColResemblance: {parquet.Double, true},
	}
	for i, c := range add.Columns {
		f := fields[len(in.Fields())+i]
		if w := want[c]; f.Name() != add.Prefix+string(c) || f.Type().Kind() != w.kind || f.Optional() != w.optional {
			t.Errorf("added column %d: %s %v optional %v, want %s%s %v optional %v", i, f.Name(), f.Type(), f.Optional(), add.Prefix, c, w.kind, w.optional)
		}
	}
}

// wantAdded are the values of the added columns for docs row d, after the
// input's leaves: the docs row's own, and the cluster's size from the
// clusters table (1 for a row in no cluster).
func wantAdded(d tables.Doc, size map[int64]int64, add export.Added, leaves int) parquet.Row {
	var row parquet.Row
	opt := func(col int, p *int64) parquet.Value {
		if p == nil {
			return parquet.NullValue().Level(0, 0, col)
		}
		return parquet.Int64Value(*p).Level(0, 1, col)
	}
	for i, c := range add.Columns {
		col := leaves + i
		switch c {
		case export.ColDocID:
			row = append(row, parquet.Int64Value(d.DocID).Level(0, 0, col))
		case export.ColClusterID:
			row = append(row, opt(col, d.ClusterID))
		case export.ColClusterSize:
			n := int64(1)
			if d.ClusterID != nil {
				n = size[*d.ClusterID]
			}
			row = append(row, parquet.Int64Value(n).Level(0, 0, col))
		case export.ColKeptDocID:
			row = append(row, opt(col, d.KeptDocID))
		case export.ColResemblance:
			if d.ResemblanceToKept == nil {
				row = append(row, parquet.NullValue().Level(0, 0, col))
			} else {
				row = append(row, parquet.DoubleValue(*d.ResemblanceToKept).Level(0, 1, col))
			}
		}
	}
	return row
}

// TestExport: on the sample crawl, every --drop mode with and without
// --drop-invalid writes exactly the input rows the docs table says to
// keep, column for column, with the input's schema.
func TestExport(t *testing.T) {
	r := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", pipelinetest.DefaultConfig())
	var near, copies, invalid int64
	for _, d := range r.Docs {
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
		if rule.Drop == export.DropIdentical {
			// In slices of 97 rows, which cut the input's row groups.
			checkExportOf(t, r, pipelines.ExportOptions{Rule: rule, SliceRows: 97}, r.Manifest.Inputs)
		}
		t.Logf("%+v: %v", rule, m.Counts)
		if rule.Drop == export.DropDuplicates && (m.Counts[export.DroppedNear.Name()] != near || m.Counts[export.DroppedCopy.Name()] != copies) {
			t.Errorf("%+v: dropped %v, want %d near duplicates and %d identical copies", rule, m.Counts, near, copies)
		}
	}
}

// TestExportAddedColumns: with every added column, or some under another
// prefix, the rows are the input's with the docs table's values after
// them (the cluster's size from the clusters table).
func TestExportAddedColumns(t *testing.T) {
	r := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", pipelinetest.DefaultConfig())
	for _, opt := range []pipelines.ExportOptions{
		{Rule: export.Rule{Drop: export.DropNone}, Add: export.Added{Columns: export.Columns, Prefix: export.DefaultPrefix}},
		{Rule: export.Rule{Drop: export.DropDuplicates, DropInvalid: true}, Add: export.Added{Columns: []export.Column{export.ColClusterSize, export.ColResemblance}, Prefix: "dedup__"}, SliceRows: 211},
	} {
		checkExportOf(t, r, opt, r.Manifest.Inputs)
	}
}

// TestExportSweeps: after an update, the export writes the new sweep's
// files (the new crawl's pages that duplicate nothing kept before them),
// or, with Sweep, an earlier sweep's; a sweep the output lacks is refused.
func TestExportSweeps(t *testing.T) {
	cfg := pipelinetest.DefaultConfig()
	cfg.Sweep = "2026-10-01"
	index := pipelinetest.Run(t, "../../../testdata/crawl/part-0000[01].parquet", cfg)
	cfg.Sweep = "2026-11-01"
	up := pipelinetest.RunUpdate(t, index.Dir, "../../../testdata/crawl/part-0000[23].parquet", cfg)
	old, fresh := up.Manifest.Inputs[:2], up.Manifest.Inputs[2:]
	m := checkExportOf(t, up, pipelines.ExportOptions{Rule: export.Rule{Drop: export.DropDuplicates}}, fresh)
	if m.Sweep != "2026-11-01" {
		t.Errorf("the default export wrote sweep %s, want the latest, 2026-11-01", m.Sweep)
	}
	// The test means something only if new pages were dropped for old ones.
	var dupOfOld int
	first := up.ByDocID
	for _, d := range up.Docs {
		if d.Sweep == "2026-11-01" && d.KeptDocID != nil && first[*d.KeptDocID].Sweep == "2026-10-01" && *d.KeptDocID != d.DocID {
			dupOfOld++
		}
	}
	if dupOfOld == 0 {
		t.Errorf("no page of the new sweep is a duplicate of an indexed one: the split tests nothing")
	}
	t.Logf("new sweep: %v; %d of its pages duplicate an indexed one", m.Counts, dupOfOld)
	checkExportOf(t, up, pipelines.ExportOptions{Rule: export.Rule{Drop: export.DropDuplicates}, Sweep: "2026-10-01"}, old)
	_, err := pipelines.Export(context.Background(), pipelines.ExportOptions{From: up.Dir, Output: filepath.Join(t.TempDir(), "x"), Rule: export.Rule{Drop: export.DropDuplicates}, Sweep: "2026-09-01"})
	if err == nil || !strings.Contains(err.Error(), "2026-10-01, 2026-11-01") {
		t.Errorf("an export of a sweep the output lacks: %v, want an error listing its sweeps", err)
	}
}

// TestExportSharedCorpus: the same on a real corpus, Debian's copyright
// files (about 335 exact copies).
func TestExportSharedCorpus(t *testing.T) {
	path := shareddata.Path(t, "deb-copyright.parquet")
	r := pipelinetest.Run(t, path, pipelinetest.DefaultConfig())
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
		b, err := os.ReadFile(filepath.Join("../../../testdata/crawl", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := pipelinetest.Run(t, filepath.Join(in, "*.parquet"), pipelinetest.DefaultConfig())
	ctx := context.Background()
	rule := export.Rule{Drop: export.DropDuplicates}
	expect := func(what, output, want string) {
		t.Helper()
		_, err := pipelines.Export(ctx, pipelines.ExportOptions{From: r.Dir, Output: output, Rule: rule})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %s", what, err, want)
		}
		if _, serr := os.Stat(filepath.Join(output, export.SuccessMarker)); serr == nil {
			t.Errorf("%s: %s written", what, export.SuccessMarker)
		}
	}
	expect("output inside the run's output", filepath.Join(r.Dir, "dedup"), r.Dir)
	expect("output holding an input", in, "part-0000")

	changed := filepath.Join(in, "part-00001.parquet")
	st, err := os.Stat(changed)
	if err != nil {
		t.Fatal(err)
	}
	later := st.ModTime().Add(time.Minute)
	if err := os.Chtimes(changed, later, later); err != nil {
		t.Fatal(err)
	}
	expect("changed modification time, same size", filepath.Join(t.TempDir(), "dedup"), "modified")
	f, err := os.OpenFile(changed, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("x"))
	f.Close()
	expect("changed size", filepath.Join(t.TempDir(), "dedup"), changed)
	expect("changed size", filepath.Join(t.TempDir(), "dedup"), "bytes, the run read")

	missing := filepath.Join(in, "part-00000.parquet")
	if err := os.Remove(missing); err != nil {
		t.Fatal(err)
	}
	expect("missing input", filepath.Join(t.TempDir(), "dedup"), missing)
}

// TestExportReplacesALegacyExport: a folder exported into before the
// manifest's name began with an underscore (export.json) is taken for an
// earlier export and replaced: its manifest and the files it listed go.
func TestExportReplacesALegacyExport(t *testing.T) {
	r := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", pipelinetest.DefaultConfig())
	out := filepath.Join(t.TempDir(), "dedup")
	legacy := map[string]string{
		"export.json":        `{"tool":"neardup","files":[{"input":"gone.parquet","output":"gone-00000.parquet"}]}`,
		"gone-00000.parquet": "an earlier export's file",
		export.SuccessMarker: "",
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range legacy {
		if err := os.WriteFile(filepath.Join(out, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pipelines.Export(context.Background(), pipelines.ExportOptions{Rule: export.Rule{Drop: export.DropDuplicates}, From: r.Dir, Output: out}); err != nil {
		t.Fatalf("Export into a legacy export: %v", err)
	}
	for _, name := range []string{"export.json", "gone-00000.parquet"} {
		if _, err := os.Stat(filepath.Join(out, name)); !os.IsNotExist(err) {
			t.Errorf("%s is still in the export folder (%v)", name, err)
		}
	}
	for _, name := range []string{export.ManifestFile, export.SuccessMarker} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
