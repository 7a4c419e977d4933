// Package pipelinetest is what the end-to-end tests of the pipelines
// share (pipelines/e2e/...): runs of the pipeline whose outputs are read
// back as Go values, made once per test binary for each input and
// configuration, and the rules the tables must follow, written out apart
// from the code that makes them.
package pipelinetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/shingle"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/text/canon"
	"github.com/neardup/neardup/transforms"
)

// Main is TestMain for the end-to-end test packages: their tests run on
// Prism with --beam_strict, as beamtest.Main runs them, and the outputs
// Run shared are removed when the tests end.
func Main(m *testing.M) { os.Exit(MainRet(m)) }

// MainRet is Main without the exit: its exit code, for a TestMain that
// has its own files to remove.
func MainRet(m *testing.M) int {
	code := beamtest.MainRet(m)
	if outputs.root != "" {
		os.RemoveAll(outputs.root)
	}
	return code
}

// outputs are the runs Run made, by input and configuration.
var outputs struct {
	sync.Mutex
	root string
	runs map[string]*sharedRun
}

type sharedRun struct {
	once     sync.Once
	dir      string
	manifest *output.Manifest
	err      error
}

// cacheRoot is the folder the shared outputs are made in.
func cacheRoot() string {
	outputs.Lock()
	defer outputs.Unlock()
	if outputs.root == "" {
		dir, err := os.MkdirTemp("", "pipelinetest-")
		if err != nil {
			panic(err)
		}
		outputs.root = dir
	}
	return outputs.root
}

// Testdata is the path of name in the repository's testdata folder.
func Testdata(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "testdata", name)
}

// DefaultConfig is the command's defaults.
func DefaultConfig() transforms.Config {
	cfg := transforms.Config{Config: settings.Default()}
	cfg.Sweep = "2026-11-01" // a fixed date: the tables do not change by the day
	// Unverified: most tests check the sketch's own links, and
	// --verify=auto would verify on every small test input. The tests
	// of verification set it (TestVerifyAuto, TestVerifyExact, ...).
	cfg.Verify = settings.VerifyNone
	return cfg
}

// Result is an output folder read back.
type Result struct {
	Dir       string
	Manifest  *output.Manifest
	Docs      []tables.Doc
	Clusters  []tables.Cluster
	Pairs     []tables.Pair
	Contained []tables.Contained
	Policy    policy.Policy
	LinkAll   bool            // super-shingle candidates link without verification
	Verified  settings.Verify // what links were verified on (the manifest's setting)
	// Under --verify=uncertain, the policy whose uncertain pairs were
	// verified, and the sketch the estimates are of.
	UncertainOnly bool
	VerifiedAt    policy.Policy
	Sketch        sketch.Spec
	ByID          map[string]*tables.Doc // by the input's id column
	ByDocID       map[int64]*tables.Doc
}

// Run runs the pipeline with cfg over input and reads back its tables.
// The output is made once per test binary for each input and
// configuration: tests that ask for the same run share one output, which
// none of them may change (a test that changes an output, or compares
// two runs of one configuration, runs pipelines.Run into its own folder).
func Run(t *testing.T, input string, cfg transforms.Config) *Result {
	t.Helper()
	key := input + "\x00" + fmt.Sprintf("%#v", cfg)
	outputs.Lock()
	o := outputs.runs[key]
	if o == nil {
		o = &sharedRun{}
		if outputs.runs == nil {
			outputs.runs = map[string]*sharedRun{}
		}
		outputs.runs[key] = o
	}
	outputs.Unlock()
	o.once.Do(func() {
		dir, err := os.MkdirTemp(cacheRoot(), "run-")
		if err == nil {
			o.manifest, err = pipelines.Run(context.Background(), pipelines.Options{Input: input, Output: dir, Config: cfg})
		}
		o.dir, o.err = dir, err
	})
	if o.err != nil {
		t.Fatalf("Run: %v", o.err)
	}
	r := ReadResult(t, o.dir, o.manifest, cfg.Policy)
	r.LinkAll = cfg.LinksAll()
	return r
}

