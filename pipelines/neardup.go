// Package pipelines composes neardup's transforms into the whole job and
// runs it: input matching, the Beam pipeline (Broder's four phases with the
// identical-document shortcut), and the atomic publication of the output
// tables with their manifest.
package pipelines

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/internal/progress"
	_ "github.com/neardup/neardup/io/beamfs"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/transforms"
)

// Build adds the neardup pipeline over files (sorted; their positions are
// part of the doc IDs) to scope s. Every table shard lands under
// cfg.TempDir; Run publishes them. Each step takes the parts of cfg it
// reads: how candidates are found (cand), which pairs link (link), where
// the work goes (place); cfg.Update, a full run's, names no index.
func Build(s beam.Scope, files []transforms.InputFile, cfg transforms.Config) {
	cand, link, place := cfg.Candidates(), cfg.Linking(), cfg.Placement
	splits := transforms.ReadSplits(s, files, cfg.Columns, cfg.SkipBadFiles, place.TempDir)
	meta, keys, bodies, equiv, ranks, sites, features := transforms.Sketch(s, splits, cfg.Config, place) // phase 1
	if cfg.Templates.On() {
		var kept beam.PCollection
		keys, kept = transforms.SiteTemplates(s, sites, keys, cfg.Templates, cand, place) // each site's template dropped
		bodies = beam.Flatten(s, bodies, kept)
	}
	postings, copies, reps := transforms.Identical(s, keys, bodies, cand, place) // identical shortcut
	var pairs beam.PCollection
	if cfg.Mode == settings.ModeSuperShingle {
		pairs = transforms.SuperShingles(s, postings, reps, cand, place) // instead of phases 2 and 3
	} else {
		lists, _ := transforms.ShingleMerge(s, postings, cand, cfg.Update, place)  // phase 2
		pairs = transforms.PairCount(s, lists, reps, link, cfg.FirstNewDoc, place) // phase 3
	}
	var checked beam.PCollection
	if cfg.Verification() != "" {
		pairs, checked = transforms.Verify(s, pairs, files, features, cfg.Config, link, place) // candidates checked on dense samples or whole feature sets
	}
	pairRows, assignments, stats, clustered := transforms.Cluster(s, pairs, checked, copies, ranks, reps, link, cfg.Clustering(), cfg.Update, place) // phase 4
	transforms.WritePairs(s, pairRows, link, place)
	members, summaries := withRedirects(s, meta, nil, assignments, stats, cfg) // redirects join their targets' clusters
	sketches, tablesFor := transforms.SketchesFor(cfg.Columns.Redirect != "", clustered, reps, cfg.Index)
	transforms.Assemble(s, meta, members, summaries, sketches, tablesFor, place)
	transforms.Sweeps(s, meta, members, sketches, cfg.SweepSpan, cfg.Seed, cfg.Sketch, cfg.LostMatches, cfg.Update, place) // urls, lost and found
	transforms.EquivalenceCounts(s, equiv, place.Partitions)
}

// withRedirects adds to phase 4's clusters the rows that redirect to their
// documents, under --redirect-column (Zhu et al.'s redirection-based
// duplicates), and returns the assignments, with notes of the redirects
// that joined none, and the stats Assemble takes. The rows' claims on
// their URLs come from meta, docs rows as Sketch gives them, and, in an
// update, from the index's docs shards.
func withRedirects(s beam.Scope, meta beam.PCollection, indexDocs []string, assignments, stats beam.PCollection, cfg transforms.Config) (beam.PCollection, beam.PCollection) {
	if cfg.Columns.Redirect == "" {
		return assignments, stats
	}
	owners, hops := transforms.ClaimURLs(s, meta, cfg.Seed, cfg.Partitions)
	if len(indexDocs) > 0 {
		oldOwners, oldHops := transforms.IndexClaims(s, indexDocs, cfg.Seed, cfg.Partitions)
		owners, hops = beam.Flatten(s, owners, oldOwners), beam.Flatten(s, hops, oldHops)
	}
	assignments, stats, notes := transforms.Redirects(s, owners, hops, assignments, stats, cfg.Placement)
	return beam.Flatten(s, assignments, notes), stats
}

