// Command runner runs neardup: it finds near-duplicate documents in Parquet
// crawl dumps with Broder et al.'s shingling and clustering, and writes
// Parquet tables of the clusters.
//
//	go run ./cmd/runner --input 'testdata/crawl/*.parquet' --output /tmp/neardup-out
//
// With "recluster" first it redoes only the final phase of an earlier run
// under another policy, from that run's tables:
//
//	go run ./cmd/runner recluster --from /tmp/neardup-out --policy containment:0.8 --output /tmp/contained
//
// With "update" first it deduplicates a new batch of input against a
// finished output, the index, and writes what a full run over both would:
//
//	go run ./cmd/runner update --from /tmp/neardup-out --input 'new/*.parquet' --output /tmp/neardup-out-2
//
// With "lost" first it says where the content of a URL absent from the
// latest sweep lives now:
//
//	go run ./cmd/runner lost --from /tmp/neardup-out-2 --url https://example.com/gone
//
// With "query" first it answers from a finished output: a URL's cluster
// and the pages like it, or the indexed pages a given page resembles:
//
//	go run ./cmd/runner query --from /tmp/neardup-out --url https://example.com/a
//	go run ./cmd/runner query --from /tmp/neardup-out --text-file page.txt --exact
//
// With "report" first it writes one self-contained HTML page of a
// finished output: its accounting, plots of the cluster sizes and of the
// pairs' resemblance, duplicates per host and the largest clusters:
//
//	go run ./cmd/runner report --from /tmp/neardup-out --output report.html
//
// With "serve" first it serves a small web app over a finished output on
// localhost: search, clusters by size, and two pages side by side:
//
//	go run ./cmd/runner serve --from /tmp/neardup-out
//
// It runs on the embedded Prism runner unless Beam's --runner flag says
// otherwise; every Beam flag (--runner, --endpoint, --environment_type, ...)
// passes through.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/bloom"
	"github.com/neardup/neardup/fingerprint"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/keep"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/policy"
	"github.com/neardup/neardup/sitetemplate"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/stopword"
	"github.com/neardup/neardup/transforms"
)

