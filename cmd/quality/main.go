// Command quality measures how well neardup finds near-duplicates: for each
// corpus, sketch mode and resemblance threshold it runs the pipeline
// (in-process, on Beam's embedded Prism runner unless Beam's --runner says
// otherwise) and compares the pairs it links with the exact set-similarity
// join (package simjoin) of the documents' full w-shingle sets at the same
// threshold. It prints markdown tables on stdout, progress on stderr.
//
//	go run ./cmd/quality --input 'testdata/crawl/*.parquet' --modes mod:25,min:100
//	go run ./cmd/quality --all 2>/dev/null
//
// # Corpora
//
// Each --input value is a comma-separated list of corpora, one glob each
// (--input may be repeated). A corpus is read as HTML (its --html-column,
// default "html", through package htmltext) when the file name of its glob
// contains "html", or when it is given with --html instead of --input;
// otherwise its text column (--text-column, default "text") is read. HTML
// becomes text as --extract says (main, the pipeline's default, or
// visible), on both sides: the exact join sees the text the pipeline
// shingles. --all runs its HTML corpus both ways.
//
// --all runs the standard set, from the module root: testdata/crawl/*.parquet
// and each corpus of ../shared/data that exists (deb-copyright,
// cc-main-2019-30-sample, deb-manpages, python-3.11-docs-html as HTML,
// clough-stevenson), plus the containment tables of clough-stevenson.
//
// # Pairs
//
// The exact side reads every row, tokenizes it (package canon), shingles it
// with the pipeline's seed and w, and leaves out documents with no shingles;
// its join is computed once per corpus and threshold and shared by the
// modes. The pipeline side is every pair the pipeline calls near-duplicate
// directly: the linked rows of its pairs table, expanded through identical
// copies (a copy's representative's links hold for the copy), and every pair
// within an identical group; only pairs of two documents with status ok (the
// documents with shingles) count. Precision is |found ∩ exact| / |found|,
// recall |found ∩ exact| / |exact|; "-" when the denominator is 0.
//
// Modes (--modes, comma list): defaults (the runner's, --verify=auto
// included); mod:25 (MOD_25, unverified), min:100 (MIN_100),
// supershingle (MIN_100, super-shingles of 5 values), supershingle+verify
// (the same, candidates verified against the sketch estimate) and
// minhash:100/20 (MinHash with 100 hash functions in 20 bands);
// mod:25+bloom, mod:25+exact and supershingle+exact verify the candidates
// on the whole feature sets (--verify), mod:25+uncertain only those whose
// estimates are uncertain (--verify=uncertain); chunks:256+bloom is Jain et al.'s
// engine; exact is --mode=exact; mod:25+stopwords:en drops English stop
// words before shingling; group is runner group's links (every pair of
// documents compared through Bloom filters of their shingle sets, in this
// process, the whole corpus one result list);
// mod:25+templates and min:100+templates are mod:25 and min:100 with
// --template-shingles=auto at its default share and minimum site size.
// The exact side is the same for every mode: the full shingle sets,
// template shingles included, so a template mode's lost "recall" is the
// pairs that share little but their site's template.
//
// # Containment
//
// --containment FILE names the Clough-Stevenson plagiarism corpus (answers
// and the five orig_task* sources). It is run with mod:25 and the policy
// containment:0.5, at w=10 and at w=5, and for each category of answer
// (cut, light, heavy, non) the tool prints how many answers the contained
// table places inside their own task's source, their mean estimated
// containment in it (0 when the pair is not in the pairs table), and the
// mean exact containment |S(answer) ∩ S(source)| / |S(answer)| over the full
// shingle sets. Labels come from --containment-labels (a CSV with columns File, Task,
// Category; by default FILE with ".parquet" replaced by "-labels.csv") or,
// when that default file does not exist, from the corpus's source column
// ("clough-stevenson:task=b:category=cut").
//
// # Outside clusterings
//
// --clusters NAME=PATH scores a clustering made elsewhere (another tool's,
// or a neardup output folder's docs table) against the exact join's
// clusters, the connected components of its pairs at each threshold:
// precision is the share of the clustering's same-cluster pairs that are
// same-cluster pairs of the truth, recall the reverse, counted over the
// documents with shingles (a CSV names them by doc ID, as the JSON lines
// shards of --shards do). --modes none scores only those; --scores-out
// writes the rows as JSON lines. scripts/peers runs the peers this way.
// With --modes none the truth is simjoin.Components, the same components
// found without listing the join's pairs, so that families of tens of
// thousands of near-copies (a billion pairs) can be scored. --families
// RE names planted families by the input's ids (scripts/growcorpus's
// family-K-copy-N: 'family-(\d+)-copy-'), and prints for the exact join
// and each clustering the most of each family in one cluster.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/features/shingle"
	"github.com/neardup/neardup/features/sitetemplate"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/bloom"
	"github.com/neardup/neardup/similarity/simjoin"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/text/canon"
	"github.com/neardup/neardup/transforms"
	"github.com/neardup/neardup/views/rankgroup"
)