// Options is one run of neardup.
type Options struct {
	Input  string // comma-separated globs
	Output string // the output folder, any Beam filesystem
	Config transforms.Config
	Flags  map[string]string // as given, for the manifest
	// Overwrite lets the run write into a folder holding other files.
	Overwrite bool
	// Progress is what the run reports on stderr while it runs, when its
	// workers run in this process (the embedded Prism runner, LOOPBACK);
	// the zero value reports nothing.
	Progress progress.Mode
	// MaxGroupBytes is the most one worker may hold of a keyed step's
	// group (--max-group-bytes; 0: settings.DefaultMaxGroupBytes).
	MaxGroupBytes int64
}

// maxGroupBytes is o's group budget.
func (o Options) maxGroupBytes() int64 { return cmp.Or(o.MaxGroupBytes, settings.DefaultMaxGroupBytes) }

// Run matches the input, runs the pipeline on the runner chosen by Beam's
// flags (the embedded Prism runner by default) and publishes the output
// atomically. It returns the manifest it wrote.
func Run(ctx context.Context, opt Options) (*output.Manifest, error) {
	if err := waitsForJob(); err != nil {
		return nil, err
	}
	transforms.TakeLauncherReads() // the run's reads begin here
	if err := absolute(&opt.Output); err != nil {
		return nil, err
	}
	if err := workersReach(flagPath{"input", opt.Input}, flagPath{"output", opt.Output}); err != nil {
		return nil, err
	}
	start := time.Now()
	files, err := store.Match(ctx, opt.Input)
	if err != nil {
		return nil, err
	}
	m := output.NewManifest(opt.Flags)
	if m.Inputs, err = output.StatInputs(ctx, files, opt.Config.Sweep); err != nil {
		return nil, err
	}
	var total int64
	for _, in := range m.Inputs {
		total += in.Bytes
	}
	m.InputBytes = total
	cfg := opt.Config
	rows, err := checkFits(ctx, m, files, cfg.Columns)
	if err != nil {
		return nil, err
	}
	if cfg.Partitions <= 0 {
		cfg.Partitions = partitionsFor(total, m.InputTextBytes, opt.maxGroupBytes())
	}
	m.Partitions = cfg.Partitions
	resolveComponents(&cfg, total)
	if err := groupRefusal(m.InputTextBytes, cfg.Partitions, cfg.Components, opt.maxGroupBytes()); err != nil {
		return nil, err
	}
	resolveVerify(&cfg, total)
	cfg.Lanes = lanes(cfg.Lanes)
	cfg.Waves = waves(cfg.Waves, cfg.Partitions)
	if err := checkVerifyFits(cfg, m.InputTextBytes, rows); err != nil {
		return nil, err
	}
	cfg.LatestSweep = cfg.Sweep
	m.Settings = Settings(cfg)
	keepFeatures(m, cfg)

	out, err := prepareOutput(ctx, opt.Output, "run", files, opt.Overwrite)
	if err != nil {
		return nil, err
	}
	out.Tables, cfg.TempDir, cfg.Write = cfg.Tables, out.TempDir, cfg.Tables
	out.Expect = expect(cfg, rows, cfg.Mode != settings.ModeSuperShingle)
	out.Expect.Counted = jsonLines(files)
	m, err = execute(ctx, out, m, start, watch{opt.Progress, rows}, func(s beam.Scope) { Build(s, inputFiles(m.Inputs, 0), cfg) })
	return m, explain(err, cfg.Columns)
}