// ReadResult reads back the tables of a finished output folder.
func ReadResult(t *testing.T, dir string, m *output.Manifest, pol policy.Policy) *Result {
	t.Helper()
	ctx := context.Background()
	if _, err := os.Stat(filepath.Join(dir, output.SuccessMarker)); err != nil {
		t.Fatalf("no success marker: %v", err)
	}
	r := &Result{Dir: dir, Manifest: m, Policy: pol, ByID: map[string]*tables.Doc{}, ByDocID: map[int64]*tables.Doc{}}
	was, err := settings.FromManifest(m.Settings, m.Flags)
	if err != nil {
		t.Fatal(err)
	}
	r.Verified, r.Sketch = was.Verification(), was.Sketch
	var kind settings.Verify
	if kind, r.VerifiedAt, err = settings.VerifiedAt(m.Settings["verify"]); err != nil {
		t.Fatal(err)
	}
	r.UncertainOnly = kind != ""
	if r.Docs, err = tables.ReadTable[tables.Doc](ctx, dir, tables.DocsTable); err != nil {
		t.Fatal(err)
	}
	if r.Clusters, err = tables.ReadTable[tables.Cluster](ctx, dir, tables.ClustersTable); err != nil {
		t.Fatal(err)
	}
	if r.Pairs, err = tables.ReadTable[tables.Pair](ctx, dir, tables.PairsTable); err != nil {
		t.Fatal(err)
	}
	if r.Contained, err = tables.ReadTable[tables.Contained](ctx, dir, tables.ContainedTable); err != nil {
		t.Fatal(err)
	}
	for i := range r.Docs {
		d := &r.Docs[i]
		if d.ID != nil {
			r.ByID[*d.ID] = d
		}
		if r.ByDocID[d.DocID] != nil {
			t.Fatalf("doc_id %d appears twice in docs", d.DocID)
		}
		r.ByDocID[d.DocID] = d
	}
	return r
}

