package pipelines

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/transforms"
)

// UpdateOptions is one update: a finished output taken as the index, and a
// new batch of input deduplicated against it.
type UpdateOptions struct {
	From string // the index: a finished neardup output folder
	Options
}

// indexSettings are the settings an update must share with its index: they
// define the sketches, the shingles and which of them are too common.
var indexSettings = append(settings.IndexKeys(), "fingerprint_version")

// BuildUpdate adds the update pipeline to scope s: phase 1 on the new
// files only; the identical shortcut over the index's representatives and
// the new documents; phases 2 and 3 counting only new-new and new-old
// pairs, the index's own pairs coming from its pairs table (less the
// shingles the new documents make too common); phase 4 over all of them;
// under --redirect-column, every chain followed again over the index's
// rows and the new ones (a URL's latest sweep wins it: Zhu et al.'s three
// cases); and the tables of the whole, old documents and new. The
// index's tables are read by the keyed steps, each its partition's
// shards (cfg.Update), and those that only grow are carried over as they
// are.
func BuildUpdate(s beam.Scope, files []transforms.InputFile, index indexShards, cfg transforms.Config) {
	cand, link, place := cfg.Candidates(), cfg.Linking(), cfg.Placement
	splits := transforms.ReadSplits(s, files, cfg.Columns, cfg.SkipBadFiles, place.TempDir)
	meta, keys, bodies, _, ranks, _, features := transforms.Sketch(s, splits, cfg.Config, place) // phase 1, new documents
	if len(index.features) > 0 {
		// The index's documents verified on the features its run kept.
		features = beam.Flatten(s, features, transforms.IndexFeatures(s, index.features))
	}
	oldMeta, oldCopies, oldRanks := indexDocs(s, index, cfg)
	oldKeys := transforms.IndexKeys(s, index.sketches, place.Partitions)
	postings, copies, reps := transforms.Identical(s, beam.Flatten(s, oldKeys, keys), bodies, cand, place)
	lists, recapped := transforms.ShingleMerge(s, postings, cand, cfg.Update, place) // phase 2
	// The index's sketches, for the anchored pairs' counts (and, with
	// redirects, the lost and found's resemblances).
	var allReps beam.PCollection
	if link.AnchorDocs > 0 || (cfg.MultiSweep && cfg.Columns.Redirect != "") {
		allReps = beam.Flatten(s, reps, transforms.ReadSketches(s, index.sketches, place.Partitions))
	}
	pairs, carried := transforms.UpdatePairs(s, lists, recapped, allReps, link, cfg.CarryPairs, cfg.Update, place) // phase 3, new-new and new-old
	var checked beam.PCollection
	if cfg.Verification() != "" {
		// The uncertain pairs checked on their documents, the index's
		// read again from its inputs.
		pairs, checked = transforms.Verify(s, pairs, slices.Concat(index.inputs, files), features, cfg.Config, link, place)
	}
	pairRows, assignments, stats, clustered := transforms.Cluster(s, pairs, checked, beam.Flatten(s, copies, oldCopies),
		beam.Flatten(s, ranks, oldRanks), reps, link, cfg.Clustering(), cfg.Update, place, carried) // phase 4
	transforms.WritePairs(s, pairRows, link, place)
	// Redirects followed again over the whole, old and new rows (Zhu et
	// al.'s three cases: a URL's latest row wins it).
	members, summaries := withRedirects(s, meta, index.docs, assignments, stats, cfg)
	sketches, tablesFor := transforms.SketchesFor(cfg.Columns.Redirect != "", clustered, reps, cfg.Index)
	transforms.Assemble(s, meta, members, summaries, sketches, tablesFor, place) // the index's rows read there
	// The index's URLs are in its urls table; oldMeta holds only its
	// documents of the latest sweep, for the lost and found. The lost
	// URLs' resemblances need the index's sketches too: the clustered
	// sketches hold them, the representatives' (with redirects) do not,
	// so then they are read beside (allReps).
	all := beam.Flatten(s, meta, oldMeta)
	if cfg.Columns.Redirect != "" && cfg.MultiSweep {
		sketches = allReps
	}
	transforms.Sweeps(s, all, members, sketches, cfg.SweepSpan, cfg.Seed, cfg.Sketch, cfg.LostMatches, cfg.Update, place) // urls, lost and found
	// The tables that only grow keep the index's shards as they are.
	transforms.CarryShards(s, cfg.Index.Postings, tables.PostingsTable, place)
	transforms.CarryShards(s, cfg.Index.Sketches, tables.SketchesTable, place)
	transforms.CarryFeatures(s, index.features, transforms.KeepsFeatures(cfg.Config, cfg.Tables), place)
}

