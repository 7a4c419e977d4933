package faults

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/gcstest"
	"github.com/neardup/neardup/internal/objtest"
	"github.com/neardup/neardup/internal/s3test"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/objstore"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/views/query"
	"github.com/neardup/neardup/views/report"
)

// bucket is the tests' bucket: no dots, so that the AWS SDK addresses it
// by path on the store's IP endpoint (package s3test).
const bucket = "neardup-test"

// objectServer is a test's object store (s3test, gcstest), read and
// written by its own client, for the checks.
type objectServer interface {
	objtest.Store
	Upload(ctx context.Context, src, dst string) ([]string, error)
	Download(ctx context.Context, src, dir string) ([]string, error)
}

// TestS3EndToEnd runs neardup on an S3-compatible store (package s3test,
// in this process), as users do with --input and --output on s3://
// (storeEndToEnd). Its output folder's keys hold a space and a "+", which
// S3's copy source must encode.
//
// The store must be started before anything in this test binary reads
// s3:// (io/objstore keeps the client it makes first; see package s3test).
func TestS3EndToEnd(t *testing.T) {
	storeEndToEnd(t, "s3", s3test.Start(t, bucket), "crawl 2024+1/out")
}

// TestGCSEndToEnd is TestS3EndToEnd on gs://, against a GCS emulator
// (package gcstest, in this process).
func TestGCSEndToEnd(t *testing.T) {
	storeEndToEnd(t, "gs", gcstest.Start(t, bucket), "out")
}