// InputRows reads the text of every row of the input files, keyed by doc ID.
func InputRows(t *testing.T, glob string, cols crawl.Columns) map[int64]string {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("glob %s: %v", glob, err)
	}
	slices.Sort(files)
	texts := map[int64]string{}
	for i, f := range files {
		splits, err := crawl.Splits(context.Background(), i, f, cols)
		if err != nil {
			t.Fatal(err)
		}
		for _, sp := range splits {
			err := crawl.ReadSplit(context.Background(), sp, cols, func(r crawl.Row) error {
				texts[int64(crawl.DocID(i, r.Index))] = r.Content
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return texts
}

// CheckInvariants checks what must hold of any output.
func CheckInvariants(t *testing.T, r *Result, inputRows int) {
	t.Helper()
	if len(r.Docs) != inputRows {
		t.Errorf("docs has %d rows, input has %d", len(r.Docs), inputRows)
	}
	c := r.Manifest.Counts
	if got := c["docs"]; got != int64(inputRows) {
		t.Errorf("manifest counts %d docs, input has %d", got, inputRows)
	}
	if sum := c["docs_in_clusters"] + c["docs_alone"] + c["docs_empty_or_rejected"]; sum != int64(inputRows) || c["docs_written"] != int64(inputRows) {
		t.Errorf("accounting: %d input rows, %d docs rows written = %d clustered + %d alone + %d empty or rejected",
			inputRows, c["docs_written"], c["docs_in_clusters"], c["docs_alone"], c["docs_empty_or_rejected"])
	}
	members := map[int64]int64{}
	copies := map[int64]int64{}
	for _, d := range r.Docs {
		if d.ClusterID != nil {
			members[*d.ClusterID]++
			if d.KeptDocID == nil || d.IsRepresentative != (*d.KeptDocID == d.DocID) {
				t.Errorf("doc %d: is_representative %v in cluster %d, kept document %v", d.DocID, d.IsRepresentative, *d.ClusterID, d.KeptDocID)
			}
			if *d.ClusterID > d.DocID && d.Status != tables.StatusRedirect {
				t.Errorf("doc %d in cluster %d: a cluster is named by its smallest doc ID (of those in it by content)", d.DocID, *d.ClusterID)
			}
		}
		if d.IdenticalTo != nil {
			rep := r.ByDocID[*d.IdenticalTo]
			if rep == nil || d.ClusterID == nil || rep.ClusterID == nil || *rep.ClusterID != *d.ClusterID {
				t.Errorf("doc %d identical to %d but not in its cluster", d.DocID, *d.IdenticalTo)
			} else if rep.ContentFingerprint != d.ContentFingerprint && rep.LexicalFingerprint != d.LexicalFingerprint {
				t.Errorf("doc %d identical to %d with different fingerprints", d.DocID, *d.IdenticalTo)
			}
			copies[*d.ClusterID]++
		}
	}
	if r.Manifest.Settings["pairs"] == "linked" && r.Policy.Containment == 0 {
		if len(r.Contained) > 0 {
			t.Errorf("contained has %d rows under --pairs=linked and a resemblance policy, want none", len(r.Contained))
		}
	} else if want := tables.ContainedRows(r.Pairs, r.Policy.ContainedThreshold()); len(want) != len(r.Contained) {
		t.Errorf("contained has %d rows, the pairs table implies %d", len(r.Contained), len(want))
	}
	if len(r.Clusters) != len(members) {
		t.Errorf("clusters has %d rows, docs name %d clusters", len(r.Clusters), len(members))
	}
	for _, c := range r.Clusters {
		if c.Size < 2 || c.Size != members[c.ClusterID] {
			t.Errorf("cluster %d: size %d, docs table has %d members", c.ClusterID, c.Size, members[c.ClusterID])
		}
		if c.IdenticalCopies != copies[c.ClusterID] {
			t.Errorf("cluster %d: %d identical copies, docs table has %d", c.ClusterID, c.IdenticalCopies, copies[c.ClusterID])
		}
	}
	// The rows and links counts travel as data, not runner metrics, which
	// Prism drops under load: they must match the tables.
	linked := 0
	for _, p := range r.Pairs {
		if p.Linked {
			linked++
		}
	}
	if got := int64(len(r.Pairs)); got != c["pairs_written"] || got != c["pairs_reported"] {
		t.Errorf("pairs has %d rows; pairs_written %d, pairs_reported %d", got, c["pairs_written"], c["pairs_reported"])
	}
	if got := int64(linked); got != c["links"] {
		t.Errorf("pairs has %d linked rows; links %d", got, c["links"])
	}
	if got := int64(len(r.Contained)); got != c["contained_written"] {
		t.Errorf("contained has %d rows; contained_written %d", got, c["contained_written"])
	}
	centered := r.Manifest.Settings["clusters"] == "centered"
	for _, p := range r.Pairs {
		if p.DocA >= p.DocB {
			t.Errorf("pair %d-%d not ordered", p.DocA, p.DocB)
		}
		a, b := r.ByDocID[p.DocA], r.ByDocID[p.DocB]
		if a == nil || b == nil {
			t.Errorf("pair %d-%d names unknown docs", p.DocA, p.DocB)
			continue
		}
		// Centred clusters split what a chain of links joins (see
		// TestCenteredClusters for what holds of them instead).
		if p.Linked && !centered && (a.ClusterID == nil || b.ClusterID == nil || *a.ClusterID != *b.ClusterID) {
			t.Errorf("linked pair %d-%d not in one cluster", p.DocA, p.DocB)
		}
		e := Figures{p.Resemblance, p.ContainmentAInB, p.ContainmentBInA}
		le := e // what links the pair: under --verify=bloom or exact, its verified figures
		if kind := string(r.Verified); kind != "" && (!r.UncertainOnly || UncertainByRule(r.Sketch, r.VerifiedAt, p)) {
			le = Figures{}
			if res, a, b, ok := p.Verified(kind); ok {
				le = Figures{res, a, b}
			}
		}
		if p.Linked != (r.LinkAll || LinksByRule(r.Policy, le)) {
			t.Errorf("pair %d-%d: linked %v at resemblance %.3f under %v", p.DocA, p.DocB, p.Linked, le.Res, r.Policy)
		}
		if !KeptByRule(int(p.Shared), e, p.Linked) && !KeptByRule(int(p.Shared), le, p.Linked) {
			t.Errorf("pair %d-%d should not be in the pairs table", p.DocA, p.DocB)
		}
	}
}

// UncertainByRule is whether --verify=uncertain verifies the pair, written
// out apart from clusters.Uncertain: whether an estimate is within 2.5
// standard errors, sqrt(t(1-t)/n), of its threshold t. For the
// resemblance n is the union's samples, a+b-shared (at most N under
// MIN_N); for a containment under MOD_M, the contained document's a.
// Sketches that are the whole sets (mod:1, or MIN_N sketches both
// shorter than N) have no error.
func UncertainByRule(sk sketch.Spec, pol policy.Policy, p tables.Pair) bool {
	near := func(est, t float64, n int) bool { return math.Abs(est-t) < 2.5*math.Sqrt(t*(1-t)/float64(n)) }
	a, b, s := int(p.SketchSizeA), int(p.SketchSizeB), int(p.Shared)
	whole := sk.Kind == sketch.Mod && sk.N == 1 || sk.Kind == sketch.Min && a < sk.N && b < sk.N
	if whole {
		return false
	}
	n := a + b - s
	switch sk.Kind {
	case sketch.Min:
		n = min(n, sk.N)
	case sketch.MinHash:
		n = sk.N // positions drawn with replacement
	}
	if pol.Resemblance > 0 && near(p.Resemblance, pol.Resemblance, n) {
		return true
	}
	return pol.Containment > 0 && sk.Kind == sketch.Mod &&
		(near(float64(s)/float64(a), pol.Containment, a) || near(float64(s)/float64(b), pol.Containment, b))
}

// Figures are a pair's resemblance and containments (nil where the sketch
// cannot estimate them).
type Figures struct {
	Res        float64
	AInB, BInA *float64
}

func (f Figures) MaxContainment() float64 {
	var c float64
	for _, x := range []*float64{f.AInB, f.BInA} {
		if x != nil {
			c = max(c, *x)
		}
	}
	return c
}

// LinksByRule is the link decision written out from Broder's rule ("at
// least the threshold", resemblance or either containment), apart from
// package policy, so that the pipeline tests check policy.Links rather
// than call it.
func LinksByRule(p policy.Policy, f Figures) bool {
	return p.Resemblance > 0 && f.Res >= p.Resemblance || p.Containment > 0 && f.MaxContainment() >= p.Containment
}

// KeptByRule is what the pairs table keeps (README, "pairs"): every linked
// pair, every pair sharing two or more sketch values, and single-value
// pairs at resemblance 0.2 or containment 0.5 and above; written out apart
// from policy.Keep.
func KeptByRule(shared int, f Figures, linked bool) bool {
	return linked || shared >= 2 || f.Res >= 0.2 || f.MaxContainment() >= 0.5
}

// ShingleSets computes every document's full w-shingle set, for exact
// resemblance.
func ShingleSets(h fingerprint.Hasher, texts map[int64]string, w int) map[int64][]uint64 {
	sets := make(map[int64][]uint64, len(texts))
	for id, text := range texts {
		sets[id] = shingle.Fingerprints(nil, h, canon.Tokens(text), w)
	}
	return sets
}

// Corpus is an input the end-to-end tests run on.
type Corpus struct {
	Name, Glob string
	Cols       crawl.Columns
}

// Corpora are the sample crawl and every shared table that is present
// (each missing one is named in the log).
func Corpora(t *testing.T) []Corpus {
	t.Helper()
	text := crawl.Columns{Text: "text", URL: "url", ID: "id", Date: "date"}
	cs := []Corpus{{"sample crawl", SampleGlob, text}}
	for _, name := range []string{"deb-copyright", "cc-main-2019-30-sample", "deb-manpages", "clough-stevenson", "multilingual-docs", "python-3.11-docs-html"} {
		path, ok := shareddata.Optional(t, name+".parquet")
		if !ok {
			continue
		}
		cols := text
		if name == "python-3.11-docs-html" {
			cols = crawl.Columns{HTML: "html", URL: "url", ID: "id", Date: "date"}
		}
		cs = append(cs, Corpus{name, path, cols})
	}
	return cs
}

// SampleGlob is the sample crawl's files, wherever the test runs.
var SampleGlob = Testdata("crawl/*.parquet")

// Representatives are the documents phase 3 pairs: status ok, with
// features, no identical copy; their whole feature sets.
func Representatives(t *testing.T, r *Result, cfg transforms.Config) map[int64][]uint64 {
	t.Helper()
	texts := InputRows(t, SampleGlob, cfg.Columns)
	sets := ShingleSets(fingerprint.New(cfg.Seed), texts, cfg.ShingleWords)
	reps := map[int64][]uint64{}
	for _, d := range r.Docs {
		if d.Status == tables.StatusOK && d.IdenticalTo == nil && len(sets[d.DocID]) > 0 {
			reps[d.DocID] = sets[d.DocID]
		}
	}
	return reps
}

// SameTables fails the test unless two outputs hold the same rows.
func SameTables(t *testing.T, a, b *Result) {
	t.Helper()
	if err := tables.Diff(context.Background(), a.Dir, b.Dir); err != nil {
		t.Error(err)
	}
}

// DuckDB runs one SQL query with DuckDB (scripts/DuckDB installs it from
// npm; CI runs that before the tests) over an output folder, and returns
// the printed rows. Without DuckDB the test is skipped, except in CI.
func DuckDB(t *testing.T, query string) []string {
	t.Helper()
	cache := os.Getenv("NEARDUP_DUCKDB_DIR")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "neardup-duckdb")
	}
	node, err := exec.LookPath("node")
	if _, statErr := os.Stat(filepath.Join(cache, "node_modules", "@duckdb", "node-api")); err != nil || statErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("DuckDB is not installed in %s (node: %v): CI runs scripts/duckdb/check.sh first", cache, err)
		}
		t.Skipf("DuckDB not installed (run scripts/duckdb/check.sh once to fetch it from npm): node %v, %v", err, statErr)
	}
	sql := filepath.Join(t.TempDir(), "q.sql")
	if err := os.WriteFile(sql, []byte(query), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(cache, "query.mjs"), sql, "/unused")
	cmd.Dir = cache
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("duckdb: %v\n%s", err, out)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && !strings.HasPrefix(l, "--") {
			lines = append(lines, l)
		}
	}
	return lines[1:] // the header
}