// listFlag collects comma-separated values over repeated flags.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

var (
	inputs, htmlInputs listFlag

	all          = flag.Bool("all", false, "run the standard corpora: testdata/crawl/*.parquet and ../shared/data/*.parquet (run from the module root)")
	modesFlag    = flag.String("modes", strings.Join(modeNames(), ","), "comma-separated modes")
	thresholds   = flag.String("thresholds", "0.5,0.8", "comma-separated resemblance thresholds")
	textColumn   = flag.String("text-column", "text", "text column of text corpora")
	htmlColumn   = flag.String("html-column", "html", "HTML column of HTML corpora (file name containing \"html\", or given with --html)")
	extractFlag  = flag.String("extract", settings.ExtractMain, "how HTML corpora become text, for the pipeline and the exact join alike: main or visible (--all runs both)")
	containment  = flag.String("containment", "", "the Clough-Stevenson Parquet file: print its containment tables")
	labelsFlag   = flag.String("containment-labels", "", "labels CSV of --containment (default: its path with .parquet replaced by -labels.csv)")
	shingleWords = flag.Int("shingle-words", 10, "w, words per shingle")
	seed         = flag.Uint64("seed", fingerprint.DefaultSeed, "fingerprint seed")

	clusterSpecs listFlag
	familyRE     *regexp.Regexp // --families, compiled
	shardsDir    = flag.String("shards", "", "write the corpus's documents with shingles as JSON lines shards into this folder for tools outside neardup, and stop")
	shardCount   = flag.Int("shard-count", 8, "number of --shards files")
	familiesFlag = flag.String("families", "", "a regular expression over the input's ids: the documents it matches are planted families, named by its first group (e.g. 'family-(\\d+)-copy-'); with --clusters, each family's most documents in one cluster, for the exact join and each clustering")
	scoresOut    = flag.String("scores-out", "", "also write the same-cluster rows of --clusters to this file, one JSON object per line")
)

func init() {
	flag.Var(&inputs, "input", "corpora, one glob each, comma-separated; repeatable")
	flag.Var(&htmlInputs, "html", "HTML corpora, one glob each, comma-separated; repeatable")
	flag.Var(&clusterSpecs, "clusters", "NAME=PATH: a clustering to score against the exact join's clusters, a neardup output folder or a CSV of id (doc ID) and cluster; comma-separated, repeatable")
}

// mode is one way of running the pipeline, or (apply nil) of linking
// documents without it: inProcess[name].
type mode struct {
	name  string
	apply func(*transforms.Config)
}

// inProcess are the modes that find their pairs in this process, from the
// documents' full shingle sets (by doc ID) at threshold t.
var inProcess = map[string]func(sets map[uint64][]uint64, t float64) (pairSet, error){
	"group": bloomLinks,
}