var (
	input          = flag.String("input", "", "comma-separated globs of Parquet crawl files (local, gs://, s3://)")
	outputDir      = flag.String("output", "", "output folder for the docs, clusters and pairs tables")
	textColumn     = flag.String("text-column", "text", "column holding the document text")
	htmlColumn     = flag.String("html-column", "", "column holding raw HTML; its visible text is used instead of --text-column")
	urlColumn      = flag.String("url-column", "url", "column holding the URL (empty: none)")
	idColumn       = flag.String("id-column", "id", "column holding the input's own document id (optional)")
	dateColumn     = flag.String("date-column", "date", "column holding the crawl date (optional)")
	shingleWords   = flag.Int("shingle-words", 10, "words per shingle (w); shorthand for --features=words:W")
	featuresFlag   = flag.String("features", "", "each document's features: words:W (its W-word shingles; default words:--shingle-words) or chunks:C (its content-defined chunks of about C bytes of canonical text, C a power of two from 64 to 65536, Jain et al. 2005; the sketch then defaults to mod:1, every chunk)")
	sketchFlag     = flag.String("sketch", "mod:25", "sketch: mod:M keeps fingerprints that are 0 mod M (Broder's MOD_m); min:N keeps the N smallest (MIN_s); minhash:K keeps the minima of K hash functions")
	modeFlag       = flag.String("mode", "pairs", "how pairs are found: pairs (Broder's phases 2 and 3), supershingle (documents sharing a super-shingle, phase 3 skipped) or exact (the exact join: every pair whose resemblance over the whole feature sets reaches the threshold, by ppjoin+'s prefix filtering distributed over the workers, Xiao et al. 2008)")
	superSize      = flag.Int("super-size", 5, "supershingle mode with mod/min sketches: sketch values per super-shingle")
	bands          = flag.Int("bands", 0, "supershingle mode with minhash:K sketches: K/B-row bands, each band a super-shingle (LSH)")
	verifyFlag     = flag.String("verify", "none", "what a candidate pair's link must also pass: none; sketch (supershingle mode: the sketch estimate satisfies the policy); bloom (the estimates from Bloom filters of the two whole feature sets do, Jain et al. 2005); exact (the exact figures over the whole feature sets do, ppjoin+'s verification); bloom and exact add their figures to the pairs table")
	bloomBits      = flag.Int("bloom-bits", bloom.DefaultBitsPerFeature, "--verify=bloom: filter bits per feature (m/n; the hash count is (m/n) ln 2)")
	stopwordsFlag  = flag.String("stopwords", "", "a language code (en, de, fr, ...): its stop words make no features (Maharjan 2016; lists of github.com/orsinium-labs/stopwords)")
	equivalence    = flag.String("equivalence", "identical", "what the identical-document shortcut merges: identical (same bytes), lexical (same canonical tokens) or shingle (same sketch)")
	maxShingleDocs = flag.Int("max-shingle-docs", 1000, "drop shingles found in more documents than this")
	threshold      = flag.Float64("threshold", 0.5, "resemblance at or above which two documents are linked (shorthand for --policy resemblance:T)")
	policyFlag     = flag.String("policy", "", "which pairs link: resemblance:T, containment:T (either document contained in the other), or both comma-separated (default resemblance:--threshold)")
	pairsFlag      = flag.String("pairs", "all", "what the pairs table keeps: all (every pair recluster and the contained table need) or linked (only linked pairs; phase 3 skips pairs whose sketch sizes rule out a link under a resemblance policy; no recluster)")
	keepFlag       = flag.String("keep", "smallest-id", "the document that stands for its cluster: smallest-id, longest (most tokens), earliest or latest (--date-column), shortest-url, max:COLUMN or min:COLUMN (a numeric input column); ties go to the smallest doc ID")
	clustersFlag   = flag.String("clusters", "components", "what a cluster is: components (Broder's transitive closure of the links) or centered (every member meets the policy against its cluster's kept document; the others are split off and clustered again)")
	componentsFlag = flag.String("components", "auto", "how phase 4 finds the connected components: single (one worker's union-find), distributed (large-star/small-star rounds over all workers), or auto (single below 8 GiB of input)")
	rounds         = flag.Int("component-rounds", 16, "distributed components: large-star/small-star rounds before the finishing union-find of what is left")
	from           = flag.String("from", "", "recluster: the finished output folder to recluster; update: the finished output to take as the index")
	partitions     = flag.Int("partitions", 0, "hash partitions per shuffle (0: the square root of the input size in 2 MiB units, at least 4; in an update, a multiple of the index's)")
	seed           = flag.Uint64("seed", fingerprint.DefaultSeed, "fingerprint seed")
	maxDocBytes    = flag.Int("max-doc-bytes", 4<<20, "documents (text or HTML) longer than this many bytes are rejected, with a reason in the docs table (0: no limit)")
	onBadFile      = flag.String("on-bad-file", "fail", "an unreadable input file or row group: fail (stop, naming the file and why) or skip (go on; its rows that can be named are rejected docs rows, and the manifest lists it)")
	overwrite      = flag.Bool("overwrite", false, "write into an --output folder that holds files other than a neardup output")
	extractFlag    = flag.String("extract", "", "with --html-column, how HTML becomes text: main (the main content: navigation, page headers and footers, asides, forms and link lists dropped; the default) or visible (all the text a browser shows)")
	templatesFlag  = flag.String("template-shingles", "off", "auto: a shingle in more than --template-share of one site's pages (host of the URL) is that site's template and is dropped from those pages' sketches; off: none")
	templateShare  = flag.Float64("template-share", sitetemplate.DefaultShare, "--template-shingles=auto: the share of a site's pages a template shingle is in more than")
	templatePages  = flag.Int("template-min-pages", sitetemplate.DefaultMinPages, "--template-shingles=auto: sites with fewer pages have no template")
	sweepDate      = flag.String("sweep-date", time.Now().UTC().Format(time.DateOnly), "the sweep (crawl) the input's documents come from, YYYY-MM-DD (default: today, UTC); an update with the index's latest sweep date adds to that sweep, a later one starts a new sweep")
	urlFlag        = flag.String("url", "", "lost: the URL to look for")
	progressFlag   = flag.String("progress", progress.Auto, "progress on stderr while the job runs in this process: auto (a status line rewritten in place on a terminal, one line per phase otherwise), always (the status line even when stderr is not a terminal), never")
)

