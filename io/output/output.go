// Package output publishes neardup's tables atomically. Shards are written
// under OUTPUT/_temporary/RUN/ while the pipeline runs; only after it
// succeeds are the old tables removed, the new shards moved into place, the
// manifest written, and _SUCCESS written last. A run that dies leaves no
// _SUCCESS (Prepare removes the old one first), and the next run into the
// same folder cleans up after it; one that dies publishing leaves the plan
// of its publication, which Resume finishes.
package output

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup/internal/fanout"
	"github.com/neardup/neardup/internal/memlimit"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
)

// Version is neardup's version, recorded in every manifest.
const Version = "0.1.0"

// SuccessMarker is the file written last, when the output is complete.
const SuccessMarker = "_SUCCESS"

// ManifestFile is the run's manifest, next to the tables.
const ManifestFile = "manifest.json"

// TempRoot holds a running job's files, below the output folder, until
// they are published.
const TempRoot = "_temporary"

// Dir is an output folder being written.
type Dir struct {
	Path string
	// The run's hold on its temporary folder, where the pipeline writes
	// its shards (TempDir).
	*Claim
	// Tables are the tables the run writes (--tables; nil: all). Publish
	// removes an earlier run's shards of the others, so that no table of
	// another run stays beside this one's.
	Tables tables.Selection
	// Expect is what Publish requires of the tables (see Expect).
	Expect Expect
	// LauncherReads, when set, gives the launcher's reads by kind, which
	// Publish adds to the manifest's once it has proved the tables.
	LauncherReads func() store.ReadsByKind
}

// Prepare readies dir for a run of command (run, update, recluster): it
// claims the folder (StartTemp), refusing it while another run's lease
// there is live, removes a previous run's _SUCCESS, so nothing looks
// complete while this run works, and any temporary files a killed run
// left, and picks this run's temporary folder.
//
// It refuses a folder that holds anything but a neardup output (tables,
// manifest, markers, a killed run's temporary files) unless overwrite is
// set: a mistyped --output must not bury someone's files.
func Prepare(ctx context.Context, dir, command string, inputs []string, overwrite bool) (*Dir, error) {
	return prepare(ctx, dir, command, inputs, overwrite, StartTemp)
}

// PrepareDry is Prepare for a dry run: the same refusals, a DryTemp claim,
// and nothing written or removed.
func PrepareDry(ctx context.Context, dir, command string, inputs []string, overwrite bool) (*Dir, error) {
	return prepare(ctx, dir, command, inputs, overwrite, DryTemp)
}

func prepare(ctx context.Context, dir, command string, inputs []string, overwrite bool, start func(context.Context, string, string) (*Claim, error)) (*Dir, error) {
	if dir == "" {
		return nil, fmt.Errorf("no --output folder given")
	}
	if !overwrite {
		foreign, err := foreignEntries(ctx, dir)
		if err != nil {
			return nil, err
		}
		if len(foreign) > 0 {
			return nil, fmt.Errorf("output folder %s holds files that are not a neardup output (%s); choose another --output or pass --overwrite", dir, strings.Join(foreign, ", "))
		}
	}
	for _, in := range inputs {
		if Within(in, dir) {
			return nil, fmt.Errorf("output folder %s holds input file %s; choose another --output", dir, in)
		}
	}
	claim, err := start(ctx, dir, command)
	if err != nil {
		return nil, err
	}
	return &Dir{Path: dir, Claim: claim}, nil
}