var modes = []mode{
	// The runner's defaults as they are (--verify=auto: on these small
	// corpora, the uncertain pairs verified).
	{"defaults", func(c *transforms.Config) { c.Verify = settings.VerifyAuto }},
	// The defaults, with shingles over --max-shingle-docs dropped
	// (--anchor-docs 0, Broder's way and the default until issue 55)
	// rather than anchored.
	{"defaults+drop", func(c *transforms.Config) { c.Verify, c.AnchorDocs = settings.VerifyAuto, 0 }},
	{"mod:25", func(c *transforms.Config) { c.Sketch = sketch.Spec{Kind: sketch.Mod, N: 25} }},
	{"min:100", func(c *transforms.Config) { c.Sketch = sketch.Spec{Kind: sketch.Min, N: 100} }},
	{"supershingle", func(c *transforms.Config) {
		c.Sketch = sketch.Spec{Kind: sketch.Min, N: 100}
		c.Mode, c.SuperSize, c.Verify = settings.ModeSuperShingle, 5, settings.VerifyNone
	}},
	{"supershingle+verify", func(c *transforms.Config) {
		c.Sketch = sketch.Spec{Kind: sketch.Min, N: 100}
		c.Mode, c.SuperSize, c.Verify = settings.ModeSuperShingle, 5, settings.VerifySketch
	}},
	{"minhash:100/20", func(c *transforms.Config) {
		c.Sketch = sketch.Spec{Kind: sketch.MinHash, N: 100}
		c.Mode, c.Bands, c.Verify = settings.ModeSuperShingle, 20, settings.VerifyNone
	}},
	// Content-defined chunks (Jain et al.), every chunk in the sketch,
	// as the runner defaults to.
	{"chunks:64", func(c *transforms.Config) { c.Chunks, c.Sketch = 64, sketch.Spec{Kind: sketch.Mod, N: 1} }},
	{"chunks:256", func(c *transforms.Config) { c.Chunks, c.Sketch = 256, sketch.Spec{Kind: sketch.Mod, N: 1} }},
	// Candidates verified on the whole feature sets: Bloom filters
	// (Jain et al.), exactly (ppjoin+'s verification); and the exact
	// join itself (--mode=exact).
	{"mod:25+bloom", func(c *transforms.Config) {
		c.Sketch, c.Verify = sketch.Spec{Kind: sketch.Mod, N: 25}, settings.VerifyBloom
	}},
	{"mod:25+exact", func(c *transforms.Config) {
		c.Sketch, c.Verify = sketch.Spec{Kind: sketch.Mod, N: 25}, settings.VerifyExact
	}},
	// Only the candidates whose estimates are uncertain verified exactly.
	{"mod:25+uncertain", func(c *transforms.Config) {
		c.Sketch, c.Verify = sketch.Spec{Kind: sketch.Mod, N: 25}, settings.VerifyUncertain
	}},
	{"supershingle+exact", func(c *transforms.Config) {
		c.Sketch = sketch.Spec{Kind: sketch.Min, N: 100}
		c.Mode, c.SuperSize, c.Verify = settings.ModeSuperShingle, 5, settings.VerifyExact
	}},
	{"chunks:256+bloom", func(c *transforms.Config) {
		c.Chunks, c.Sketch, c.Verify = 256, sketch.Spec{Kind: sketch.Mod, N: 1}, settings.VerifyBloom
	}},
	{"exact", func(c *transforms.Config) { c.Mode = settings.ModeExact }},
	// Stop words out before shingling (Maharjan): against the exact
	// join of the full shingle sets.
	{"mod:25+stopwords:en", func(c *transforms.Config) {
		c.Sketch, c.Stopwords = sketch.Spec{Kind: sketch.Mod, N: 25}, "en"
	}},
	// runner group's links: every pair of documents compared through
	// Bloom filters of their shingle sets, the whole corpus one result
	// list (Jain et al.).
	{"group", nil},
	{"mod:25+templates", func(c *transforms.Config) {
		c.Sketch = sketch.Spec{Kind: sketch.Mod, N: 25}
		c.Templates = defaultTemplates
	}},
	{"min:100+templates", func(c *transforms.Config) {
		c.Sketch = sketch.Spec{Kind: sketch.Min, N: 100}
		c.Templates = defaultTemplates
	}},
}

// defaultTemplates is --template-shingles=auto with its defaults.
var defaultTemplates = sitetemplate.Spec{Share: sitetemplate.DefaultShare, MinPages: sitetemplate.DefaultMinPages}

func modeNames() []string {
	var names []string
	for _, m := range modes {
		names = append(names, m.name)
	}
	return names
}

// corpus is one input glob.
type corpus struct {
	glob    string
	html    bool
	extract string // HTML: settings.ExtractMain or ExtractVisible
}

// name is the corpus as its rows show it.
func (c corpus) name() string {
	if c.html {
		return c.glob + " (" + c.extract + ")"
	}
	return c.glob
}

// standard corpora of --all, beside the module.
const sharedDir = "../shared/data"

var sharedCorpora = []string{
	"deb-copyright.parquet",
	"cc-main-2019-30-sample.parquet",
	"deb-manpages.parquet",
	"python-3.11-docs-html.parquet",
	"clough-stevenson.parquet",
}