// ownFlags are neardup's flags, as opposed to Beam's.
var ownFlags = []string{"input", "output", "text-column", "html-column", "url-column", "id-column",
	"date-column", "shingle-words", "features", "stopwords", "sketch", "mode", "super-size", "bands", "verify", "bloom-bits", "equivalence",
	"max-shingle-docs", "threshold", "policy", "pairs", "keep", "clusters", "components", "component-rounds", "partitions", "seed", "max-doc-bytes", "on-bad-file", "overwrite",
	"extract", "template-shingles", "template-share", "template-min-pages", "sweep-date"}

// reclusterFlags are the flags recluster takes besides Beam's.
var reclusterFlags = map[string]bool{"from": true, "output": true, "policy": true, "threshold": true, "overwrite": true,
	"components": true, "component-rounds": true, "keep": true, "clusters": true}

func init() {
	flag.Usage = func() {
		w := flag.CommandLine.Output()
		fmt.Fprintf(w, "usage:\n  runner --input GLOBS --output DIR [flags]\n  runner recluster --from DIR --output DIR --policy POLICY\n  runner update --from DIR --input GLOBS --output DIR [flags]\n  runner lost --from DIR --url URL\n  runner query --from DIR (--url URL | --text-file F | --html-file F) [--exact] [--json] (see runner query --help)\n  runner report --from DIR --output report.html\n  runner serve --from DIR [--addr 127.0.0.1:8080]\n  runner group --input results.parquet --rank-column C --output DIR (see runner group --help)\n\nneardup flags:\n")
		for _, name := range append(ownFlags, "from", "progress") {
			f := flag.Lookup(name)
			fmt.Fprintf(w, "  --%s (default %q)\n    \t%s\n", f.Name, f.DefValue, f.Usage)
		}
		fmt.Fprintf(w, "\nBeam's flags (--runner, --endpoint, --environment_type, ...) pass through; see the README.\n")
	}
}