// storeEndToEnd runs neardup on an object store: a run over half the
// sample crawl, an update of that output with the other half, a
// recluster of the update, an export of the update, a query and a report of it, all reading and writing
// scheme:// paths. Each step is done again on local paths, the reference,
// and the results must agree.
//
// What may differ is where the input files are: the docs table names
// each row's source file, s3://neardup-test/in/part-00000.parquet against
// /…/testdata/crawl/part-00000.parquet, and so do the manifests' inputs,
// the query answers and the export's manifest. Those paths are checked to
// be the same files (the store's folder, the same base name) and are then
// set to the local ones before everything else is compared as it is; the
// times of the runs (manifest start and wall times, input modification
// times and versions, phase timings) and the counts that are runner
// metrics are left out (normalManifest, dataCounts).
func storeEndToEnd(t *testing.T, scheme string, srv objectServer, outName string) {
	ctx := context.Background()
	root := scheme + "://" + bucket
	var (
		in     = root + "/in"
		newIn  = root + "/new"
		out    = root + "/" + outName
		up     = root + "/up"
		re     = root + "/re"
		dedup  = root + "/dedup"
		oldGlb = "../../../testdata/crawl/part-0000[01].parquet"
		newGlb = "../../../testdata/crawl/part-0000[23].parquet"
	)
	for _, u := range [][2]string{{oldGlb, in}, {newGlb, newIn}} {
		if files, err := srv.Upload(ctx, u[0], u[1]); err != nil || len(files) != 2 {
			t.Fatalf("upload %s to %s: %q, %v", u[0], u[1], files, err)
		}
	}
	crawlDir, err := filepath.Abs("../../../testdata/crawl")
	if err != nil {
		t.Fatal(err)
	}
	// local is the local path of the same input file as a store's one.
	local := func(path string) string {
		for _, dir := range []string{in, newIn} {
			if base, ok := strings.CutPrefix(path, dir+"/"); ok && !strings.Contains(base, "/") {
				return filepath.Join(crawlDir, base)
			}
		}
		return "not an input of the test: " + path
	}
	cfg := pipelinetest.DefaultConfig()
	// Verified as the runner's defaults verify: the features files are
	// published on the store, and the update verifies on them there.
	cfg.Partitions, cfg.Verify = 5, settings.VerifyDense
	requests := func() map[string]int64 {
		if r, ok := srv.(interface{ Requests() map[string]int64 }); ok {
			return r.Requests()
		}
		return nil
	}
	start, before := time.Now(), requests()
	readsBefore := objectReads(srv)
	step := func(name string) {
		now := requests()
		var reqs []string
		for _, op := range slices.Sorted(maps.Keys(now)) {
			if n := now[op] - before[op]; n > 0 {
				reqs = append(reqs, fmt.Sprintf("%d %s", n, op))
			}
		}
		t.Logf("%s: %.1fs; requests: %s", name, time.Since(start).Seconds(), strings.Join(reqs, ", "))
		start, before = time.Now(), now
	}

	// The run over the first half.
	m, err := pipelines.Run(ctx, pipelines.Options{Input: in + "/*.parquet", Output: out, Config: cfg})
	if err != nil {
		t.Fatalf("Run on the store: %v", err)
	}
	step("run on the store")
	checkReadsCounted(t, srv, readsBefore, m, in+"/")
	ref := pipelinetest.Run(t, oldGlb, cfg)
	step("run locally")
	checkStoreOutput(t, srv, out, m, ref, local)

	// The update with the second half: a multiple of the index's
	// partitions, as TestUpdateEqualsFullRun takes.
	cfg.Partitions = 10
	readsBefore = objectReads(srv)
	um, err := pipelines.Update(ctx, pipelines.UpdateOptions{From: out, Options: pipelines.Options{Input: newIn + "/*.parquet", Output: up, Config: cfg}})
	if err != nil {
		t.Fatalf("Update on the store: %v", err)
	}
	if um.UpdatedFrom != out {
		t.Errorf("the update names %q as its index, want %s", um.UpdatedFrom, out)
	}
	step("update on the store")
	if um.Counts["pairs_verified"] == 0 || um.Counts["verify_docs_reread"] != 0 || um.Features == nil || len(um.Features.Files) == 0 {
		t.Errorf("the update on the store verified %d pairs, read %d of the index's documents again, keeps features %+v; want pairs verified on the index's features, kept",
			um.Counts["pairs_verified"], um.Counts["verify_docs_reread"], um.Features)
	}
	checkReadsCounted(t, srv, readsBefore, um, newIn+"/", out+"/")
	uref := pipelinetest.RunUpdate(t, ref.Dir, newGlb, cfg)
	step("update locally")
	checkStoreOutput(t, srv, up, um, uref, local)

	// A recluster of the update under containment: it reads the update's
	// tables (output) and no input.
	pol := cfg.Policy
	pol.Containment = 0.8
	readsBefore = objectReads(srv)
	rm, err := pipelines.Recluster(ctx, pipelines.ReclusterOptions{From: up, Output: re, Policy: pol})
	if err != nil {
		t.Fatalf("Recluster on the store: %v", err)
	}
	if rm.ReclusterFrom != up {
		t.Errorf("the recluster names %q as its run, want %s", rm.ReclusterFrom, up)
	}
	step("recluster on the store")
	checkReadsCounted(t, srv, readsBefore, rm, "", up+"/")
	localRe := filepath.Join(t.TempDir(), "re")
	rref, err := pipelines.Recluster(ctx, pipelines.ReclusterOptions{From: uref.Dir, Output: localRe, Policy: pol})
	if err != nil {
		t.Fatalf("Recluster locally: %v", err)
	}
	step("recluster locally")
	checkStoreOutput(t, srv, re, rm, pipelinetest.ReadResult(t, localRe, rref, pol), local)

	// The export of the update, of all four input files (one sweep).
	em, err := pipelines.Export(ctx, pipelines.ExportOptions{From: up, Output: dedup})
	if err != nil {
		t.Fatalf("Export on the store: %v", err)
	}
	if em.From != up {
		t.Errorf("the export names %q as its run, want %s", em.From, up)
	}
	step("export on the store")
	localDedup := filepath.Join(t.TempDir(), "dedup")
	eref, err := pipelines.Export(ctx, pipelines.ExportOptions{From: uref.Dir, Output: localDedup})
	if err != nil {
		t.Fatalf("Export locally: %v", err)
	}
	step("export locally")
	checkStoreExport(t, srv, dedup, em, localDedup, eref, local)

	// Queries and the report, read from the update's s3 output.
	checkStoreQuery(t, up, uref, local)
	checkURLRequests(t, srv, up, uref)
	step("queries")
	checkStoreReport(t, srv, up, uref.Dir)
	step("report")
}

// objectReads is what the store served of each object (s3test's
// Reads), nil for a store that does not count them.
func objectReads(srv objectServer) map[string]s3test.ObjectReads {
	if r, ok := srv.(interface {
		Reads() map[string]s3test.ObjectReads
	}); ok {
		return r.Reads()
	}
	return nil
}

