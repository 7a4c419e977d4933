package pipelines

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/transforms"
)

// ReclusterOptions is one recluster run: phase 4 again, under another
// policy, from the tables of an earlier run.
type ReclusterOptions struct {
	From   string // a finished neardup output folder
	Output string
	Policy policy.Policy
	Flags  map[string]string // as given, for the manifest
	// Overwrite lets the run write into a folder holding other files.
	Overwrite bool
	// Progress is as in Options; recluster reads no input rows.
	Progress progress.Mode
	// Components is how phase 4 finds the components (settings.Components*;
	// empty: auto, by the first run's input size), in ComponentRounds
	// rounds if distributed (0: the default).
	Components      string
	ComponentRounds int
	// Keep is the document each cluster keeps; the docs table holds what
	// every policy but max/min:COLUMN ranks by.
	Keep keep.Policy
	// Centered is --clusters=centered.
	Centered bool
	// Tables are the tables it writes (--tables; nil: all).
	Tables tables.Selection
	// LostMatches is --lost-matches: the lost table's documents per lost
	// URL (0: all).
	LostMatches int
}

// BuildRecluster adds the recluster pipeline to scope s: the stored pairs
// are linked again under cfg.Policy, and the stored docs, with their
// identical copies, are clustered again.
// The first run's inputs are read only for a --keep by an input column.
func BuildRecluster(s beam.Scope, index indexShards, cfg transforms.Config) {
	link, place := cfg.Linking(), cfg.Placement
	pairRows, links := transforms.Relink(s, index.pairs, link, place)
	meta, copies, ranks := indexDocs(s, index, cfg)
	reps := transforms.ReadSketches(s, index.sketches, place.Partitions)
	assignments, stats, clustered := transforms.Components(s, links, copies, ranks, reps, cfg.Clustering(), cfg.Update, place)
	transforms.WritePairs(s, pairRows, link, place)
	members, summaries := withRedirects(s, meta, nil, assignments, stats, cfg) // the stored redirects followed again
	sketches, tablesFor := transforms.SketchesFor(cfg.Columns.Redirect != "", clustered, reps, cfg.Index)
	transforms.Assemble(s, meta, members, summaries, sketches, tablesFor, place)
	transforms.Sweeps(s, meta, members, sketches, cfg.SweepSpan, cfg.Seed, cfg.Sketch, cfg.LostMatches, cfg.Update, place) // urls, lost and found
	transforms.CarryShards(s, index.tables.Postings, tables.PostingsTable, place)                                          // for updates
	transforms.CarryFeatures(s, index.features, true, place)                                                               // for updates
}

// indexDocs reads an output's docs table for recluster and update: its
// rows, identical copies and ranks, as transforms.ReadDocs gives them,
// except that a --keep by an input column, which the docs table cannot
// rank by, reads that column of the output's inputs (nothing else).
func indexDocs(s beam.Scope, index indexShards, cfg transforms.Config) (meta, copies, ranks beam.PCollection) {
	meta, copies, ranks = transforms.ReadDocs(s, index.docs, cfg.Keep, cfg.SweepSpan, cfg.Update, cfg.Placement)
	if cfg.Keep.NeedsColumn() != "" {
		scores := transforms.ScoreRanks(s, index.inputs, cfg.Keep, cfg.Partitions)
		copies, ranks = transforms.RankByColumn(s, copies, ranks, scores, cfg.Partitions)
	}
	return meta, copies, ranks
}

// startFrom begins a run that reads the finished output dir (recluster,
// update): it refuses --async, and returns the start time and dir's
// manifest (an error for a folder without _SUCCESS).
func startFrom(ctx context.Context, dir string) (time.Time, *output.Manifest, error) {
	start := time.Now()
	if err := waitsForJob(); err != nil {
		return start, nil, err
	}
	transforms.TakeLauncherReads() // the run's reads begin here
	src, err := output.ReadManifest(ctx, dir)
	return start, src, err
}