const cloughStevenson = "clough-stevenson.parquet"

func main() {
	// Beam's worker mode re-enters main with its own flags: parse, then
	// hand over to beam.Init before anything else happens.
	flag.Parse()
	beam.Init()

	if err := run(context.Background()); err != nil {
		if errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "quality:", err)
			flag.Usage()
			os.Exit(2)
		}
		// Not log.Fatal: Beam routes the standard logger through slog at INFO.
		fmt.Fprintln(os.Stderr, "quality:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

func usage(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// errFailed reports that some pipeline runs failed (their rows say so).
var errFailed = errors.New("some pipeline runs failed; see stderr")

func run(ctx context.Context) error {
	var corpora []corpus
	if *extractFlag != settings.ExtractMain && *extractFlag != settings.ExtractVisible {
		return usage("--extract must be main or visible, not %q", *extractFlag)
	}
	for _, g := range inputs {
		corpora = append(corpora, corpus{glob: g, html: isHTMLCorpus(g), extract: *extractFlag})
	}
	for _, g := range htmlInputs {
		corpora = append(corpora, corpus{glob: g, html: true, extract: *extractFlag})
	}
	containmentFile := *containment
	if *all {
		corpora = append(corpora, corpus{glob: "testdata/crawl/*.parquet"})
		for _, name := range sharedCorpora {
			p := filepath.Join(sharedDir, name)
			if _, err := os.Stat(p); err != nil {
				progress("skipping %s: %v", p, err)
				continue
			}
			if isHTMLCorpus(p) {
				corpora = append(corpora, corpus{glob: p, html: true, extract: settings.ExtractVisible},
					corpus{glob: p, html: true, extract: settings.ExtractMain})
			} else {
				corpora = append(corpora, corpus{glob: p})
			}
			if name == cloughStevenson && containmentFile == "" {
				containmentFile = p
			}
		}
	}
	if len(corpora) == 0 && containmentFile == "" {
		return usage("give --input, --html, --containment or --all")
	}
	ms, err := parseModes(*modesFlag)
	if err != nil {
		return err
	}
	ts, err := parseThresholds(*thresholds)
	if err != nil {
		return err
	}
	if *shingleWords < 1 {
		return usage("--shingle-words must be at least 1")
	}
	if *shardsDir != "" {
		if len(corpora) != 1 {
			return usage("--shards writes one corpus, and %d are given", len(corpora))
		}
		c := corpora[0]
		docs, err := readCorpus(ctx, c.glob, columns(c), c.extract)
		if err != nil {
			return err
		}
		return writeShards(*shardsDir, *shardCount, docs, shingleSets(docs, *seed, *shingleWords))
	}
	if *familiesFlag != "" {
		if familyRE, err = regexp.Compile(*familiesFlag); err != nil {
			return usage("--families: %v", err)
		}
	}
	var outside []clustering
	for _, spec := range clusterSpecs {
		c, err := loadClustering(ctx, spec)
		if err != nil {
			return err
		}
		outside = append(outside, c)
	}

	var failed bool
	var clusterRows []clusterRow
	if len(corpora) > 0 {
		if len(ms) > 0 {
			fmt.Printf("## Precision and recall against the exact join (w=%d)\n\n", *shingleWords)
			fmt.Println("| corpus | mode | threshold | exact pairs | pairs found | precision | recall | pipeline s | exact join s |")
			fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|")
		}
		for _, c := range corpora {
			ok, rows, err := evaluate(ctx, c, ms, ts, outside)
			if err != nil {
				return fmt.Errorf("%s: %w", c.glob, err)
			}
			failed = failed || !ok
			clusterRows = append(clusterRows, rows...)
		}
	}
	if len(outside) > 0 {
		printClusterRows(clusterRows)
		if *familiesFlag != "" {
			printFamilyRows(clusterRows)
		}
		if *scoresOut != "" {
			if err := writeClusterRows(*scoresOut, clusterRows); err != nil {
				return err
			}
		}
	}
	if containmentFile != "" {
		labels, explicit := *labelsFlag, *labelsFlag != ""
		if !explicit {
			labels = strings.TrimSuffix(containmentFile, ".parquet") + "-labels.csv"
		}
		for _, w := range []int{10, 5} {
			if err := containmentReport(ctx, containmentFile, labels, explicit, w); err != nil {
				return fmt.Errorf("%s: %w", containmentFile, err)
			}
		}
	}
	if failed {
		return errFailed
	}
	return nil
}

func parseModes(s string) ([]mode, error) {
	if strings.TrimSpace(s) == "none" {
		return nil, nil // only --clusters are scored
	}
	var out []mode
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.IndexFunc(modes, func(m mode) bool { return m.name == name })
		if i < 0 {
			return nil, usage("unknown mode %q (modes: %s)", name, strings.Join(modeNames(), ", "))
		}
		out = append(out, modes[i])
	}
	if len(out) == 0 {
		return nil, usage("--modes is empty")
	}
	return out, nil
}

func parseThresholds(s string) ([]float64, error) {
	var out []float64
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		t, err := strconv.ParseFloat(v, 64)
		if err != nil || !(t > 0 && t <= 1) {
			return nil, usage("threshold %q not a number in (0, 1]", v)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, usage("--thresholds is empty")
	}
	return out, nil
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "quality: "+format+"\n", args...)
}