// checkReadsCounted checks a run's manifest's reads against what the
// store served it (its GETs since before, by object key): the same
// requests and bytes of each kind, the kinds told here from the keys
// (the input's folder; an update's index, the output at indexPrefix;
// features and other files under the output's temporary folder). And each input byte is read once, but for the
// footer's tail, which the launcher (its plan) and the worker that cuts
// the file's splits read (objstore's 64 KiB tail, and the 4-byte magic):
// each split reads only its row group's column chunks, with the footer
// its element carries (crawl's footer.go). The whole against the input's
// bytes is a benchmark's (scripts/bench-reads.sh, BENCHMARKS.md).
func checkReadsCounted(t *testing.T, srv objectServer, before map[string]s3test.ObjectReads, m *output.Manifest, inPrefix string, indexPrefix ...string) {
	t.Helper()
	now := objectReads(srv)
	if now == nil {
		return
	}
	inKey := strings.TrimPrefix(inPrefix, "s3://") // "": no input (a recluster)
	var indexKeys []string
	for _, p := range indexPrefix {
		indexKeys = append(indexKeys, strings.TrimPrefix(p, "s3://"))
	}
	isIndex := func(key string) bool {
		for _, p := range indexKeys {
			if strings.HasPrefix(key, p) && !strings.Contains(key, "/_temporary/") {
				return true
			}
		}
		return false
	}
	want := store.ReadsByKind{}
	for key, r := range now {
		r.Requests -= before[key].Requests
		r.Bytes -= before[key].Bytes
		if r.Requests == 0 && r.Bytes == 0 {
			continue
		}
		kind := store.ReadsOther
		switch {
		case inKey != "" && strings.HasPrefix(key, inKey):
			kind = store.ReadsInput
		case isIndex(key):
			kind = store.ReadsOutput
		case strings.Contains(key, "/_temporary/") && strings.Contains(key, "/"+output.FeaturesDir+"/"):
			kind = store.ReadsFeatures
		case strings.Contains(key, "/_temporary/"):
			kind = store.ReadsTemporary
		}
		want.Add(kind, store.Reads{Requests: r.Requests, Bytes: r.Bytes})
	}
	if (inKey != "") != (want[store.ReadsInput].Bytes > 0) || want[store.ReadsTemporary].Bytes == 0 || (len(indexKeys) > 0 && want[store.ReadsOutput].Bytes == 0) {
		t.Fatalf("the store served %+v: no input, no temporary files or no index read", want)
	}
	if !reflect.DeepEqual(m.Reads, want) {
		t.Errorf("the manifest's reads are\n%+v\nthe store served\n%+v", m.Reads, want)
	}
	// The files this run read (an update's manifest names the index's
	// too).
	var files, size int64
	for _, in := range m.Inputs {
		if strings.HasPrefix(in.Path, inPrefix) {
			files, size = files+1, size+in.Bytes
		}
	}
	if most := size + files*2*(objstore.Defaults.TailSize+4); inKey != "" && (files == 0 || want[store.ReadsInput].Bytes > most) {
		t.Errorf("the store served %d bytes of the input's %d in %d files: more than the files once and two footer reads each (%d)",
			want[store.ReadsInput].Bytes, size, files, most)
	}
	t.Logf("reads: %+v, the input %d bytes", want, m.InputBytes)
}