// execute builds and runs a pipeline whose shards go to out's temporary
// folder, waits for it, and publishes the output with its manifest.
func execute(ctx context.Context, out *output.Dir, m *output.Manifest, start time.Time, w watch, build func(beam.Scope)) (*output.Manifest, error) {
	p, s := beam.NewPipelineWithRoot()
	build(s)
	stop := w.start(ctx, start)
	release := out.Hold(ctx) // the lease renewed while the job runs and its tables are published
	defer release()
	unfollow := followLiveHeap(m.InputTextBytes)
	res, err := runJob(ctx, p)
	m.MemoryLimit.HighestBytes = unfollow()
	stop()
	if err != nil {
		return nil, pipelineError(err)
	}
	if DryRun() {
		return nil, ErrDryRun
	}
	if res != nil {
		addMetrics(m, res.Metrics())
	}
	out.LauncherReads = transforms.TakeLauncherReads
	m.Finish(start)
	if err := out.Publish(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

// runJob runs a pipeline and waits for it: beamx.RunWithMetrics, which
// the tests replace to run every bundle twice.
var runJob = beamx.RunWithMetrics

// expect is what Publish requires of a run's tables (output.Expect):
// docsRows docs rows, and a receipt of every partition of the tables
// whose writers see every partition (transforms' everyPartition): docs
// and clusters (Assemble), members (Assemble's writer), sketches
// (Components), urls (Sweeps) and, when the run merges shingles
// (postings), postings (ShingleMerge); and largest's one shard.
func expect(cfg transforms.Config, docsRows int64, postings bool) output.Expect {
	keys := map[string]int{tables.LargestTable: 1}
	for _, t := range []string{tables.DocsTable, tables.ClustersTable, tables.MembersTable, tables.SketchesTable, tables.URLsTable} {
		keys[t] = cfg.Partitions
	}
	if postings {
		keys[tables.PostingsTable] = cfg.Partitions
	}
	return output.Expect{Keys: keys, DocsRows: docsRows}
}

// jsonLines are the files of files read as JSON lines, whose rows no
// footer gave the launcher (output.Expect.Counted).
func jsonLines(files []string) []string {
	var out []string
	for _, f := range files {
		if crawl.IsJSONLines(f) {
			out = append(out, f)
		}
	}
	return out
}

// watch is how a run reports its progress: the mode, and the input's rows
// from its footers (0: none, or unknown).
type watch struct {
	mode progress.Mode
	rows int64
}

// progressOut is where progress goes.
var progressOut io.Writer = os.Stderr

// start starts reporting, if wanted: from the progress counters where the
// workers run in this process, from the reports of the service that runs
// the job where they run elsewhere (followRemote). It returns the
// function that stops it.
func (w watch) start(ctx context.Context, start time.Time) (stop func()) {
	switch {
	case w.mode == progress.Off:
		return func() {}
	case workersInProcess():
		r := progress.Start(progressOut, w.mode, start)
		r.SetTotal(w.rows)
		return r.Stop
	}
	return followRemote(ctx, w, start)
}

// workersInProcess reports whether the SDK workers run in this process:
// on the embedded Prism runner and wherever the environment is LOOPBACK
// (Dataflow aside). Elsewhere the progress counters stay at zero here.
func workersInProcess() bool {
	if embeddedRunner() {
		return true
	}
	switch strings.ToLower(*runners.Runner) {
	case "", "prism", "prismrunner", "direct", "dataflow", "dataflowrunner":
		return false
	}
	return strings.ToLower(*jobopts.EnvironmentType) == "loopback"
}

// lanes settles Config.Lanes when it is not set (n <= 0): the cores when
// the workers run in this process, where the embedded runner would run a
// keyed stage's partitions one after another (see transforms' lanes); 1
// where the runner spreads them itself.
func lanes(n int) int {
	switch {
	case n > 0:
		return n
	case workersInProcess():
		return runtime.GOMAXPROCS(0)
	}
	return 1
}

// waves settles Config.Waves when it is not set (n <= 0): where the
// workers run in this process, on the embedded runner, the biggest
// shuffles are grouped in embeddedWaves waves (at most one a partition),
// so that the runner holds one wave's bundle at a time (see
// transforms.groupInWaves); 1 where the runner spreads a stage's keys
// itself.
func waves(n, partitions int) int {
	switch {
	case n > 0:
		return n
	case workersInProcess():
		return max(1, min(partitions, embeddedWaves))
	}
	return 1
}

// embeddedWaves is how many waves the embedded runner's biggest shuffles
// take (see waves).
const embeddedWaves = 4

// waitsForJob refuses --async: the output is published by the launcher
// once the job has finished, so a launcher that returns at submission would
// publish empty tables and _SUCCESS while the job still runs.
func waitsForJob() error {
	if *jobopts.Async {
		return fmt.Errorf("--async is not supported: neardup publishes its tables when the job has finished, so the launcher must wait for it")
	}
	return nil
}

// pipelineError shortens a failed job's error to the DoFn's own message
// (which names the file, row group or column): the runner wraps it in a
// dump of the execution plan that tells users nothing.
func pipelineError(err error) error {
	msg := err.Error()
	if i := strings.LastIndex(msg, "caused by:\n"); i >= 0 {
		cause := msg[i+len("caused by:\n"):]
		if j := strings.Index(cause, "failed:\n"); j >= 0 {
			cause = cause[j+len("failed:\n"):]
		}
		if cause = strings.TrimSpace(cause); cause != "" {
			return fmt.Errorf("pipeline failed: %s", cause)
		}
	}
	return fmt.Errorf("pipeline failed: %w", err)
}

// Settings lists the effective settings of cfg for the manifest (see
// settings.Manifest), with what the launcher settled: the partitions, the
// fingerprint version and the sweeps. Recluster, update and query read
// them back with settings.FromManifest.
func Settings(cfg transforms.Config) map[string]string {
	m := settings.Manifest(cfg.Config)
	m["fingerprint_version"] = strconv.Itoa(fingerprint.Version)
	m["partitions"] = strconv.Itoa(cfg.Partitions)
	m["first_sweep"] = cfg.Sweep
	m["latest_sweep"] = cfg.LatestSweep
	return m
}

// DistributedFromBytes is where --components=auto turns from the
// single-worker union-find to the distributed rounds: 8 GiB of Parquet
// input, about 4.5 million pages of the bench crawl. Below it the links
// are few enough for one worker (the 1M-page bench crawl links 66,000
// pairs, a few MB of union-find) and one shuffle beats seventeen
// (DefaultComponentRounds rounds and the finish); above it a crawl's links
// grow towards what no single worker should hold (README "Sizing").
const DistributedFromBytes = 8 << 30

// AutoVerifyBytes is the largest input (Parquet bytes) whose uncertain
// pairs --verify=auto verifies. Verifying them makes the default right on
// short pages (precision and recall at least 0.95 on every shared corpus,
// against 0.36 precision unverified on multilingual-docs), but it costs
// time and, on the embedded runner, memory: 1.4-1.7x the time and
// 1.6-1.7x the peak of an unverified run on multilingual-docs (17 MB),
// 1.3-1.4x and 1.4x on 130 MB of the synthetic crawl, 1.6x and 2.4x on
// 787 MB of it (BENCHMARKS.md). Above
// it the run does not verify, and the closing summary says how many links
// are uncertain and how to verify them (--verify=uncertain).
const AutoVerifyBytes = 128 << 20

// resolveVerify settles --verify=auto in --mode=pairs (the super-shingle
// modes keep their own meaning of no --verify): under a resemblance
// policy the uncertain pairs are settled on their dense samples at every
// size, so that a pair gets the same decision in a small run and a large
// one; under a containment policy, which a dense sample cannot estimate,
// they are verified exactly on inputs up to AutoVerifyBytes and not
// above.
func resolveVerify(cfg *transforms.Config, inputBytes int64) {
	if cfg.Verify != settings.VerifyAuto {
		return
	}
	cfg.Verify = settings.VerifyNone
	switch {
	case cfg.Mode != settings.ModePairs:
	case cfg.Policy.Containment == 0:
		cfg.Verify = settings.VerifyDense
	case inputBytes <= AutoVerifyBytes:
		cfg.Verify = settings.VerifyUncertain
	}
}

// resolveComponents settles --components=auto by the input size, and the
// rounds of the distributed way.
func resolveComponents(cfg *transforms.Config, inputBytes int64) {
	if cfg.Components == "" || cfg.Components == settings.ComponentsAuto {
		cfg.Components = settings.ComponentsSingle
		if inputBytes >= DistributedFromBytes {
			cfg.Components = settings.ComponentsDistributed
		}
	}
	if cfg.Components != settings.ComponentsDistributed {
		cfg.ComponentRounds = 0
	} else if cfg.ComponentRounds <= 0 {
		cfg.ComponentRounds = settings.DefaultComponentRounds
	}
}

// AutoPartitions sizes the hash partitions of every shuffle from the input
// size: the square root of the input in units of 2 MiB of Parquet, at least
// 4 and at most 65,536 (100k bench pages, 183 MB: 10; 1M pages, 1.8 GB: 29;
// 6 TB: 1,691). Why a square root: every producer of a shuffle emits at
// least one batch per partition it touches, so elements grow with
// producers × partitions, and both grow with the input under a linear rule
// (P² elements: 86x for 10x the pages). With P ∝ √input and batchers that
// may hold P × 128 KiB (see transforms), batches stay large and elements
// grow linearly, while a partition's data grows as √input: about 0.5 GB of
// postings per partition at 6 TB, within one worker's memory.
func AutoPartitions(inputBytes int64) int {
	const unit = 2 << 20
	p := int64(math.Ceil(math.Sqrt(float64(max(inputBytes, 0)) / unit)))
	return int(min(max(p, 4), 1<<16))
}

// addMetrics copies the pipeline's counters into the manifest. A counter
// bumped by several transforms is summed.
func addMetrics(m *output.Manifest, res metrics.Results) {
	for _, c := range res.AllMetrics().Counters() {
		if c.Namespace() != "neardup" {
			continue
		}
		if kind, ok := strings.CutPrefix(c.Name(), transforms.ReadsPrefix); ok {
			if k, ok := strings.CutSuffix(kind, "_requests"); ok {
				m.Reads.Add(k, store.Reads{Requests: c.Result()})
			} else if k, ok := strings.CutSuffix(kind, "_bytes"); ok {
				m.Reads.Add(k, store.Reads{Bytes: c.Result()})
			}
			continue
		}
		if phase, ok := strings.CutSuffix(c.Name(), "_busy_ms"); ok {
			m.BusyMS[phase] += c.Result()
			continue
		}
		m.Counts[c.Name()] += c.Result()
	}
	for _, d := range res.AllMetrics().Distributions() {
		if d.Namespace() != "neardup" {
			continue
		}
		v := d.Result()
		if phase, ok := strings.CutSuffix(d.Name(), transforms.ClockSuffix); ok {
			m.WallMS[phase] = max(m.WallMS[phase], v.Max-v.Min)
		}
		if step, ok := strings.CutPrefix(d.Name(), transforms.GroupBytesPrefix); ok {
			m.LargestGroupBytes[step] = max(m.LargestGroupBytes[step], v.Max)
			m.GroupBytes[step] += v.Sum
		}
		if step, ok := strings.CutPrefix(d.Name(), transforms.SideInputBytesPrefix); ok {
			m.LargestSideInputBytes[step] = max(m.LargestSideInputBytes[step], v.Max)
		}
	}
}