// Publish proves the run's tables complete, then moves the shards of every
// table the run writes into place, replacing the old tables (and removing
// those of the tables it does not write), and writes the manifest and the
// success marker. The proof: the run still owns its temporary folder
// (Claim.Check); every key of every keyed table has its receipt, every
// receipt's shard is there at the size its writer wrote and no shard is
// there without one; the docs rows, read from the docs shards' footers,
// are the rows the run was to account for (d.Expect.DocsRows). When any of
// it fails, Publish fails before it touches the published tables. Past
// the proof, it writes its plan and carries it out (see Plan): when that
// stops midway, the error wraps ErrUnfinished and Resume finishes it.
func (d *Dir) Publish(ctx context.Context, m *Manifest) error {
	if err := d.Check(ctx); err != nil {
		return err
	}
	var p *proof
	var err error
	for i := 0; ; i++ {
		p, err = d.prove(ctx, m.Counts)
		if err == nil || !errors.Is(err, errListing) || i == len(ListingSettle) {
			break
		}
		select { // a lagging listing shows the files later
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(ListingSettle[i]):
		}
	}
	if err != nil {
		return err
	}
	if d.LauncherReads != nil {
		for k, r := range d.LauncherReads() {
			m.Reads.Add(k, r)
		}
	}
	m.BadFiles = append(m.BadFiles, p.bad...)
	for k, v := range p.counts {
		m.Counts[k] = v
	}
	publish := p.shards
	plan := &Plan{Manifest: ManifestFile, Clear: slices.Concat(tables.Tables, []string{FeaturesDir})}
	if m.Features != nil {
		moves, err := featuresMoves(ctx, d.TempDir, m.Features)
		if err != nil {
			return err
		}
		plan.Moves = moves
	}
	m.Tables = map[string][]string{}
	for _, table := range tables.Tables {
		shards, ok := publish[table]
		if !ok {
			continue
		}
		if len(shards) == 0 {
			// An empty table still gets a file, so readers that glob the
			// folder find the schema instead of an error.
			r := Receipt{Table: table, File: tables.ShardName(0)}
			name := store.Join(d.TempDir, table, r.File)
			if err := writeEmpty(ctx, table, name); err != nil {
				return err
			}
			var err error
			if r.Bytes, err = store.Size(ctx, name); err != nil {
				return err
			}
			shards = []Receipt{r}
		}
		for _, r := range shards {
			to := table + "/" + r.File
			plan.Moves = append(plan.Moves, Move{From: to, To: to, Bytes: r.Bytes})
			m.Tables[table] = append(m.Tables[table], to)
		}
	}
	return d.PublishPlan(ctx, plan, m)
}