// checkStoreOutput compares the finished output dir on the store, whose run
// returned m, with ref, the same run on local paths: the objects
// published (no temporary one left), _SUCCESS, the manifest, and every
// table's rows.
func checkStoreOutput(t *testing.T, srv objectServer, dir string, m *output.Manifest, ref *pipelinetest.Result, local func(string) string) {
	t.Helper()
	ctx := context.Background()
	// The same files, by their paths below the folder.
	objects, err := srv.List(ctx, dir+"/")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objects {
		got = append(got, strings.TrimPrefix(o, dir+"/"))
	}
	want := localFiles(t, ref.Dir)
	if !slices.Equal(got, want) {
		t.Errorf("%s holds\n%q\nthe local output holds\n%q", dir, got, want)
	}
	if !slices.Contains(got, output.SuccessMarker) {
		t.Fatalf("no %s in %s", output.SuccessMarker, dir)
	}
	// The manifest on the store is the one the run returned, read back by an
	// independent client.
	b, err := srv.Get(ctx, dir+"/"+output.ManifestFile)
	if err != nil {
		t.Fatal(err)
	}
	var onStore output.Manifest
	if err := json.Unmarshal(b, &onStore); err != nil {
		t.Fatalf("%s/%s: %v", dir, output.ManifestFile, err)
	}
	if !reflect.DeepEqual(normalManifest(&onStore), normalManifest(m)) {
		t.Errorf("the manifest on the store is not the one the run returned:\n%s", b)
	}
	// It equals the local run's, the input files' paths and the times
	// aside.
	if len(onStore.Inputs) != len(ref.Manifest.Inputs) {
		t.Fatalf("the manifest lists %d inputs, the local run's %d", len(onStore.Inputs), len(ref.Manifest.Inputs))
	}
	for i, in := range onStore.Inputs {
		if p := local(in.Path); p != ref.Manifest.Inputs[i].Path {
			t.Errorf("input %d is %s, the local run's %s", i, in.Path, ref.Manifest.Inputs[i].Path)
		}
		if in.Modified == "" {
			t.Errorf("input %s has no modification time (an export could not tell it changed)", in.Path)
		}
		if want := map[string]string{"s3": `etag:"`, "gs": "generation:"}[scheme(in.Path)]; !strings.HasPrefix(in.Version, want) {
			t.Errorf("input %s is pinned to version %q; want its store's (%s...)", in.Path, in.Version, want)
		}
		onStore.Inputs[i].Path = ref.Manifest.Inputs[i].Path
	}
	if ref.Manifest.UpdatedFrom != "" {
		onStore.UpdatedFrom = ref.Manifest.UpdatedFrom // checked by the caller
	}
	if ref.Manifest.ReclusterFrom != "" {
		onStore.ReclusterFrom = ref.Manifest.ReclusterFrom // checked by the caller
	}
	mStore, mLocal := normalManifest(&onStore), normalManifest(ref.Manifest)
	mStore.Counts, mLocal.Counts = dataCounts(mStore.Counts), dataCounts(mLocal.Counts)
	for _, k := range []string{"docs", "docs_written", "clusters_written", "pairs_written", "links"} {
		if _, ok := mLocal.Counts[k]; !ok {
			t.Errorf("the local run's manifest has no count %s", k)
		}
	}
	if !reflect.DeepEqual(mStore, mLocal) {
		jg, _ := json.MarshalIndent(mStore, "", " ")
		jw, _ := json.MarshalIndent(mLocal, "", " ")
		t.Errorf("the manifest on the store differs from the local run's:\n%s\nlocal:\n%s", jg, jw)
	}
	// Every table but docs as it is; docs with the source files mapped.
	var others []string
	for _, tb := range []string{tables.ClustersTable, tables.PairsTable, tables.ContainedTable, tables.URLsTable, tables.LostTable, tables.SketchesTable, tables.PostingsTable} {
		if len(ref.Manifest.Tables[tb]) > 0 {
			others = append(others, tb)
		}
	}
	if len(others) < 6 {
		t.Errorf("the local output has only the tables %q besides docs: the comparison checks little", others)
	}
	if err := tables.Diff(ctx, dir, ref.Dir, others...); err != nil {
		t.Error(err)
	}
	docs, err := tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable)
	if err != nil {
		t.Fatal(err)
	}
	refDocs := slices.Clone(ref.Docs)
	if len(docs) != len(refDocs) || len(docs) == 0 {
		t.Fatalf("docs has %d rows on the store, %d locally", len(docs), len(refDocs))
	}
	slices.SortFunc(docs, func(a, b tables.Doc) int { return cmp.Compare(a.DocID, b.DocID) })
	slices.SortFunc(refDocs, func(a, b tables.Doc) int { return cmp.Compare(a.DocID, b.DocID) })
	var diffs int
	for i := range docs {
		d := docs[i]
		if p := local(d.SourceFile); p != refDocs[i].SourceFile {
			t.Errorf("doc %d: source file %s, the local run's %s", d.DocID, d.SourceFile, refDocs[i].SourceFile)
		}
		d.SourceFile = refDocs[i].SourceFile
		if !reflect.DeepEqual(d, refDocs[i]) {
			if diffs++; diffs <= 5 {
				t.Errorf("docs row %d on the store:\n%+v\nlocally:\n%+v", i, d, refDocs[i])
			}
		}
	}
	if diffs > 0 {
		t.Errorf("%d of %d docs rows differ", diffs, len(docs))
	}
}