func main() {
	views := map[string]func(context.Context, []string) error{
		"query":  func(ctx context.Context, args []string) error { return queryMain(ctx, args, os.Stdout) },
		"report": reportMain,
		"serve":  serveMain,
		"group":  groupMain,
	}
	if view := views[arg(1)]; view != nil {
		if err := view(context.Background(), os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "neardup:", err)
			if errors.Is(err, errUsage) {
				os.Exit(2)
			}
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "lost" {
		os.Args = append(os.Args[:1], os.Args[2:]...)
		flag.Parse()
		beam.Init()
		if err := lost(context.Background(), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "neardup:", err)
			if errors.Is(err, errUsage) {
				os.Exit(2)
			}
			os.Exit(1)
		}
		return
	}
	recluster := len(os.Args) > 1 && os.Args[1] == "recluster"
	update := len(os.Args) > 1 && os.Args[1] == "update"
	if recluster || update {
		os.Args = append(os.Args[:1], os.Args[2:]...)
	}
	// Beam's worker mode re-enters main with its own flags: parse, then
	// hand over to beam.Init before anything else happens.
	flag.Parse()
	beam.Init()

	ctx := context.Background()
	var m *output.Manifest
	var err error
	if recluster {
		var opt pipelines.ReclusterOptions
		if opt, err = reclusterOptions(); err == nil {
			m, err = pipelines.Recluster(ctx, opt)
		}
	} else {
		var opt pipelines.Options
		if opt, err = options(update); err == nil {
			if update {
				m, err = pipelines.Update(ctx, pipelines.UpdateOptions{From: *from, Options: opt})
			} else {
				m, err = pipelines.Run(ctx, opt)
			}
		}
	}
	if errors.Is(err, errUsage) {
		fmt.Fprintln(os.Stderr, "neardup:", err)
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		// Not log.Fatal: Beam routes package log through its own logger,
		// which would bury the one line users need among INFO records.
		fmt.Fprintln(os.Stderr, "neardup:", err)
		os.Exit(1)
	}
	c := m.Counts
	fmt.Printf("neardup: %d documents (%d ok, %d too short, %d empty) in %d files, %.1f MB\n",
		c["docs"], c["docs_ok"], c["docs_too_short"], c["docs_empty"], len(m.Inputs), float64(m.InputBytes)/1e6)
	switch {
	case recluster:
		fmt.Printf("neardup: reclustered %s under %s: %d identical copies, %d linked pairs\n",
			m.ReclusterFrom, m.Settings["policy"], c["identical_skipped"], c["links"])
	case update:
		fmt.Printf("neardup: updated %s: %d pairs counted with new documents, %d linked in all\n",
			m.UpdatedFrom, c["pairs"], c["links"])
	default:
		fmt.Printf("neardup: %d identical groups (%d copies skipped), %d pairs counted, %d linked\n",
			c["identical_groups"], c["identical_skipped"], c["pairs"], c["links"])
	}
	fmt.Printf("neardup: %d clusters holding %d documents, largest %d\n", c["clusters"], c["clustered_docs"], c["largest_cluster"])
	fmt.Printf("neardup: accounting: %d input rows = %d docs rows = %d clustered + %d alone + %d empty or rejected\n",
		c["docs"], c["docs_written"], c["docs_in_clusters"], c["docs_alone"], c["docs_empty_or_rejected"])
	for _, b := range m.BadFiles {
		where := "whole file"
		if b.RowGroup >= 0 {
			where = fmt.Sprintf("row group %d, %d rows rejected", b.RowGroup, b.Rows)
		}
		fmt.Printf("neardup: skipped %s (%s): %s\n", b.Path, where, b.Error)
	}
	fmt.Printf("neardup: %.1fs; tables in %s\n", m.WallSeconds, *outputDir)
}

var errUsage = errors.New("usage")

// arg is the i-th command-line argument, or "".
func arg(i int) string {
	if i < len(os.Args) {
		return os.Args[i]
	}
	return ""
}

func usage(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// linkPolicy is --policy, or --threshold's resemblance policy.
func linkPolicy(set map[string]bool) (policy.Policy, error) {
	if *policyFlag == "" {
		if *threshold <= 0 || *threshold > 1 {
			return policy.Policy{}, usage("--threshold must be in (0, 1]")
		}
		return policy.Policy{Resemblance: *threshold}, nil
	}
	if set["threshold"] {
		return policy.Policy{}, usage("give --policy or --threshold, not both")
	}
	p, err := policy.Parse(*policyFlag)
	if err != nil {
		return p, usage("--policy: %v", err)
	}
	return p, nil
}

// given collects the flags the user set, and records them with neardup's
// own for the manifest.
func given() (set map[string]bool, flags map[string]string) {
	set = map[string]bool{}
	flags = map[string]string{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true; flags[f.Name] = f.Value.String() })
	return set, flags
}

func reclusterOptions() (pipelines.ReclusterOptions, error) {
	var opt pipelines.ReclusterOptions
	set, flags := given()
	for _, name := range ownFlags {
		if set[name] && !reclusterFlags[name] {
			return opt, usage("recluster does not take --%s: it reuses the sketches and pairs of --from", name)
		}
	}
	if *from == "" || *outputDir == "" {
		return opt, usage("recluster needs --from and --output")
	}
	p, err := linkPolicy(set)
	if err != nil {
		return opt, err
	}
	mode, err := progressMode()
	if err != nil {
		return opt, err
	}
	if err := checkComponents(); err != nil {
		return opt, err
	}
	kp, err := keep.Parse(*keepFlag)
	if err != nil {
		return opt, usage("--keep: %v", err)
	}
	return pipelines.ReclusterOptions{From: *from, Output: *outputDir, Policy: p, Flags: flags, Overwrite: *overwrite, Progress: mode,
		Components: *componentsFlag, ComponentRounds: *rounds, Keep: kp, Centered: *clustersFlag == "centered"}, nil
}