// Update deduplicates opt.Input against the index opt.From and writes, in
// opt.Output, the tables a full run over the index's input and the new
// input together would write. The new files are numbered after the
// index's, so every old document keeps its doc ID and no new one takes
// one of the index's.
func Update(ctx context.Context, opt UpdateOptions) (*output.Manifest, error) {
	if err := absolute(&opt.From, &opt.Output); err != nil {
		return nil, err
	}
	if err := workersReach(flagPath{"from", opt.From}, flagPath{"input", opt.Input}, flagPath{"output", opt.Output}); err != nil {
		return nil, err
	}
	start, src, err := startFrom(ctx, opt.From)
	if err != nil {
		return nil, err
	}
	cfg := opt.Config
	if strings.TrimSuffix(opt.From, "/") == strings.TrimSuffix(opt.Output, "/") {
		return nil, fmt.Errorf("update writes a new output folder; --output must differ from --from")
	}
	if err := src.Needs(opt.From, "update", tables.IndexNeeds); err != nil {
		return nil, err // an index written with --tables: say so before anything else
	}
	files, err := store.Match(ctx, opt.Input)
	if err != nil {
		return nil, err
	}
	m := output.NewManifest(opt.Flags)
	m.UpdatedFrom = opt.From
	m.Inputs = slices.Clone(src.Inputs)
	m.InputBytes = src.InputBytes
	for _, f := range files {
		if slices.ContainsFunc(src.Inputs, func(in output.Input) bool { return samePath(in.Path, f) }) {
			return nil, fmt.Errorf("%s is already in the index %s: an update takes new files only", f, opt.From)
		}
	}
	ins, err := output.StatInputs(ctx, files, cfg.Sweep)
	if err != nil {
		return nil, err
	}
	inputs := inputFiles(ins, len(m.Inputs))
	for _, in := range ins {
		m.Inputs = append(m.Inputs, in)
		m.InputBytes += in.Bytes
	}
	rows, err := checkFits(ctx, m, files, cfg.Columns) // the new input's: what the update adds to the index's
	if err != nil {
		return nil, err
	}
	if cfg.Verify == settings.VerifyAuto {
		resolveVerify(&cfg, m.InputBytes) // as a full run over all of it would
		if cfg.UncertainOnly() && sameReading(opt.From, src, cfg) != nil {
			cfg.Verify = settings.VerifyNone // the index's documents cannot be read again as it read them
		}
	}
	if err := updatable(opt.From, src, cfg); err != nil {
		return nil, err
	}
	cfg.Lanes = lanes(cfg.Lanes)
	if err := checkVerifyFits(cfg, m.InputTextBytes, rows); err != nil {
		return nil, err
	}
	// A multiple of the index's partition count, so that each keyed step
	// finds the index's records of its partition in one shard.
	// The groups hold the index's records too: its text is estimated
	// from its Parquet bytes at the new input's ratio.
	allText := m.InputTextBytes
	if newBytes := m.InputBytes - src.InputBytes; newBytes > 0 {
		allText = int64(float64(m.InputTextBytes) * float64(m.InputBytes) / float64(newBytes))
	}
	if cfg.Partitions <= 0 {
		fit := (partitionsForGroups(allText, opt.maxGroupBytes()) + src.Partitions - 1) / src.Partitions
		cfg.Partitions = src.Partitions * max(1, partitionsFor(m.InputBytes, 0, 0)/src.Partitions, fit)
	} else if cfg.Partitions%src.Partitions != 0 {
		return nil, fmt.Errorf("--partitions=%d: an update's partition count must be a multiple of its index's, %d (or leave it out)", cfg.Partitions, src.Partitions)
	}
	m.Partitions = cfg.Partitions
	cfg.Waves = waves(cfg.Waves, cfg.Partitions)
	resolveComponents(&cfg, m.InputBytes)
	if err := groupRefusal(allText, cfg.Partitions, cfg.Components, opt.maxGroupBytes()); err != nil {
		return nil, err
	}
	cfg.LatestSweep = max(cfg.Sweep, src.Settings["latest_sweep"])
	first := min(cfg.Sweep, src.Settings["first_sweep"])
	cfg.MultiSweep = first != cfg.LatestSweep
	m.Settings = Settings(cfg)
	m.Settings["first_sweep"] = first
	cfg.FirstNewDoc = crawl.DocID(len(src.Inputs), 0)

	index, err := readIndex(ctx, opt.From, src)
	if err != nil {
		return nil, err
	}
	cfg.Index = index.tables
	index.features = indexFeatures(opt.From, src, cfg)
	keepFeatures(m, cfg)
	if err := urlsHaveDocIDs(ctx, opt.From, index.tables.URLs); err != nil {
		return nil, err
	}
	// Under the index's policy and verification, its pairs rows and
	// their links stay.
	cfg.CarryPairs = src.Settings["policy"] == m.Settings["policy"] && src.Settings["verify"] == m.Settings["verify"]
	var newPaths []string
	for _, in := range inputs {
		newPaths = append(newPaths, in.Path)
	}
	indexRows, err := shardRows(ctx, index.docs)
	if err != nil {
		return nil, err
	}
	out, err := prepareOutput(ctx, opt.Output, "update", slices.Concat(newPaths, index.shards()), opt.Overwrite)
	if err != nil {
		return nil, err
	}
	out.Tables, cfg.TempDir, cfg.Write = cfg.Tables, out.TempDir, cfg.Tables
	out.Expect = expect(cfg, indexRows+rows, true) // the index's rows and the new ones
	out.Expect.Counted = jsonLines(newPaths)
	m, err = execute(ctx, out, m, start, watch{opt.Progress, rows},
		func(s beam.Scope) { BuildUpdate(s, inputs, index, cfg) })
	return m, explain(err, cfg.Columns)
}