// normalManifest is the part of a manifest that does not depend on when
// the run was: no start, wall and phase times, memory reached or input
// modification times.
func normalManifest(m *output.Manifest) output.Manifest {
	c := *m
	c.StartedAt, c.WallSeconds, c.BusyMS, c.WallMS, c.LargestGroupBytes, c.GroupBytes, c.LargestSideInputBytes = "", 0, nil, nil, nil, nil, nil // runner metrics
	c.Reads = nil                                                                                                                               // a store's requests, a local file's reads
	c.MemoryLimit.HighestBytes = 0
	c.Inputs = slices.Clone(c.Inputs)
	for i := range c.Inputs {
		c.Inputs[i].Modified, c.Inputs[i].Version = "", "" // an ETag on the store, a time here
	}
	return c
}

// dataCounts are the counts of a manifest that travel as data (written
// by the partitions and summed by the launcher, or counted from the
// tables; docs/tables.md, "manifest"), which two runs of the same input
// must agree on. The others are runner metrics, which Prism may drop
// under load, or depend on how the runner cut the work into bundles (the
// shuffled_* batches and their compressed bytes vary from run to run).
func dataCounts(c map[string]int64) map[string]int64 {
	named := []string{"clusters_written", "pairs_written", "pairs_reported", "contained_written", "links", "links_uncertain",
		"identical_groups", "identical_skipped", "representatives"}
	out := map[string]int64{}
	for k, v := range c {
		if strings.HasPrefix(k, "docs") || strings.HasPrefix(k, "rows_") || slices.Contains(named, k) {
			out[k] = v
		}
	}
	return out
}

// localFiles lists the files below dir, by their slash-separated paths
// below it, sorted.
func localFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		r, err := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(r))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// checkStoreExport compares the export in dir on the store, whose run returned m,
// with the same export on local paths (refDir, ref): the same files,
// each with the same schema and rows in the same order, and the same
// manifest but for the input paths and times.
func checkStoreExport(t *testing.T, srv objectServer, dir string, m *export.Manifest, refDir string, ref *export.Manifest, local func(string) string) {
	t.Helper()
	ctx := context.Background()
	copyDir := t.TempDir()
	files, err := srv.Download(ctx, dir, copyDir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := localFiles(t, copyDir), localFiles(t, refDir); !slices.Equal(got, want) {
		t.Errorf("%s holds %q, the local export %q", dir, got, want)
	}
	if len(files) < 4 {
		t.Fatalf("%s holds %d files, want 4 exported and the manifest and marker", dir, len(files))
	}
	var onStore export.Manifest
	if b, err := os.ReadFile(filepath.Join(copyDir, export.ManifestFile)); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &onStore); err != nil {
		t.Fatal(err)
	}
	for _, mm := range []*export.Manifest{&onStore, m} {
		mm.StartedAt, mm.WallSeconds = "", 0
		for i := range mm.Files {
			mm.Files[i].Input = local(mm.Files[i].Input)
		}
	}
	ref.StartedAt, ref.WallSeconds = "", 0
	ref.From = m.From // checked by the caller
	if !reflect.DeepEqual(&onStore, m) {
		t.Errorf("the export manifest on the store is not the one the export returned: %+v against %+v", onStore, *m)
	}
	if !reflect.DeepEqual(m, ref) {
		t.Errorf("the export manifest: %+v on the store, %+v locally", *m, *ref)
	}
	if ref.Counts["rows_read"] != 3000 || ref.Counts["rows_dropped"] == 0 {
		t.Errorf("the export read %d rows and dropped %d: want the 3000 rows of the sample and some dropped", ref.Counts["rows_read"], ref.Counts["rows_dropped"])
	}
	for _, f := range ref.Files {
		schema, rows := parquetRows(t, filepath.Join(copyDir, f.Output))
		refSchema, refRows := parquetRows(t, filepath.Join(refDir, f.Output))
		if schema != refSchema {
			t.Errorf("%s: schema on the store\n%s\nlocally\n%s", f.Output, schema, refSchema)
		}
		if len(rows) != len(refRows) {
			t.Errorf("%s: %d rows on the store, %d locally", f.Output, len(rows), len(refRows))
			continue
		}
		for i := range rows {
			if !rows[i].Equal(refRows[i]) {
				t.Errorf("%s: row %d differs", f.Output, i)
				break
			}
		}
	}
}