// checkComponents checks --components, --component-rounds and --clusters.
func checkComponents() error {
	if *clustersFlag != "components" && *clustersFlag != "centered" {
		return usage("--clusters must be components or centered, not %q", *clustersFlag)
	}
	switch *componentsFlag {
	case transforms.ComponentsAuto, transforms.ComponentsSingle, transforms.ComponentsDistributed:
	default:
		return usage("--components must be auto, single or distributed, not %q", *componentsFlag)
	}
	if *rounds < 0 {
		return usage("--component-rounds must be 0 or more")
	}
	return nil
}

// progressMode is --progress for stderr.
func progressMode() (progress.Mode, error) {
	m, err := progress.ParseMode(*progressFlag, os.Stderr)
	if err != nil {
		return m, usage("--progress %v", err)
	}
	return m, nil
}

func options(update bool) (pipelines.Options, error) {
	var opt pipelines.Options
	set, flags := given()
	if set["from"] && !update {
		return opt, usage("--from is for recluster and update: runner recluster --from DIR ... or runner update --from DIR ...")
	}
	if update && *from == "" {
		return opt, usage("update needs --from, the finished output to update")
	}
	if *input == "" || *outputDir == "" {
		return opt, usage("--input and --output are required")
	}
	spec, err := sketch.Parse(*sketchFlag)
	if err != nil {
		return opt, usage("--sketch: %v", err)
	}
	feat := transforms.Config{ShingleWords: *shingleWords} // --features, or its shorthand
	if f := *featuresFlag; f != "" {
		if err := feat.SetFeatures(f); err != nil {
			return opt, usage("--features: %v", err)
		}
	} else if *shingleWords < 1 {
		return opt, usage("--shingle-words must be at least 1")
	}
	words, chunks := feat.ShingleWords, feat.Chunks
	if chunks > 0 && !set["sketch"] {
		// A page has a few chunks (about ten of 256 bytes in 3 KB):
		// MOD_25 would keep none of most pages'. Keep them all, as
		// Jain's Bloom filters do.
		spec = sketch.Spec{Kind: sketch.Mod, N: 1}
	}
	pol, err := linkPolicy(set)
	if err != nil {
		return opt, err
	}
	var super, verify, exact bool
	var verification string
	switch *verifyFlag {
	case "none":
	case "sketch":
		if *modeFlag != "supershingle" {
			return opt, usage("--verify=sketch goes with --mode=supershingle (phase 3's pairs are their sketch estimates already)")
		}
		verify = true
	case transforms.VerifyBloom, transforms.VerifyExact:
		verification = *verifyFlag
	default:
		return opt, usage("--verify must be none, sketch, bloom or exact, not %q", *verifyFlag)
	}
	if set["bloom-bits"] && verification != transforms.VerifyBloom {
		return opt, usage("--bloom-bits goes with --verify=bloom")
	}
	if *bloomBits < 1 || *bloomBits > 64 {
		return opt, usage("--bloom-bits must be from 1 to 64")
	}
	switch *modeFlag {
	case "pairs":
		if set["super-size"] || set["bands"] {
			return opt, usage("--super-size and --bands go with --mode=supershingle")
		}
	case "exact":
		exact = true
		switch {
		case pol.Containment > 0:
			return opt, usage("--mode=exact joins on resemblance: its prefix filter has no bound for containment; use --mode=pairs --verify=exact with a containment policy")
		case set["super-size"] || set["bands"] || set["sketch"] || set["template-shingles"]:
			return opt, usage("--mode=exact takes no --sketch, --super-size, --bands or --template-shingles: its sketch is each document's ppjoin+ prefix")
		case verification == transforms.VerifyBloom:
			return opt, usage("--mode=exact verifies exactly; --verify=bloom goes with the pairs and supershingle modes")
		}
		verification = transforms.VerifyExact
		spec = sketch.Spec{Kind: sketch.Mod, N: 1} // unused: the sketch is the prefix
		if *equivalence == transforms.ShingleEquivalent {
			return opt, usage("--mode=exact cannot take --equivalence=shingle: its sketches are prefixes, and equal prefixes are not equal sets")
		}
	case "supershingle":
		super = true
		if pol.Containment > 0 {
			return opt, usage("super-shingles cannot detect containment (see the README); use --mode=pairs with a containment policy")
		}
		if spec.Kind == sketch.MinHash {
			if *bands < 1 || spec.N%*bands != 0 {
				return opt, usage("--sketch=%s in supershingle mode needs --bands=B dividing %d", spec, spec.N)
			}
		} else if set["bands"] {
			return opt, usage("--bands needs a minhash:K sketch")
		}
		if *superSize < 1 {
			return opt, usage("--super-size must be at least 1")
		}
	default:
		return opt, usage("--mode must be pairs, supershingle or exact, not %q", *modeFlag)
	}
	if pol.Containment > 0 && spec.Kind != sketch.Mod && verification == "" {
		return opt, usage("a containment policy needs a mod:M sketch (or --verify=bloom or exact): %s cannot estimate containment", spec)
	}
	if *stopwordsFlag != "" {
		if err := stopword.Check(*stopwordsFlag); err != nil {
			return opt, usage("--stopwords: %v", err)
		}
	}
	if err := checkComponents(); err != nil {
		return opt, err
	}
	kp, err := keep.Parse(*keepFlag)
	if err != nil {
		return opt, usage("--keep: %v", err)
	}
	if *pairsFlag != "all" && *pairsFlag != "linked" {
		return opt, usage("--pairs must be all or linked, not %q", *pairsFlag)
	}
	if *maxShingleDocs < 2 {
		return opt, usage("--max-shingle-docs must be at least 2")
	}
	if !slices.Contains(transforms.Equivalences, *equivalence) {
		return opt, usage("--equivalence must be one of %v, not %q", transforms.Equivalences, *equivalence)
	}
	if *onBadFile != "fail" && *onBadFile != "skip" {
		return opt, usage("--on-bad-file must be fail or skip, not %q", *onBadFile)
	}
	if *maxDocBytes < 0 {
		return opt, usage("--max-doc-bytes must be 0 (no limit) or more")
	}
	if t, err := time.Parse(time.DateOnly, *sweepDate); err != nil || t.Format(time.DateOnly) != *sweepDate {
		return opt, usage("--sweep-date must be a date, YYYY-MM-DD, not %q", *sweepDate)
	}
	extract, err := extractMode(set)
	if err != nil {
		return opt, err
	}
	templates, err := templateSpec(set, spec)
	if err != nil {
		return opt, err
	}
	mode, err := progressMode()
	if err != nil {
		return opt, err
	}
	// The manifest records every neardup flag, and Beam's only where set.
	for _, name := range ownFlags {
		flags[name] = flag.Lookup(name).Value.String()
	}
	opt = pipelines.Options{
		Input:     *input,
		Output:    *outputDir,
		Flags:     flags,
		Overwrite: *overwrite,
		Progress:  mode,
		Config: transforms.Config{
			Columns: crawl.Columns{
				Text: *textColumn, HTML: *htmlColumn, URL: *urlColumn, ID: *idColumn, Date: *dateColumn,
				URLRequired: set["url-column"], IDRequired: set["id-column"], DateRequired: set["date-column"],
				Score: kp.Column,
			},
			ShingleWords:    words,
			Chunks:          chunks,
			Sketch:          spec,
			Equivalence:     *equivalence,
			MaxShingleDocs:  *maxShingleDocs,
			Policy:          pol,
			Keep:            kp,
			Centered:        *clustersFlag == "centered",
			SuperShingle:    super,
			SuperSize:       *superSize,
			Bands:           *bands,
			Verify:          verify,
			Verification:    verification,
			BloomBits:       *bloomBits,
			Exact:           exact,
			Stopwords:       *stopwordsFlag,
			LinkedOnly:      *pairsFlag == "linked",
			Components:      *componentsFlag,
			ComponentRounds: *rounds,
			MaxDocBytes:     *maxDocBytes,
			SkipBadFiles:    *onBadFile == "skip",
			Partitions:      *partitions,
			Seed:            *seed,
			Extract:         extract,
			Templates:       templates,
			Sweep:           *sweepDate,
		},
	}
	return opt, nil
}