// RunUpdate runs an update of index with input into a new folder.
func RunUpdate(t *testing.T, index, input string, cfg transforms.Config) *Result {
	t.Helper()
	dir := t.TempDir()
	m, err := pipelines.Update(context.Background(), pipelines.UpdateOptions{From: index, Options: pipelines.Options{Input: input, Output: dir, Config: cfg}})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	return ReadResult(t, dir, m, cfg.Policy)
}

// Deref is *p, or T's zero value for a null.
func Deref[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

// WritePages writes n synthetic pages in row groups of perGroup rows and
// returns the file's path.
func WritePages(t *testing.T, dir, name string, n, perGroup int, text func(i int) string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[Page](f, parquet.Compression(&parquet.Zstd), parquet.MaxRowsPerRowGroup(int64(perGroup)))
	rows := make([]Page, n)
	for i := range rows {
		rows[i] = Page{Text: text(i), ID: fmt.Sprintf("%s-%d", name, i), URL: fmt.Sprintf("https://example.test/%s/%d", name, i)}
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

// Words is n pseudo-random words of page i, the same for the same i.
func Words(i, n int) string {
	var b strings.Builder
	for j := 0; j < n; j++ {
		fmt.Fprintf(&b, "w%d ", (i*7919+j*104729)%50021)
	}
	return b.String()
}

// RunnerDefaults is cmd/runner's defaults, the verification included: the
// run phase 1 writes dense samples in (--verify=auto), so that retried
// bundles, concurrent attempts and live outputs cover those files too.
func RunnerDefaults() transforms.Config {
	cfg := DefaultConfig()
	cfg.Verify = settings.Default().Verify
	return cfg
}

// Reference is a plain run of the sample, the tables the others must equal.
func Reference(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := pipelines.Run(context.Background(), pipelines.Options{Input: SampleGlob, Output: dir, Config: RunnerDefaults()}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// SketchesOf reads an output's sketches table: every representative's
// sketch values, by doc ID.
func SketchesOf(t *testing.T, dir string) map[int64][]uint64 {
	t.Helper()
	rows, err := tables.ReadTable[tables.Sketch](context.Background(), dir, tables.SketchesTable)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[int64][]uint64, len(rows))
	for _, r := range rows {
		v := make([]uint64, len(r.Sketch))
		for i, x := range r.Sketch {
			v[i] = uint64(x)
		}
		slices.Sort(v)
		out[r.DocID] = v
	}
	return out
}

// ModFigures are Broder's MOD_m estimates of a pair from its sketches'
// sizes and shared values: resemblance shared/(a+b-shared), containments
// shared/a and shared/b.
func ModFigures(shared, a, b int) Figures {
	ca, cb := float64(shared)/float64(a), float64(shared)/float64(b)
	return Figures{float64(shared) / float64(a+b-shared), &ca, &cb}
}

// SharedValues counts the values two sorted sketches share. It is
// written here rather than calling sketch.IntersectCount, which computes
// the resemblance_to_kept these tests check.
func SharedValues(a, b []uint64) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// ReadParquet reads every row of a Parquet file with parquet-go directly,
// and its schema.
func ReadParquet(t *testing.T, path string) (*parquet.Schema, []parquet.Row, *parquet.File) {
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

type Page struct {
	Text string `parquet:"text"`
	ID   string `parquet:"id"`
	URL  string `parquet:"url"`
}

// DatedPage is a crawl row with its date, for splitting a corpus.
type DatedPage struct {
	ID   string `parquet:"id"`
	URL  string `parquet:"url"`
	Date string `parquet:"date"`
	Text string `parquet:"text"`
}