// parquetRows reads a Parquet file's schema and rows.
func parquetRows(t *testing.T, path string) (string, []parquet.Row) {
	t.Helper()
	schema, rows, _ := pipelinetest.ReadParquet(t, path)
	return schema.String(), rows
}

// checkStoreQuery opens the output dir on the store and ref's local output for
// queries and compares their answers: clusters, URL queries (some exact,
// reading texts from the s3 inputs), texts read back, and text queries.
func checkStoreQuery(t *testing.T, dir string, ref *pipelinetest.Result, local func(string) string) {
	t.Helper()
	ctx := context.Background()
	ix, err := query.Open(ctx, dir)
	if err != nil {
		t.Fatalf("query.Open on the store: %v", err)
	}
	rix, err := query.Open(ctx, ref.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if ix.NumDocs() != rix.NumDocs() || ix.NumDocs() != len(ref.Docs) {
		t.Errorf("the index on the store has %d docs, locally %d, the docs table %d", ix.NumDocs(), rix.NumDocs(), len(ref.Docs))
	}
	cl, n, err := ix.Clusters(ctx, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	rcl, rn, err := rix.Clusters(ctx, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if n != rn || !reflect.DeepEqual(cl, rcl) || n < 10 {
		t.Errorf("%d clusters on the store, %d locally (or they differ); the sample has hundreds", n, rn)
	}
	// A URL query for a member of each of the 30 largest clusters and 10
	// documents in none; exact (texts read from the inputs) for 5 of them.
	var urls []string
	for _, c := range rcl[:min(30, len(rcl))] {
		_, docs, _, _, err := rix.ClusterPage(ctx, c.ClusterID, 0, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		urls = append(urls, docs[len(docs)-1].URL)
	}
	for _, d := range ref.Docs {
		if d.ClusterID == nil && d.URL != nil && len(urls) < 40 {
			urls = append(urls, *d.URL)
		}
	}
	for i, u := range urls {
		exact := i%8 == 0
		got, err := ix.URL(ctx, u, exact)
		if err != nil {
			t.Fatalf("URL(%q) on the store: %v", u, err)
		}
		want, err := rix.URL(ctx, u, exact)
		if err != nil {
			t.Fatal(err)
		}
		for k := range got {
			a := &got[k]
			a.Doc.SourceFile = local(a.Doc.SourceFile)
			if a.Kept != nil {
				a.Kept.SourceFile = local(a.Kept.SourceFile)
			}
			for j := range a.Members {
				a.Members[j].SourceFile = local(a.Members[j].SourceFile)
			}
		}
		if !reflect.DeepEqual(got, want) {
			ga, _ := json.Marshal(got)
			wa, _ := json.Marshal(want)
			t.Errorf("URL(%q, exact %v) on the store:\n%s\nlocally:\n%s", u, exact, ga, wa)
		}
		if exact && len(want) > 0 && len(want[0].Members) > 0 && want[0].Members[0].Exact == nil {
			t.Errorf("URL(%q, exact) has no exact figures: the texts were not read", u)
		}
	}
	// Texts read back from the s3 inputs, and queried by text.
	for _, c := range rcl[:min(5, len(rcl))] {
		text, err := ix.TextOf(ctx, c.ClusterID)
		if err != nil {
			t.Fatalf("TextOf(%d) on the store: %v", c.ClusterID, err)
		}
		want, err := rix.TextOf(ctx, c.ClusterID)
		if err != nil || text != want || text == "" {
			t.Fatalf("TextOf(%d): %d bytes on the store, %d locally (%v)", c.ClusterID, len(text), len(want), err)
		}
		got, err := ix.Text(ctx, query.Page{Content: text}, 0.5, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		wantM, err := rix.Text(ctx, query.Page{Content: text}, 0.5, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		for k := range got {
			got[k].SourceFile = local(got[k].SourceFile)
		}
		if len(wantM) == 0 || !reflect.DeepEqual(got, wantM) {
			t.Errorf("Text of doc %d: %d matches on the store, %d locally, or they differ", c.ClusterID, len(got), len(wantM))
		}
	}
}

// checkURLRequests opens the output dir on the store afresh and queries
// the URL of a member of its largest cluster and of a document in no
// cluster: each in at most 20 requests to the store, manifest included
// (the lookup tables: a page or two of the urls, docs, members and
// clusters shards, each after its footer), and the answers are the local
// copy's.
func checkURLRequests(t *testing.T, srv objectServer, dir string, ref *pipelinetest.Result) {
	t.Helper()
	ctx := context.Background()
	rix, err := query.Open(ctx, ref.Dir)
	if err != nil {
		t.Fatal(err)
	}
	largest, _, err := rix.Clusters(ctx, 0, 1)
	if err != nil || len(largest) == 0 {
		t.Fatalf("no cluster: %v", err)
	}
	_, members, _, _, err := rix.ClusterPage(ctx, largest[0].ClusterID, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	urls := []string{members[len(members)-1].URL}
	for _, d := range ref.Docs {
		if d.ClusterID == nil && d.URL != nil {
			urls = append(urls, *d.URL)
			break
		}
	}
	counter, ok := srv.(interface{ Requests() map[string]int64 })
	if !ok {
		t.Logf("the store does not count its requests: the URL queries' are not checked")
		return
	}
	total := func() (n int64) {
		for _, v := range counter.Requests() {
			n += v
		}
		return n
	}
	for _, u := range urls {
		before := total()
		ix, err := query.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ix.URL(ctx, u, false)
		if err != nil {
			t.Fatal(err)
		}
		n := total() - before
		want, err := rix.URL(ctx, u, false)
		if err != nil || len(got) != len(want) || len(got[0].Members) != len(want[0].Members) {
			t.Errorf("URL(%q) on the store: %d answers, locally %d (%v)", u, len(got), len(want), err)
		}
		t.Logf("URL(%q) from a fresh open on the store: %d requests (%d members)", u, n, len(got[0].Members))
		if n > 20 {
			t.Errorf("URL(%q) from a fresh open on the store took %d requests, more than 20", u, n)
		}
	}
}

// dataKey matches a figure of the report, by its key.
var dataKey = regexp.MustCompile(`data-key="([a-z_]+)"[^>]*>([^<]*)<`)

// checkStoreReport renders the report of the output dir on the store and compares
// it with two local references: the report of a local copy of the same
// output, which must be the same page but for the folder's name; and the
// report of the local run refDir, whose figures (all but the wall time)
// and plots, hosts and largest clusters must be the same (its header,
// timings and input paths differ).
func checkStoreReport(t *testing.T, srv objectServer, dir, refDir string) {
	t.Helper()
	ctx := context.Background()
	var page bytes.Buffer
	if err := report.Write(ctx, dir, &page); err != nil {
		t.Fatalf("report of %s: %v", dir, err)
	}
	copyDir := filepath.Join(t.TempDir(), "up")
	if _, err := srv.Download(ctx, dir, copyDir); err != nil {
		t.Fatal(err)
	}
	var copied, ref bytes.Buffer
	if err := report.Write(ctx, copyDir, &copied); err != nil {
		t.Fatal(err)
	}
	if err := report.Write(ctx, refDir, &ref); err != nil {
		t.Fatal(err)
	}
	s3Page := page.String()
	if !strings.Contains(s3Page, dir) {
		t.Errorf("the report does not name %s", dir)
	}
	if got := strings.ReplaceAll(s3Page, dir, copyDir); got != copied.String() {
		t.Errorf("the report of %s is not that of its local copy (%d bytes against %d)", dir, len(got), copied.Len())
	}
	figures := func(page string) map[string]string {
		m := map[string]string{}
		for _, kv := range dataKey.FindAllStringSubmatch(page, -1) {
			m[kv[1]] = kv[2]
		}
		delete(m, "wall_seconds")
		return m
	}
	got, want := figures(s3Page), figures(ref.String())
	if len(want) < 10 || !maps.Equal(got, want) {
		t.Errorf("the report's figures on the store:\n%v\nlocally:\n%v", got, want)
	}
	tail := func(page string) string {
		i := strings.Index(page, "<figure")
		if i < 0 {
			t.Fatal("the report has no plot")
		}
		return page[i:]
	}
	if tail(s3Page) != tail(ref.String()) {
		t.Error("the report's plots, hosts or clusters differ from the local run's")
	}
}

// scheme is the scheme of a store's path.
func scheme(path string) string {
	s, _, _ := strings.Cut(path, "://")
	return s
}