// columns are the input columns of a corpus.
func columns(c corpus) crawl.Columns {
	cols := crawl.Columns{Text: *textColumn, URL: "url", ID: "id", Date: "date"}
	if c.html {
		cols.Text, cols.HTML = "", *htmlColumn
	}
	return cols
}

// baseConfig is cmd/runner's defaults, for a corpus, but unverified: each
// mode names its verification (mode defaults keeps the runner's).
func baseConfig(c corpus) transforms.Config {
	cfg := transforms.Config{Config: settings.Default()}
	cfg.Columns, cfg.ShingleWords, cfg.Seed, cfg.Extract = columns(c), *shingleWords, *seed, c.extract
	cfg.Verify = settings.VerifyNone
	return cfg
}

// doc is one input row as the exact side sees it.
type doc struct {
	ID     uint64 // neardup's doc ID
	Name   string // the input's id column
	Source string // the column read into crawl.Row.URL (the source column for containment)
	Text   string // the text, or the visible text of the HTML
}

// readCorpus reads every row of the files glob matches, numbered as the
// pipeline numbers them.
func readCorpus(ctx context.Context, glob string, cols crawl.Columns, extract string) ([]doc, error) {
	files, err := store.Match(ctx, glob)
	if err != nil {
		return nil, err
	}
	var docs []doc
	for i, f := range files {
		splits, err := crawl.Splits(ctx, i, f, cols)
		if err != nil {
			return nil, err
		}
		for _, sp := range splits {
			err := crawl.ReadSplit(ctx, sp, cols, func(r crawl.Row) error {
				text := r.Content
				if cols.HTML != "" {
					text = rowsketch.ExtractText(text, extract)
				}
				docs = append(docs, doc{ID: crawl.DocID(i, r.Index), Name: r.ID, Source: r.URL, Text: text})
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return docs, nil
}

// shingleSets computes the full w-shingle set of every document that has
// one.
func shingleSets(docs []doc, seed uint64, w int) map[uint64][]uint64 {
	h := fingerprint.New(seed)
	sets := make(map[uint64][]uint64, len(docs))
	for _, d := range docs {
		if s := shingle.Fingerprints(nil, h, canon.Tokens(d.Text), w); len(s) > 0 {
			sets[d.ID] = s
		}
	}
	return sets
}

// records are the sets as join records, in doc ID order.
func records(sets map[uint64][]uint64) []simjoin.Record {
	recs := make([]simjoin.Record, 0, len(sets))
	for id, s := range sets {
		recs = append(recs, simjoin.Record{ID: id, Tokens: s})
	}
	slices.SortFunc(recs, func(a, b simjoin.Record) int { return cmp.Compare(a.ID, b.ID) })
	return recs
}

// evaluate prints the rows of one corpus, and returns the same-cluster
// rows of the outside clusterings. It reports false when a pipeline run
// failed (its row says so, the error goes to stderr).
func evaluate(ctx context.Context, c corpus, ms []mode, ts []float64, outside []clustering) (bool, []clusterRow, error) {
	start := time.Now()
	cols := columns(c)
	docs, err := readCorpus(ctx, c.glob, cols, c.extract)
	if err != nil {
		return false, nil, err
	}
	sets := shingleSets(docs, *seed, *shingleWords)
	recs := records(sets)
	progress("%s: %d documents, %d with shingles, read and shingled in %.1fs", c.glob, len(docs), len(recs), time.Since(start).Seconds())

	type exact struct {
		pairs   pairSet
		jaccard map[pairKey]float64
		seconds float64
	}
	exacts := make([]exact, len(ts))
	fams := plantedFamilies(familyRE, docs, sets)
	median := map[string]float64{}
	for name, ids := range fams {
		median[name] = medianResemblance(ids, sets)
	}
	var rows []clusterRow
	for i, t := range ts {
		start := time.Now()
		var truth map[uint64]uint64
		if len(ms) == 0 {
			// Only clusters are scored: the join's components, without
			// listing its pairs, which a large family makes too many.
			labels, st, err := simjoin.Components(recs, t)
			if err != nil {
				return false, nil, err
			}
			truth = labels
			progress("%s: exact join's components at %g: %d documents in components (%d candidates, %d verified) in %.2fs", c.glob, t, len(truth), st.Candidates, st.Verified, time.Since(start).Seconds())
		} else {
			pairs, st, err := simjoin.Join(recs, t)
			if err != nil {
				return false, nil, err
			}
			exacts[i] = exact{exactSet(pairs), jaccards(pairs), time.Since(start).Seconds()}
			progress("%s: exact join at %g: %d pairs (%d candidates, %d verified) in %.2fs", c.glob, t, len(pairs), st.Candidates, st.Verified, exacts[i].seconds)
			truth = components(pairs)
		}
		scored := outside
		if len(outside) > 0 {
			scored = append([]clustering{{name: exactTool, labels: truth}}, outside...)
		}
		for _, o := range scored {
			s := scoreClusters(sets, truth, o.labels)
			rows = append(rows, clusterRow{Corpus: c.name(), Tool: o.name, Threshold: t,
				TruthPairs: s.Truth, FoundPairs: s.Found, BothPairs: s.Both, Clusters: s.Clusters, Largest: s.Largest,
				Families: familyShares(fams, o.labels, median)})
		}
	}

	ok := true
	for _, m := range ms {
		for i, t := range ts {
			if links := inProcess[m.name]; links != nil {
				start := time.Now()
				found, err := links(sets, t)
				if err != nil {
					return false, nil, err
				}
				s := compare(found, exacts[i].pairs)
				fmt.Printf("| %s | %s | %g | %d | %d | %s | %s | %.1f | %.2f |\n",
					c.name(), m.name, t, s.Exact, s.Found, s.precision(), s.recall(), time.Since(start).Seconds(), exacts[i].seconds)
				continue
			}
			cfg := baseConfig(c)
			m.apply(&cfg)
			cfg.Policy = policy.Policy{Resemblance: t}
			progress("%s: running %s at %g", c.glob, m.name, t)
			res, err := runPipeline(ctx, c.glob, cfg, m.name)
			if err != nil {
				progress("%s: %s at %g: %v", c.glob, m.name, t, err)
				fmt.Printf("| %s | %s | %g | %d | failed | - | - | - | %.2f |\n", c.name(), m.name, t, len(exacts[i].pairs), exacts[i].seconds)
				ok = false
				continue
			}
			if n := universeMismatch(res.docs, sets); n > 0 {
				progress("%s: %s at %g: WARNING: %d documents have status ok in the pipeline but no shingles here, or the reverse", c.glob, m.name, t, n)
			}
			found := foundPairs(res.docs, res.pairs)
			s := compare(found, exacts[i].pairs)
			progress("%s: %s at %g: missed pairs by exact resemblance: %s", c.glob, m.name, t, missedBands(found, exacts[i].jaccard, res.pairs, res.docs))
			fmt.Printf("| %s | %s | %g | %d | %d | %s | %s | %.1f | %.2f |\n",
				c.name(), m.name, t, s.Exact, s.Found, s.precision(), s.recall(), res.wallSeconds, exacts[i].seconds)
		}
	}
	return ok, rows, nil
}

// result is a finished pipeline run's tables.
type result struct {
	wallSeconds float64
	docs        []tables.Doc
	pairs       []tables.Pair
	contained   []tables.Contained
}

// runPipeline runs neardup over input into a temporary folder and reads its
// tables back.
func runPipeline(ctx context.Context, input string, cfg transforms.Config, modeName string) (*result, error) {
	tmp, err := os.MkdirTemp("", "neardup-quality-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "out")
	flags := map[string]string{"input": input, "mode": modeName, "policy": cfg.Policy.String(),
		"shingle-words": strconv.Itoa(cfg.ShingleWords)}
	m, err := pipelines.Run(ctx, pipelines.Options{Input: input, Output: out, Config: cfg, Flags: flags})
	if err != nil {
		return nil, err
	}
	r := &result{wallSeconds: m.WallSeconds}
	if r.docs, err = tables.ReadTable[tables.Doc](ctx, out, tables.DocsTable); err != nil {
		return nil, err
	}
	if r.pairs, err = tables.ReadTable[tables.Pair](ctx, out, tables.PairsTable); err != nil {
		return nil, err
	}
	if r.contained, err = tables.ReadTable[tables.Contained](ctx, out, tables.ContainedTable); err != nil {
		return nil, err
	}
	return r, nil
}

// containmentReport prints the containment table of the Clough-Stevenson
// corpus at shingle size w.
func containmentReport(ctx context.Context, file, labelsFile string, explicit bool, w int) error {
	c := corpus{glob: file}
	cols := columns(c)
	cols.URL = "source" // read the source column where the URL would go
	docs, err := readCorpus(ctx, file, cols, "")
	if err != nil {
		return err
	}
	labels, from, err := loadLabels(labelsFile, explicit, docs)
	if err != nil {
		return err
	}
	docIDs := map[string]uint64{}
	for _, d := range docs {
		docIDs[d.Name] = d.ID
	}
	const threshold = 0.5
	cfg := baseConfig(c)
	cfg.ShingleWords = w
	cfg.Sketch = sketch.Spec{Kind: sketch.Mod, N: 25}
	cfg.Policy = policy.Policy{Containment: threshold}
	progress("%s: running mod:25 containment:%g at w=%d", file, threshold, w)
	res, err := runPipeline(ctx, file, cfg, "mod:25")
	if err != nil {
		return err
	}
	rows, err := containmentTable(containmentInput{
		Labels: labels, DocIDs: docIDs, Sets: shingleSets(docs, *seed, w),
		Docs: res.docs, Pairs: res.pairs, Contained: res.contained, Threshold: threshold,
	})
	if err != nil {
		return err
	}
	fmt.Printf("\n## Containment of answers in their source: %s (mod:25, containment:%g, w=%d; labels from %s; pipeline %.1fs)\n\n",
		file, threshold, w, from, res.wallSeconds)
	fmt.Printf("| category | answers | found contained in source | mean est. containment | mean exact containment | exact >= %g | no shingles |\n", threshold)
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Printf("| %s | %d | %d | %.3f | %.3f | %d | %d |\n", r.Category, r.Answers, r.Found, r.MeanEst, r.MeanExact, r.ExactAbove, r.NoShingles)
	}
	return nil
}

// loadLabels reads the labels CSV, or, when it does not exist and was not
// named explicitly, the source column of every document. It says which it
// used.
func loadLabels(file string, explicit bool, docs []doc) (map[string]label, string, error) {
	f, err := os.Open(file)
	if err == nil {
		defer f.Close()
		labels, err := readLabels(f)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", file, err)
		}
		return labels, filepath.Base(file), nil
	}
	if explicit || !errors.Is(err, os.ErrNotExist) {
		return nil, "", err
	}
	labels := map[string]label{}
	for _, d := range docs {
		l, ok := parseSource(d.Name, d.Source)
		if !ok {
			return nil, "", fmt.Errorf("%s absent and row %q has no task and category in its source column (%q)", file, d.Name, d.Source)
		}
		labels[d.Name] = l
	}
	return labels, "the source column", nil
}

// bloomLinks is what runner group links: every pair of documents whose
// Bloom filters (bloom.DefaultBitsPerFeature bits per shingle) estimate a
// resemblance of at least t, as rankgroup compares them.
func bloomLinks(sets map[uint64][]uint64, t float64) (pairSet, error) {
	ids := make([]uint64, 0, len(sets))
	for id := range sets {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	docs := make([]rankgroup.Doc, len(ids))
	for i, id := range ids {
		docs[i] = rankgroup.Doc{Rank: float64(i), Filter: bloom.New(sets[id], bloom.DefaultBitsPerFeature)}
	}
	links, err := rankgroup.Links(docs, policy.Policy{Resemblance: t})
	found := pairSet{}
	for _, l := range links {
		found.add(ids[l[0]], ids[l[1]])
	}
	return found, err
}