// samePath reports whether two matched input paths name one file: local
// paths compared as absolute, clean paths, others (gs://, s3://) as given.
func samePath(a, b string) bool {
	if strings.Contains(a, "://") || strings.Contains(b, "://") {
		return a == b
	}
	x, errA := filepath.Abs(a)
	y, errB := filepath.Abs(b)
	return errA == nil && errB == nil && x == y
}

// flagOr is the flag name as the run that wrote src was given it, or def
// when the manifest does not have it.
func flagOr(src *output.Manifest, name, def string) string {
	if v, ok := src.Flags[name]; ok {
		return v
	}
	return def
}

// sameReading says why the index src (in dir) cannot have its documents
// read again for --verify=uncertain as it read them, if it cannot: its
// columns or stop words differ from cfg's.
func sameReading(dir string, src *output.Manifest, cfg transforms.Config) error {
	text, html := flagOr(src, "text-column", "text"), flagOr(src, "html-column", "")
	if text != cfg.Columns.Text || html != cfg.Columns.HTML || src.Settings["stopwords"] != cfg.Stopwords {
		return fmt.Errorf("--verify=uncertain reads the index's documents again, as %s read them: give its --text-column %q, --html-column %q and --stopwords %q (this update has %q, %q and %q), or --verify=none",
			dir, text, html, src.Settings["stopwords"], cfg.Columns.Text, cfg.Columns.HTML, cfg.Stopwords)
	}
	return nil
}

// updatable says why the index src (in dir) cannot take an update under
// cfg, if it cannot.
func updatable(dir string, src *output.Manifest, cfg transforms.Config) error {
	if _, err := settings.FromManifest(src.Settings, src.Flags); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	want := Settings(cfg)
	for _, k := range indexSettings {
		have := src.Settings[k]
		if k == "features" && have == "" {
			have = "words:" + src.Settings["shingle_words"] // written before --features
		}
		decl := settings.Recorded(k)
		if _, recorded := src.Settings[k]; !recorded && decl != nil && decl.Absent != "" {
			have = decl.Absent // written before the setting: what it ran as
		}
		if have != want[k] {
			give := ""
			if decl != nil {
				give = fmt.Sprintf("give --%s %s, or ", decl.Name, have)
			}
			return fmt.Errorf("%s was written with %s %q and this update has %q: an index and its update must share the sketch, shingle and seed settings (%srerun the full pipeline to change them)",
				dir, k, have, want[k], give)
		}
	}
	switch {
	case src.Settings["mode"] != "pairs" || cfg.Mode != settings.ModePairs:
		return fmt.Errorf("update supports --mode=pairs only (the index has mode %q)", src.Settings["mode"])
	case src.Settings["pairs"] != "all" || cfg.LinkedOnly:
		return fmt.Errorf("%s kept only its linked pairs (--pairs=linked), and an update needs all of them: rerun it with --pairs=all (the default)", dir)
	case cfg.Verification() != "" && !cfg.UncertainOnly():
		return fmt.Errorf("update verifies with --verify=uncertain or not at all (--verify=none): --verify=%s would read most of the index's documents again", cfg.Verify)
	case cfg.Templates.On():
		return fmt.Errorf("update does not support --template-shingles: new pages change their site's template, and so the index's sketches")
	}
	if cfg.UncertainOnly() {
		if err := sameReading(dir, src, cfg); err != nil {
			return err
		}
	}
	if latest := src.Settings["latest_sweep"]; cfg.Sweep < latest {
		return fmt.Errorf("the sweep date %s is earlier than %s's latest sweep, %s: an update adds to the latest sweep or starts a later one", cfg.Sweep, dir, latest)
	}
	if err := cfg.Policy.Reclusterable(); err != nil {
		return fmt.Errorf("the index keeps the pairs of its own documents as recluster does: %w", err)
	}
	return nil
}

// urlsHaveDocIDs refuses an index whose urls table was written before
// its doc_ids column: the update could not list the index's documents of
// a URL it merges (an index's every urls shard is of one run).
func urlsHaveDocIDs(ctx context.Context, from string, urls []transforms.Shard) error {
	if len(urls) == 0 {
		return nil
	}
	f, err := tables.OpenLookup(ctx, urls[0].Path)
	if err != nil {
		return err
	}
	defer f.Close()
	if !f.Has("doc_ids") {
		return fmt.Errorf("the index %s was written before the urls table had doc_ids (each URL's documents, which query and serve look up): recluster it first (runner recluster --from %s --output NEW, which reads the stored pairs and rewrites every table with them) and update that", from, from)
	}
	return nil
}