// featuresMoves lists the features files under the run's temporary
// folder tempDir and returns their moves into the output, recording them
// in f. A listing that lags shows fewer: an update then reads those
// documents from the input (see Features).
func featuresMoves(ctx context.Context, tempDir string, f *Features) ([]Move, error) {
	names, err := store.List(ctx, store.Join(tempDir, FeaturesDir, "*.features"))
	if err != nil {
		return nil, err
	}
	moves := make([]Move, len(names))
	if err := fanout.Each(len(names), 32, func(i int) error {
		rel := FeaturesDir + "/" + filepath.Base(names[i])
		size, err := store.Size(ctx, names[i])
		moves[i] = Move{From: rel, To: rel, Bytes: size}
		return err
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(moves, func(a, b Move) int { return strings.Compare(a.To, b.To) })
	f.Files, f.Bytes = nil, 0
	for _, mv := range moves {
		f.Files = append(f.Files, mv.To)
		f.Bytes += mv.Bytes
	}
	return moves, nil
}

// proof is what Publish found of a run's files: its bad files, its
// counts (tallies and records), and the shards of each table to publish.
type proof struct {
	bad    []BadFile
	counts map[string]int64
	shards map[string][]Receipt
}

// ListingSettle are the waits before Publish looks again at a run's files
// when what their listing showed did not prove its tables (a receipt
// missing, a shard without one): on a store whose listing lags behind its
// writes they show up later. A variable for the tests.
var ListingSettle = []time.Duration{2 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second}

// errListing marks a proof that failed on what a listing showed: it is
// errors.Is of a listed error.
var errListing = errors.New("as listed")

type listed struct{ error }

func (l listed) Unwrap() error      { return l.error }
func (listed) Is(target error) bool { return target == errListing }

// prove reads the run's records, tallies and bad files, and checks its
// tables against them (see Publish). Its counts are metrics (the runner's)
// with the sums of the tallies and records in their place.
func (d *Dir) prove(ctx context.Context, metrics map[string]int64) (*proof, error) {
	p := &proof{shards: map[string][]Receipt{}}
	bad, err := store.List(ctx, store.Join(d.TempDir, BadFilesDir, "*.json"))
	if err != nil {
		return nil, err
	}
	for _, name := range bad {
		b, err := store.ReadFile(ctx, name)
		if err != nil {
			return nil, err
		}
		var bf BadFile
		if err := json.Unmarshal(b, &bf); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		p.bad = append(p.bad, bf)
	}
	tallies, err := store.List(ctx, store.Join(d.TempDir, TalliesDir, "*.json"))
	if err != nil {
		return nil, err
	}
	sums, err := sumTallies(ctx, tallies)
	if err != nil {
		return nil, err
	}
	receipts, counts, err := readRecords(ctx, d.TempDir)
	if err != nil {
		return nil, err
	}
	for k, v := range counts { // the writers' counts, as tallies are summed
		if MaxTallies[k] {
			sums[k] = max(sums[k], v)
		} else {
			sums[k] += v
		}
	}
	p.counts = maps.Clone(metrics)
	maps.Copy(p.counts, sums)
	publish := p.shards
	for _, table := range tables.Tables {
		if !d.Tables.Has(table) {
			shards, err := store.List(ctx, store.Join(d.TempDir, table, "*.parquet"))
			if err != nil {
				return nil, err
			}
			if len(shards) > 0 { // a writer that did not heed --tables
				return nil, fmt.Errorf("the run wrote %s, which --tables=%s leaves out", shards[0], d.Tables)
			}
			continue
		}
		shards, rows, err := verified(ctx, d.TempDir, table, receipts[table], d.Expect.Keys[table])
		if err != nil {
			return nil, fmt.Errorf("%w; nothing was published", err)
		}
		publish[table] = shards
		p.counts["rows_"+table] = rows
	}
	// Every input row has its docs row: counted from the docs shards
	// themselves, not from what the writers said.
	docs, what := p.counts["docs"], "docs rows tallied by their writers"
	if d.Tables.Has(tables.DocsTable) {
		docs, what = p.counts["rows_"+tables.DocsTable], "docs rows"
		p.counts["docs_written"] = docs
	}
	inputRows, err := d.countedRows(ctx, p.bad)
	if err != nil {
		return nil, err
	}
	inputRows += d.Expect.DocsRows
	p.counts["input_rows"] = inputRows
	if docs != inputRows {
		// (A record listed late holds rows too.)
		return nil, listed{fmt.Errorf("the run's tables hold %d %s for %d input rows: rows were lost or doubled; nothing was published", docs, what, inputRows)}
	}
	return p, nil
}

// countedRows sums the rows that the split reader counted in the inputs
// of d.Expect.Counted, from its records (InputRows); an input without a
// record fails, unless bad lists it as a file that could not be read.
func (d *Dir) countedRows(ctx context.Context, bad []BadFile) (int64, error) {
	if len(d.Expect.Counted) == 0 {
		return 0, nil
	}
	names, err := store.List(ctx, store.Join(d.TempDir, InputRowsDir, "*.json"))
	if err != nil {
		return 0, err
	}
	// One record per JSON lines input: tens of thousands on a cluster's
	// object store, read several at once as the tallies are.
	records := make([]InputRows, len(names))
	err = fanout.Each(len(names), 32, func(i int) error {
		b, err := store.ReadFile(ctx, names[i])
		if err == nil {
			err = json.Unmarshal(b, &records[i])
		}
		if err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	counted := map[string]int64{}
	for _, r := range records {
		counted[r.Path] = r.Rows
	}
	skipped := map[string]bool{}
	for _, b := range bad {
		if b.RowGroup < 0 {
			skipped[b.Path] = true
		}
	}
	var sum int64
	for _, path := range d.Expect.Counted {
		rows, ok := counted[path]
		if !ok && !skipped[path] {
			return 0, listed{fmt.Errorf("no count of the rows of %s: the split reader's record of it was lost; nothing was published", path)}
		}
		sum += rows
	}
	return sum, nil
}

// foreignEntries lists the top-level entries of dir that a neardup output
// does not have.
func foreignEntries(ctx context.Context, dir string) ([]string, error) {
	names, err := store.Contents(ctx, dir)
	if err != nil {
		return nil, err
	}
	ours := map[string]bool{SuccessMarker: true, ManifestFile: true, TempRoot: true, FeaturesDir: true}
	for _, t := range tables.Tables {
		ours[t] = true
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	seen := map[string]bool{}
	var foreign []string
	for _, n := range names {
		rel := strings.TrimPrefix(n, prefix)
		if store.IsLocal(n) {
			if r, err := filepath.Rel(dir, n); err == nil {
				rel = r
			}
		}
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if !ours[top] && !seen[top] {
			seen[top] = true
			foreign = append(foreign, top)
		}
	}
	return foreign, nil
}

// Within reports whether path is dir or lies below it, comparing local
// paths in absolute form so that "out" and "./out/x" match.
func Within(path, dir string) bool {
	if store.IsLocal(path) && store.IsLocal(dir) {
		p, err1 := filepath.Abs(path)
		d, err2 := filepath.Abs(dir)
		if err1 == nil && err2 == nil {
			path, dir = p, d
		}
	}
	path, dir = strings.TrimSuffix(path, "/"), strings.TrimSuffix(dir, "/")
	return path == dir || strings.HasPrefix(path, dir+"/")
}

func writeEmpty(ctx context.Context, table, name string) error {
	switch table {
	case tables.DocsTable:
		return tables.Write[tables.Doc](ctx, name, nil)
	case tables.ClustersTable:
		return tables.Write[tables.Cluster](ctx, name, nil)
	case tables.PairsTable:
		return tables.Write[tables.Pair](ctx, name, nil)
	case tables.ContainedTable:
		return tables.Write[tables.Contained](ctx, name, nil)
	case tables.SketchesTable:
		return tables.Write[tables.Sketch](ctx, name, nil)
	case tables.PostingsTable:
		return tables.Write[tables.Posting](ctx, name, nil)
	case tables.URLsTable:
		return tables.Write[tables.URL](ctx, name, nil)
	case tables.LostTable:
		return tables.Write[tables.Lost](ctx, name, nil)
	case tables.MembersTable:
		return tables.Write[tables.Member](ctx, name, nil)
	case tables.LargestTable:
		return tables.Write[tables.Cluster](ctx, name, nil)
	}
	return fmt.Errorf("unknown table %q", table)
}

// BadFile is a file, or one row group of it, that could not be read. With
// --on-bad-file=skip the run goes on: the rows of a bad row group get
// rejected docs rows, a file that cannot be opened at all is listed here.
type BadFile struct {
	Path     string `json:"path"`
	RowGroup int    `json:"row_group"` // -1: the whole file
	Rows     int64  `json:"rows"`      // rows of the row group, given rejected docs rows
	Error    string `json:"error"`
}

// BadFilesDir is where, under the run's temporary folder, the pipeline
// records bad files for the manifest.
const BadFilesDir = "_bad_files"

// sumTallies reads the tally files (a few per partition of each keyed
// step: thousands on a cluster's object store, where each read waits
// tens of milliseconds, so several at once) and sums their counts.
func sumTallies(ctx context.Context, names []string) (map[string]int64, error) {
	read := make([]map[string]int64, len(names))
	err := fanout.Each(len(names), 32, func(i int) error {
		b, err := store.ReadFile(ctx, names[i])
		if err == nil {
			err = json.Unmarshal(b, &read[i])
		}
		if err != nil {
			return fmt.Errorf("%s: %w", names[i], err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sums := map[string]int64{}
	for _, t := range read {
		for k, v := range t {
			if MaxTallies[k] {
				sums[k] = max(sums[k], v)
			} else {
				sums[k] += v
			}
		}
	}
	return sums, nil
}

// MaxTallies are the tallies whose files hold maxima, not counts: their
// sum is the largest.
var MaxTallies = map[string]bool{"largest_cluster": true, "components_max_worker_records": true}

// TalliesDir is where, under the run's temporary folder, the pipeline
// writes counts the manifest must not lose (JSON objects of counter name
// to count, one file per partition): Publish sums them, and the sums
// replace the metrics of the same names, which a runner may drop.
const TalliesDir = "_tallies"

// Input is one input file of the run.
type Input struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// Modified is when the file was last modified (RFC 3339, UTC), when
	// its filesystem says: an export refuses a file changed since.
	Modified string `json:"modified,omitempty"`
	// Version is the version the run read (store.Version: an ETag, a
	// generation, a modification time): the workers read no other.
	Version string `json:"version,omitempty"`
	// Sweep is the sweep its documents belong to (--sweep-date); empty
	// in an output written before it was recorded.
	Sweep string `json:"sweep,omitempty"`
}

// StatInput is the record of input file path, of the given sweep.
func StatInput(ctx context.Context, path, sweep string) (Input, error) {
	size, mod, err := store.Stat(ctx, path)
	if err != nil {
		return Input{}, fmt.Errorf("%s: %w", path, err)
	}
	in := Input{Path: path, Bytes: size, Sweep: sweep}
	if !mod.IsZero() {
		in.Modified = mod.UTC().Format(time.RFC3339Nano)
	}
	if in.Version, err = store.Version(ctx, path); err != nil {
		return Input{}, fmt.Errorf("%s: %w", path, err)
	}
	return in, nil
}

// StatInputs is StatInput of every file of paths, several at once (an
// object store answers each in tens of milliseconds).
func StatInputs(ctx context.Context, paths []string, sweep string) ([]Input, error) {
	ins := make([]Input, len(paths))
	err := fanout.Each(len(paths), 32, func(i int) (err error) {
		ins[i], err = StatInput(ctx, paths[i], sweep)
		return err
	})
	return ins, err
}

// Changed says how input file in differs from what the run recorded
// (its size, or when it was last modified), or "" when it does not.
func (in Input) Changed(ctx context.Context) (string, error) {
	now, err := StatInput(ctx, in.Path, in.Sweep)
	switch {
	case err != nil:
		return "", err
	case now.Bytes != in.Bytes:
		return fmt.Sprintf("%d bytes, the run read %d", now.Bytes, in.Bytes), nil
	case in.Modified != "" && now.Modified != "" && now.Modified != in.Modified:
		return fmt.Sprintf("modified %s, the run read it as modified %s", now.Modified, in.Modified), nil
	case in.Version != "" && now.Version != "" && now.Version != in.Version:
		return fmt.Sprintf("version %s, the run read %s", now.Version, in.Version), nil
	}
	return "", nil
}

// Manifest records what a run did: its flags, inputs, counts per phase and
// where the time went.
type Manifest struct {
	Tool        string            `json:"tool"`
	Version     string            `json:"version"`
	GoVersion   string            `json:"go_version"`
	BeamVersion string            `json:"beam_version"`
	StartedAt   string            `json:"started_at"`
	WallSeconds float64           `json:"wall_seconds"`
	Flags       map[string]string `json:"flags"`
	// Settings are the effective settings of the run, whatever flags set them.
	Settings map[string]string `json:"settings"`
	// A recluster run names the output it read and that run's flags.
	ReclusterFrom string            `json:"recluster_from,omitempty"`
	SourceFlags   map[string]string `json:"source_flags,omitempty"`
	// An update names the output it took as its index.
	UpdatedFrom string  `json:"updated_from,omitempty"`
	Inputs      []Input `json:"inputs"`
	InputBytes  int64   `json:"input_bytes"`
	// InputTextBytes is the input's text (or HTML) column before
	// compression, from the Parquet footers: about its bytes of text (an
	// update's: its new input's).
	InputTextBytes int64 `json:"input_text_bytes"`
	Partitions     int   `json:"partitions"`
	// MemoryLimit is the soft limit of the launcher's Go heap (with the
	// embedded runner, the workers' too), 0 bytes when none.
	MemoryLimit MemoryLimit      `json:"memory_limit"`
	Counts      map[string]int64 `json:"counts"`
	BusyMS      map[string]int64 `json:"phase_busy_ms"`
	WallMS      map[string]int64 `json:"phase_wall_ms"`
	// LargestGroupBytes is, for each keyed step, its largest group: the
	// sealed bytes of the values one key brought together, which one
	// worker held at once (transforms.GroupBytesPrefix).
	LargestGroupBytes map[string]int64 `json:"largest_group_bytes"`
	// GroupBytes is, for each keyed step, the bytes of all its groups
	// (a retried bundle's counted again): over the partitions, the share
	// its largest group is measured against.
	GroupBytes map[string]int64 `json:"group_bytes"`
	// LargestSideInputBytes is, for each step that takes a side input,
	// the most of it one bundle read, which every worker holds
	// (transforms.SideInputBytesPrefix).
	LargestSideInputBytes map[string]int64 `json:"largest_side_input_bytes"`
	// Reads is what the run read, by the kind of file (store.ReadsInput
	// …): the requests and bytes of the workers and of the launcher (up
	// to its proof of the tables), which on a cluster are the object
	// store's egress and GETs.
	Reads    store.ReadsByKind   `json:"reads"`
	Tables   map[string][]string `json:"tables"`
	BadFiles []BadFile           `json:"bad_files,omitempty"`
	// Features are the features for verification that phase 1 wrote,
	// kept beside the tables so that an update verifies the index's
	// documents on them instead of reading its input again; nil when the
	// run keeps none (no verification, or no index tables).
	Features *Features `json:"features,omitempty"`
}

// FeaturesDir is the folder of an output (and, under it, of a run's
// temporary folder) that holds its features files (package featurefile,
// named as transforms.Sketch names them). Its leading _ tells the
// analysts' readers it is no table: Spark and Hadoop skip such folders,
// and a glob of */*.parquet finds nothing in it.
const FeaturesDir = "_features"

// Features are an output's features files. They are a cache, not a
// table: an update reads a document no file listed holds from the input
// again, so a file a lagging listing left out costs time, never a row.
// Each is written whole under a name fixed by its documents, so a retried
// writer writes the same file.
type Features struct {
	// Kind is what a record holds (rowsketch.FeaturesKind): an update
	// uses the files only under the same kind.
	Kind  string   `json:"kind"`
	Bytes int64    `json:"bytes"`
	Files []string `json:"files"` // relative to the output folder, sorted
}

// Paths are the files of f, in the output folder dir.
func (f *Features) Paths(dir string) []string {
	names := make([]string, len(f.Files))
	for i, name := range f.Files {
		names[i] = store.Join(dir, name)
	}
	return names
}

// MemoryLimit is a soft memory limit and how it was chosen (memlimit).
type MemoryLimit struct {
	Bytes int64  `json:"bytes"`
	From  string `json:"from"`
	// HighestBytes, when auto's limit followed the live heap of an
	// embedded run (memlimit.Follow), is the highest it was set to; Bytes
	// is then the most it could have been.
	HighestBytes int64 `json:"highest_bytes,omitempty"`
}

// NewManifest starts the manifest of a run with the given flags.
func NewManifest(flags map[string]string) *Manifest {
	m := &Manifest{
		Tool:      "neardup",
		Version:   Version,
		GoVersion: runtime.Version(),
		StartedAt: time.Now().UTC().Format(time.RFC3339),
		Flags:     flags,
		Counts:    map[string]int64{},
		BusyMS:    map[string]int64{},
		WallMS:    map[string]int64{},

		LargestGroupBytes:     map[string]int64{},
		GroupBytes:            map[string]int64{},
		LargestSideInputBytes: map[string]int64{},
		Reads:                 store.ReadsByKind{},
	}
	// The runtime's own figure, whatever set it; memlimit says how.
	if n := debug.SetMemoryLimit(-1); n != math.MaxInt64 {
		m.MemoryLimit.Bytes = n
	}
	m.MemoryLimit.From = memlimit.Applied().From
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path == "github.com/apache/beam/sdks/v2" {
				m.BeamVersion = dep.Version
			}
		}
	}
	return m
}

// ReadManifest reads the manifest of a finished output folder, refusing one
// without _SUCCESS.
func ReadManifest(ctx context.Context, dir string) (*Manifest, error) {
	if ok, err := store.Exists(ctx, store.Join(dir, SuccessMarker)); err != nil {
		return nil, fmt.Errorf("%s: looking for %s: %w", dir, SuccessMarker, err)
	} else if !ok {
		return nil, fmt.Errorf("%s is not a finished neardup output (no %s)", dir, SuccessMarker)
	}
	// An output's: an update or recluster counts it with the index's
	// tables (the manifest's reads).
	b, err := store.ReadFile(store.ReadsAs(ctx, store.ReadsOutput), store.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", store.Join(dir, ManifestFile), err)
	}
	return &m, nil
}

// Needs checks that the output in dir, whose manifest m is, holds every
// table of need, which what (a command: "update", "query") reads. An
// output written with --tables may leave some out; the error says which
// and how to get them.
func (m *Manifest) Needs(dir, what string, need tables.Selection) error {
	var missing []string
	for _, t := range need {
		if len(m.Tables[t]) == 0 {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if written := m.Settings["tables"]; written != "" && written != "all" {
		return fmt.Errorf("%s has no %s table: it was written with --tables=%s, and %s needs %s; rerun with --tables=all (or a list holding them)",
			dir, strings.Join(missing, ", "), written, what, need)
	}
	return fmt.Errorf("%s has no %s table (an output of an earlier neardup): rerun the full pipeline to %s it", dir, strings.Join(missing, ", "), what)
}

// Finish records the wall time since start.
func (m *Manifest) Finish(start time.Time) {
	m.WallSeconds = time.Since(start).Seconds()
}