// Recluster redoes only phase 4 of the run in opt.From under opt.Policy and
// writes the same tables a full run with that policy would.
func Recluster(ctx context.Context, opt ReclusterOptions) (*output.Manifest, error) {
	if err := absolute(&opt.From, &opt.Output); err != nil {
		return nil, err
	}
	if err := workersReach(flagPath{"from", opt.From}, flagPath{"output", opt.Output}); err != nil {
		return nil, err
	}
	start, src, err := startFrom(ctx, opt.From)
	if err != nil {
		return nil, err
	}
	if err := opt.Policy.Reclusterable(); err != nil {
		return nil, err
	}
	was, err := settings.FromManifest(src.Settings, src.Flags)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opt.From, err)
	}
	verification := was.Verification()
	if sk := src.Settings["sketch"]; opt.Policy.Containment > 0 && !strings.HasPrefix(sk, "mod:") && (verification == "" || was.UncertainOnly()) {
		return nil, fmt.Errorf("%s was sketched with %q, which cannot estimate containment; a containment policy needs a mod:M sketch", opt.From, sk)
	}
	if src.Settings["pairs"] == "linked" {
		return nil, fmt.Errorf("%s kept only its linked pairs (--pairs=linked), not the pairs another policy needs: rerun it with --pairs=all (the default) to recluster it", opt.From)
	}
	if was.Mode == settings.ModeExact {
		// The exact join's candidates are the pairs that may reach its
		// threshold: none below it was looked for.
		if opt.Policy.Containment > 0 || opt.Policy.Resemblance < was.Policy.Resemblance {
			return nil, fmt.Errorf("%s ran the exact join at %s, which found no pair below it: recluster it at resemblance %g or above, or rerun the full pipeline", opt.From, was.Policy, was.Policy.Resemblance)
		}
	} else if was.LinksAll() {
		return nil, fmt.Errorf("%s linked super-shingle candidates without verifying them (mode %s): its links do not follow a policy, so there is none to redo; rerun it with --verify=sketch", opt.From, src.Settings["mode"])
	}
	if strings.TrimSuffix(opt.From, "/") == strings.TrimSuffix(opt.Output, "/") {
		return nil, fmt.Errorf("recluster writes a new output folder; --output must differ from --from")
	}
	if err := src.Needs(opt.From, "recluster", tables.IndexNeeds); err != nil {
		return nil, err
	}
	index, err := readIndex(ctx, opt.From, src)
	if err != nil {
		return nil, err
	}
	m := output.NewManifest(opt.Flags)
	m.ReclusterFrom, m.SourceFlags, m.Inputs, m.InputBytes = opt.From, src.Flags, src.Inputs, src.InputBytes
	// Phase 4 again, under the new policy, on what the source's sketches
	// and pairs hold: its sketch, seed and verification.
	var cfg transforms.Config
	cfg.Mode, cfg.Verify, cfg.Policy, cfg.Partitions = settings.ModePairs, verification, opt.Policy, src.Partitions
	if kind, at, err := settings.VerifiedAt(src.Settings["verify"]); err != nil {
		return nil, fmt.Errorf("%s: %w", opt.From, err)
	} else if kind != "" {
		// Its pairs uncertain at the policy it verified at (its own, or
		// its source's if it is a recluster) were verified; the others
		// keep their estimates.
		cfg.Verify, cfg.SourcePolicy = kind, at
	}
	if cfg.Partitions <= 0 {
		cfg.Partitions = partitionsFor(src.InputBytes, src.InputTextBytes, settings.DefaultMaxGroupBytes)
	}
	m.Partitions = cfg.Partitions
	m.Settings = map[string]string{}
	for k, v := range src.Settings {
		m.Settings[k] = v
	}
	m.Settings["policy"] = opt.Policy.String()
	cfg.Components, cfg.ComponentRounds, cfg.Keep, cfg.Centered = opt.Components, opt.ComponentRounds, opt.Keep, opt.Centered
	cfg.Seed, cfg.Sketch = was.Seed, was.Sketch
	cfg.Columns.Redirect = was.Columns.Redirect // its redirects, followed again from its docs rows
	cfg.LatestSweep = src.Settings["latest_sweep"]
	cfg.MultiSweep = src.Settings["first_sweep"] != cfg.LatestSweep
	cfg.Tables, cfg.LostMatches = opt.Tables, opt.LostMatches
	m.Settings["tables"] = cfg.Tables.String()
	if src.Features != nil && cfg.Tables.Has(tables.SketchesTable) {
		// Carried whole, for the updates of this output.
		m.Features = &output.Features{Kind: src.Features.Kind}
		index.features = src.Features.Paths(opt.From)
	}
	m.Settings["lost_matches"] = strconv.Itoa(cfg.LostMatches)
	m.Settings["keep"] = cfg.Keep.String()
	m.Settings["clusters"] = cfg.ClustersSetting()
	resolveComponents(&cfg, src.InputBytes)
	m.Settings["components"] = cfg.Components
	m.Settings["component_rounds"] = strconv.Itoa(cfg.ComponentRounds)

	docsRows, err := shardRows(ctx, index.docs)
	if err != nil {
		return nil, err
	}
	out, err := prepareOutput(ctx, opt.Output, "recluster", index.shards(), opt.Overwrite)
	if err != nil {
		return nil, err
	}
	out.Tables, cfg.TempDir, cfg.Write = cfg.Tables, out.TempDir, cfg.Tables
	out.Expect = expect(cfg, docsRows, false) // its postings are carried as they were
	cfg.Lanes = lanes(cfg.Lanes)
	cfg.Waves = waves(cfg.Waves, cfg.Partitions)
	return execute(ctx, out, m, start, watch{mode: opt.Progress}, func(s beam.Scope) { BuildRecluster(s, index, cfg) })
}