// extractMode is --extract: main by default for HTML input, and an error
// for text input, which has no markup to extract from.
func extractMode(set map[string]bool) (string, error) {
	if *htmlColumn == "" {
		if set["extract"] {
			return "", usage("--extract needs --html-column: text input is used as it is")
		}
		return "", nil
	}
	switch *extractFlag {
	case "", transforms.ExtractMain:
		return transforms.ExtractMain, nil
	case transforms.ExtractVisible:
		return transforms.ExtractVisible, nil
	}
	return "", usage("--extract must be main or visible, not %q", *extractFlag)
}

// templateSpec is --template-shingles with its share and minimum site size.
func templateSpec(set map[string]bool, spec sketch.Spec) (sitetemplate.Spec, error) {
	switch *templatesFlag {
	case "off":
		if set["template-share"] || set["template-min-pages"] {
			return sitetemplate.Spec{}, usage("--template-share and --template-min-pages go with --template-shingles=auto")
		}
		return sitetemplate.Spec{}, nil
	case "auto":
	default:
		return sitetemplate.Spec{}, usage("--template-shingles must be off or auto, not %q", *templatesFlag)
	}
	if *urlColumn == "" {
		return sitetemplate.Spec{}, usage("--template-shingles=auto needs the pages' URLs: --url-column is empty")
	}
	if spec.Kind == sketch.MinHash {
		// A min-hash position whose minimum is a template shingle would
		// need the minimum of the rest, which only phase 1 could find.
		return sitetemplate.Spec{}, usage("--template-shingles=auto needs a mod:M or min:N sketch, not %s", spec)
	}
	t := sitetemplate.Spec{Share: *templateShare, MinPages: *templatePages}
	if err := t.Validate(); err != nil {
		return t, usage("--template-shingles: %v", err)
	}
	return t, nil
}