// indexShards are the table shards of a finished output that recluster
// and update read, and its inputs, at their positions in the doc IDs (a
// --keep by an input column reads that column of them, nothing else).
type indexShards struct {
	docs, pairs, contained, sketches, postings, urls []string
	inputs                                           []transforms.InputFile
	tables                                           transforms.IndexTables // the same by partition
	// features are its features files (output.Features), when a run
	// under its settings may verify on them (indexFeatures).
	features []string
}

// readIndex lists the docs, pairs and sketches shards of the finished
// output dir, whose manifest is src and lists them (its callers check
// src.Needs(dir, ..., tables.IndexNeeds) first).
func readIndex(ctx context.Context, dir string, src *output.Manifest) (indexShards, error) {
	var index indexShards
	// Pinned to the versions the index read: reading another would mix
	// them (a file changed since fails the update, naming it).
	index.inputs = inputFiles(src.Inputs, 0)
	for _, t := range []struct {
		name   string
		shards *[]string
	}{{tables.DocsTable, &index.docs}, {tables.PairsTable, &index.pairs}, {tables.SketchesTable, &index.sketches}, {tables.PostingsTable, &index.postings}, {tables.URLsTable, &index.urls}, {tables.ContainedTable, &index.contained}} {
		shards, err := store.List(ctx, store.Join(dir, t.name, "*.parquet"))
		if err == nil && len(shards) == 0 {
			err = fmt.Errorf("%s has no %s table, though its manifest lists it", dir, t.name)
		}
		if err != nil {
			return index, err
		}
		*t.shards = shards
	}
	var err error
	index.tables, err = transforms.NewIndexTables(src.Partitions, len(src.Inputs), index.docs, index.pairs, index.contained, index.sketches, index.postings, index.urls)
	return index, err
}

// shards are all the table shards, the files an output must not overwrite.
func (ix indexShards) shards() []string {
	return slices.Concat(ix.docs, ix.pairs, ix.contained, ix.sketches, ix.postings, ix.urls, ix.features)
}

// indexFeatures are the features files of the index dir, whose manifest
// is src, when they hold what a run under cfg verifies on (the same
// rowsketch.FeaturesKind); none otherwise, and the run reads the index's
// documents from its input again.
func indexFeatures(dir string, src *output.Manifest, cfg transforms.Config) []string {
	kind := rowsketch.FeaturesKind(cfg.Config)
	if src.Features == nil || kind == "" || src.Features.Kind != kind {
		return nil
	}
	return src.Features.Paths(dir)
}

// keepFeatures records in m that the run keeps its features beside its
// tables (transforms.KeepsFeatures), for Publish to move them there.
func keepFeatures(m *output.Manifest, cfg transforms.Config) {
	if transforms.KeepsFeatures(cfg.Config, cfg.Tables) {
		m.Features = &output.Features{Kind: rowsketch.FeaturesKind(cfg.Config)}
	}
}