// lost prints where the content of --url, absent from the latest sweep of
// --from, lives now.
func lost(ctx context.Context, w io.Writer) error {
	if *from == "" || *urlFlag == "" {
		return usage("lost needs --from (a finished output) and --url")
	}
	rows, seen, err := pipelines.Lost(ctx, *from, *urlFlag)
	if err != nil {
		return err
	}
	if seen == nil {
		return fmt.Errorf("%s was never seen in %s", *urlFlag, *from)
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "neardup: %s is not lost: seen in sweeps %s to %s, last as doc %d\n", seen.URL, seen.FirstSweep, seen.LastSweep, seen.LastDocID)
		return nil
	}
	r := rows[0]
	fmt.Fprintf(w, "neardup: %s was last seen in sweep %s (doc %d) and is absent from the latest\n", r.URL, r.LastSweep, r.DocID)
	if r.FoundDocID == nil {
		if r.ClusterID == nil {
			fmt.Fprintf(w, "neardup: its content is in no cluster: not found\n")
		} else {
			fmt.Fprintf(w, "neardup: its cluster %d has no document in the latest sweep: not found\n", *r.ClusterID)
		}
		return nil
	}
	for _, r := range rows {
		fmt.Fprintf(w, "neardup: found at %s (doc %d), resemblance %.3f\n", *r.FoundURL, *r.FoundDocID, *r.Resemblance)
	}
	return nil
}
