package settings

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/sitetemplate"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/internal/memlimit"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/similarity/bloom"
	"github.com/neardup/neardup/similarity/sketch"
)

// Group is the part of the help a setting is listed in.
type Group string

const (
	GroupInput       Group = "input"
	GroupSimilarity  Group = "similarity"
	GroupClustering  Group = "clustering"
	GroupOutput      Group = "output"
	GroupIncremental Group = "incremental"
	GroupRunner      Group = "runner"
)

// Groups lists the groups in the order help shows them.
var Groups = []Group{GroupInput, GroupSimilarity, GroupClustering, GroupOutput, GroupIncremental, GroupRunner}

// Commands a setting may be given to, besides a full run.
const (
	Recluster = 1 << iota // runner recluster takes it
	Update                // runner update takes it
	Lost                  // runner lost takes it
	NotRun                // a full run does not take it (--from, --url)
	Export                // runner export takes it
)

// Setting is one declaration: everything about one setting.
type Setting struct {
	Name    string // the flag
	Group   Group
	Default string // as the flag shows it; parsed at the start of every run
	Help    string
	// Manifest is the key of the manifest's settings that records it
	// ("" when the manifest keeps it only among the flags); manifest
	// gives the recorded value. Index settings must be the same in an
	// update as in its index.
	Manifest string
	manifest func(Config) string
	Index    bool
	// Absent, when set, is the value a manifest without the key stands
	// for: an output made before the setting existed ran without it,
	// whatever today's default is.
	Absent string
	// Commands are the commands besides a full run that take the flag
	// (Recluster, Update, Lost, Export, NotRun).
	Commands int
	Bool     bool // a flag given without a value (--overwrite)
	// set parses a value of the flag into r; load, when set, parses a
	// value the manifest recorded under Manifest (set does otherwise).
	set  func(r *Run, v string) error
	load func(c *Config, v string) error
}

// Takes reports whether the command cmd (0 for a full run, or Recluster,
// Update or Lost) takes s.
func (s *Setting) Takes(cmd int) bool {
	if cmd == 0 {
		return s.Commands&NotRun == 0
	}
	return s.Commands&cmd != 0
}

// Declarations are all the settings, in the order help lists them within
// their groups. A new setting is one entry here and the field it sets.
var Declarations = []*Setting{
	// input
	{Name: "input", Group: GroupInput, Commands: Update,
		Help: "comma-separated globs of Parquet crawl files, local or on any Beam filesystem (gs://, s3://); local paths are made absolute",
		set:  func(r *Run, v string) error { r.Input = v; return nil }},
	{Name: "text-column", Group: GroupInput, Default: "text", Commands: Update,
		Help: "column holding the document text (a string column)",
		set:  func(r *Run, v string) error { r.Columns.Text = v; return nil }},
	{Name: "html-column", Group: GroupInput, Commands: Update,
		Help: "column holding raw HTML; its text (see --extract) is used instead of --text-column",
		set:  func(r *Run, v string) error { r.Columns.HTML = v; return nil }},
	{Name: "extract", Group: GroupInput, Default: ExtractMain, Commands: Update, Manifest: "extract", Index: true,
		Help:     "with --html-column, how HTML becomes text: main (the main content: navigation, page headers and footers, asides, forms, cookie banners, comment sections and link lists dropped) or visible (all the text a browser shows)",
		manifest: Config.Extraction,
		set: func(r *Run, v string) error {
			if v != ExtractMain && v != ExtractVisible {
				return fmt.Errorf("want main or visible, not %q", v)
			}
			r.Extract = v
			return nil
		},
		load: func(c *Config, v string) error {
			if v != "text" {
				c.Extract = v
			}
			return nil
		}},
	{Name: "url-column", Group: GroupInput, Default: "url", Commands: Update,
		Help: "column holding the URL; read when present (an error when named explicitly and missing); empty: none",
		set:  func(r *Run, v string) error { r.Columns.URL = v; return nil }},
	{Name: "id-column", Group: GroupInput, Default: "id", Commands: Update,
		Help: "column holding the input's own document id; optional unless named explicitly",
		set:  func(r *Run, v string) error { r.Columns.ID = v; return nil }},
	{Name: "date-column", Group: GroupInput, Default: "date", Commands: Update,
		Help: "column holding the crawl date; optional unless named explicitly",
		set:  func(r *Run, v string) error { r.Columns.Date = v; return nil }},
	{Name: "redirect-column", Group: GroupInput, Commands: Update, Manifest: "redirect_column", Index: true,
		Help:     "column holding the URL a row redirects to (null or empty: none), such as Common Crawl's fetch_redirect: a redirecting row is not sketched and joins the cluster of the page its chain of redirects ends at, in the input (Zhu et al.'s redirection-based duplicates; docs/redirects.md); needs --url-column",
		manifest: func(c Config) string { return c.Columns.Redirect },
		set:      func(r *Run, v string) error { r.Columns.Redirect = v; return nil }},
	{Name: "max-doc-bytes", Group: GroupInput, Default: "4194304", Commands: Update,
		Help: "documents (text or HTML) longer than this many bytes are rejected, with a reason in the docs table; 0: no limit",
		set: func(r *Run, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("want 0 (no limit) or more bytes, not %q", v)
			}
			r.MaxDocBytes = n
			return nil
		}},
	{Name: "on-bad-file", Group: GroupInput, Default: "fail", Commands: Update,
		Help: "a bad input file or row group (not Parquet, corrupt, a wanted column missing or of the wrong type): fail (stop, naming the file and why) or skip (go on; its rows that can be named are rejected docs rows, and the manifest lists it). A read that fails (network, timeout, object store error) is never skipped: it is retried, then fails the run naming the file",
		set: func(r *Run, v string) error {
			if v != "fail" && v != "skip" {
				return fmt.Errorf("want fail or skip, not %q", v)
			}
			r.SkipBadFiles = v == "skip"
			return nil
		}},

	// similarity
	{Name: "shingle-words", Group: GroupSimilarity, Default: "10", Commands: Update, Manifest: "shingle_words", Index: true,
		Help:     "words per shingle (w); shorthand for --features=words:W",
		manifest: func(c Config) string { return strconv.Itoa(c.ShingleWords) },
		set: func(r *Run, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("want at least 1 word per shingle, not %q", v)
			}
			r.ShingleWords, r.Chunks = n, 0
			return nil
		}},
	{Name: "features", Group: GroupSimilarity, Default: "words:10", Commands: Update, Manifest: "features", Index: true,
		Help:     "each document's features: words:W (its W-word shingles) or chunks:C (its content-defined chunks of about C bytes of canonical text, C a power of two from 64 to 65536, Jain et al. 2005; the sketch then defaults to mod:1, every chunk)",
		manifest: Config.Features,
		set: func(r *Run, v string) error {
			r.features = v
			return r.SetFeatures(v)
		}},
	{Name: "stopwords", Group: GroupSimilarity, Commands: Update, Manifest: "stopwords",
		Help:     "a language code (en, de, fr, ...): its stop words make no features (Maharjan 2016; the lists of github.com/orsinium-labs/stopwords)",
		manifest: func(c Config) string { return c.Stopwords },
		set:      func(r *Run, v string) error { r.Stopwords = v; return nil }},
	{Name: "seed", Group: GroupSimilarity, Default: strconv.FormatUint(fingerprint.DefaultSeed, 10), Commands: Update, Manifest: "seed", Index: true,
		Help:     "fingerprint seed",
		manifest: func(c Config) string { return strconv.FormatUint(c.Seed, 10) },
		set: func(r *Run, v string) error {
			n, err := strconv.ParseUint(v, 0, 64)
			if err != nil {
				return fmt.Errorf("want an unsigned 64-bit integer, not %q", v)
			}
			r.Seed = n
			return nil
		}},
	{Name: "sketch", Group: GroupSimilarity, Default: "mod:25", Commands: Update, Manifest: "sketch", Index: true,
		Help:     "mod:M keeps the fingerprints that are 0 mod M (Broder's MOD_m); min:N keeps the N smallest (MIN_s); minhash:K keeps the minima of K hash functions",
		manifest: func(c Config) string { return c.Sketch.String() },
		set: func(r *Run, v string) (err error) {
			r.Sketch, err = sketch.Parse(v)
			return err
		}},
	{Name: "mode", Group: GroupSimilarity, Default: string(ModePairs), Commands: Update, Manifest: "mode",
		Help:     "how candidate pairs are found: pairs (Broder's phases 2 and 3), supershingle (documents sharing a super-shingle, phase 3 skipped) or exact (the exact join: every pair whose resemblance over the whole feature sets reaches the threshold, by ppjoin+'s prefix filtering distributed over the workers, Xiao et al. 2008)",
		manifest: Config.ModeSetting,
		set: func(r *Run, v string) error {
			switch m := Mode(v); m {
			case ModePairs, ModeSuperShingle, ModeExact:
				r.Mode = m
				return nil
			}
			return fmt.Errorf("want pairs, supershingle or exact, not %q", v)
		},
		load: loadMode},
	{Name: "super-size", Group: GroupSimilarity, Default: "5", Commands: Update,
		Help: "--mode=supershingle with mod:M or min:N sketches: sketch values per super-shingle",
		set:  atLeast(1, func(r *Run, n int) { r.SuperSize = n })},
	{Name: "bands", Group: GroupSimilarity, Default: "0", Commands: Update,
		Help: "--mode=supershingle with a minhash:K sketch: K/B-row bands, each band's fingerprint a super-shingle (LSH)",
		set: func(r *Run, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("want 0 or more bands, not %q", v)
			}
			r.Bands = n
			return nil
		}},
	{Name: "verify", Group: GroupSimilarity, Default: string(VerifyAuto), Commands: Update, Manifest: "verify",
		Help:     "what a candidate pair must also pass to link: auto (--mode=pairs: dense under a resemblance policy, at every size; under a containment policy uncertain for inputs up to 128 MiB of Parquet, none above); none; sketch (--mode=supershingle: the sketch estimate satisfies the policy); bloom (the estimates from Bloom filters of the two whole feature sets do, Jain et al. 2005); exact (the exact figures over the whole feature sets do, ppjoin+'s verification); uncertain (as exact, for the pairs whose sketch estimate is within 2.5 standard errors of a threshold; the others link on their estimate); dense (the same pairs settled on a denser sample of each document, 512 values kept by phase 1: resemblance only); bloom, exact, uncertain and dense add their figures to the pairs table",
		manifest: Config.VerifySetting,
		set: func(r *Run, v string) error {
			switch x := Verify(v); x {
			case VerifyAuto, VerifyNone, VerifySketch, VerifyBloom, VerifyExact, VerifyUncertain, VerifyDense:
				r.Verify = x
				return nil
			}
			return fmt.Errorf("want auto, none, sketch, bloom, exact, uncertain or dense, not %q", v)
		},
		load: loadVerify},
	{Name: "bloom-bits", Group: GroupSimilarity, Default: strconv.Itoa(bloom.DefaultBitsPerFeature), Commands: Update,
		Help: "--verify=bloom: filter bits per feature, m/n (the filters use round((m/n) ln 2) hash functions), 1 to 64",
		set: func(r *Run, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 64 {
				return fmt.Errorf("want 1 to 64 bits per feature, not %q", v)
			}
			r.BloomBits = n
			return nil
		}},
	{Name: "equivalence", Group: GroupSimilarity, Default: IdenticalContent, Commands: Update, Manifest: "equivalence", Index: true,
		Help:     "what the identical-document shortcut merges: identical (same bytes), lexical (same canonical tokens) or shingle (same sketch)",
		manifest: func(c Config) string { return c.Equivalence },
		set: func(r *Run, v string) error {
			for _, e := range Equivalences {
				if v == e {
					r.Equivalence = v
					return nil
				}
			}
			return fmt.Errorf("want one of %v, not %q", Equivalences, v)
		}},
	{Name: "max-shingle-docs", Group: GroupSimilarity, Default: "1000", Commands: Update, Manifest: "max_shingle_docs", Index: true,
		Help:     "shingles found in more documents than this are dropped (at least 2)",
		manifest: func(c Config) string { return strconv.Itoa(c.MaxShingleDocs) },
		set: func(r *Run, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 2 {
				return fmt.Errorf("want at least 2, not %q", v)
			}
			r.MaxShingleDocs = n
			return nil
		}},
	{Name: "anchor-docs", Group: GroupSimilarity, Default: "4", Commands: Update, Manifest: "anchor_docs", Index: true, Absent: "0",
		Help:     "a shingle (in --mode=supershingle, a super-shingle) in more than --max-shingle-docs documents is counted between each of them and the first N of its documents (the lowest doc IDs), so that a family of near-copies larger than the cap still links, at a cost linear in its size; 0: such shingles are dropped, as Broder did (and as outputs made before the setting were)",
		manifest: func(c Config) string { return strconv.Itoa(c.AnchorDocs) },
		set:      atLeast(0, func(r *Run, n int) { r.AnchorDocs = n })},
	{Name: "template-shingles", Group: GroupSimilarity, Default: "off", Commands: Update, Manifest: "template_shingles", Index: true,
		Help:     "auto: a shingle in more than --template-share of one site's pages (the host of the URL) is that site's template and is dropped from those pages' sketches (needs URLs and a mod:M or min:N sketch); off: none",
		manifest: func(c Config) string { return c.Templates.String() },
		set: func(r *Run, v string) error {
			switch v {
			case "off":
				r.Templates = sitetemplate.Spec{}
			case "auto":
				r.Templates = sitetemplate.Spec{Share: sitetemplate.DefaultShare, MinPages: sitetemplate.DefaultMinPages}
			default:
				return fmt.Errorf("want off or auto, not %q", v)
			}
			return nil
		},
		load: loadTemplates},
	{Name: "template-share", Group: GroupSimilarity, Default: strconv.FormatFloat(sitetemplate.DefaultShare, 'g', -1, 64), Commands: Update,
		Help: "--template-shingles=auto: the share of a site's pages a template shingle is in more than",
		set: func(r *Run, v string) error {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("want a share in (0, 1), not %q", v)
			}
			r.templateShare = x
			return nil
		}},
	{Name: "template-min-pages", Group: GroupSimilarity, Default: strconv.Itoa(sitetemplate.DefaultMinPages), Commands: Update,
		Help: "--template-shingles=auto: sites with fewer pages have no template",
		set: func(r *Run, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("want a number of pages, not %q", v)
			}
			r.templatePages = n
			return nil
		}},

	// clustering
	{Name: "threshold", Group: GroupClustering, Default: "0.5", Commands: Recluster | Update,
		Help: "resemblance at or above which two documents are linked: shorthand for --policy resemblance:T",
		set: func(r *Run, v string) error {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || x <= 0 || x > 1 {
				return fmt.Errorf("want a resemblance in (0, 1], not %q", v)
			}
			r.threshold = x
			return nil
		}},
	{Name: "policy", Group: GroupClustering, Default: policy.Default.String(), Commands: Recluster | Update, Manifest: "policy",
		Help:     "which pairs link: resemblance:T, containment:T (either document roughly contained in the other), or both, comma-separated (a pair meeting either links)",
		manifest: func(c Config) string { return c.Policy.String() },
		set: func(r *Run, v string) (err error) {
			r.Policy, err = policy.Parse(v)
			return err
		}},
	{Name: "keep", Group: GroupClustering, Default: keep.Policy{}.String(), Commands: Recluster | Update, Manifest: "keep",
		Help:     "the document each cluster keeps, by a comma-separated list of rules, each breaking the ties of the one before: longest (most canonical tokens), earliest or latest (by --date-column), shortest-url, static-url (no query string or session parameter), host-suffix:S (a host ending in S, such as .uk), max:COLUMN or min:COLUMN (a numeric input column, such as a popularity score; one per list); smallest-id alone keeps Broder's representative; the last ties go to the smallest doc ID. Example: max:popularity,static-url,shortest-url",
		manifest: func(c Config) string { return c.Keep.String() },
		set: func(r *Run, v string) (err error) {
			r.Keep, err = keep.Parse(v)
			return err
		}},
	{Name: "clusters", Group: GroupClustering, Default: "components", Commands: Recluster | Update, Manifest: "clusters",
		Help:     "what a cluster is: components (Broder's transitive closure of the links) or centered (taken in keep order, each document not yet placed keeps a cluster of the documents linked to it that meet the policy against it)",
		manifest: Config.ClustersSetting,
		set: func(r *Run, v string) error {
			if v != "components" && v != "centered" {
				return fmt.Errorf("want components or centered, not %q", v)
			}
			r.Centered = v == "centered"
			return nil
		}},
	{Name: "components", Group: GroupClustering, Default: ComponentsAuto, Commands: Recluster | Update, Manifest: "components",
		Help:     "how phase 4 finds the connected components: single (one worker's union-find), distributed (large-star/small-star rounds over all workers), or auto (single below 8 GiB of input, distributed from there)",
		manifest: func(c Config) string { return c.Components },
		set: func(r *Run, v string) error {
			switch v {
			case ComponentsAuto, ComponentsSingle, ComponentsDistributed:
				r.Components = v
				return nil
			}
			return fmt.Errorf("want auto, single or distributed, not %q", v)
		}},
	{Name: "component-rounds", Group: GroupClustering, Default: strconv.Itoa(DefaultComponentRounds), Commands: Recluster | Update, Manifest: "component_rounds",
		Help:     "--components=distributed: large-star/small-star rounds before the finishing union-find of what is left",
		manifest: func(c Config) string { return strconv.Itoa(c.ComponentRounds) },
		set: func(r *Run, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("want 0 or more rounds, not %q", v)
			}
			r.ComponentRounds = n
			return nil
		}},

	// output
	{Name: "output", Group: GroupOutput, Commands: Recluster | Update | Export,
		Help: "the output folder, local or on any Beam filesystem; a rerun replaces the old output",
		set:  func(r *Run, v string) error { r.Output = v; return nil }},
	{Name: "pairs", Group: GroupOutput, Default: "all", Commands: Update, Manifest: "pairs",
		Help:     "what the pairs table keeps: all (every pair recluster and the contained table need) or linked (the linked pairs only; under a resemblance-only policy phase 3 skips pairs whose sketch sizes rule out a link; recluster refuses the output)",
		manifest: Config.PairsSetting,
		set: func(r *Run, v string) error {
			if v != "all" && v != "linked" {
				return fmt.Errorf("want all or linked, not %q", v)
			}
			r.LinkedOnly = v == "linked"
			return nil
		}},
	{Name: "tables", Group: GroupOutput, Default: "all", Commands: Recluster | Update, Manifest: "tables",
		Help:     "the tables the run writes: all, or a list of " + strings.Join(tables.Tables, ", ") + "; the others are not made, which saves their time (the rows of those written are the same). update and recluster need docs, pairs, contained, sketches, postings and urls of their --from; query and serve docs, clusters and sketches (and urls, members and largest to read a few pages a query rather than load the tables whole); report docs, clusters and pairs; export and --dedup-output docs; lost urls and lost",
		manifest: func(c Config) string { return c.Tables.String() },
		set: func(r *Run, v string) (err error) {
			r.Tables, err = tables.ParseSelection(v)
			return err
		}},
	{Name: "overwrite", Group: GroupOutput, Default: "false", Bool: true, Commands: Recluster | Update | Export,
		Help: "write into an --output folder that holds files other than a neardup output",
		set: func(r *Run, v string) (err error) {
			r.Overwrite, err = strconv.ParseBool(v)
			return err
		}},
	{Name: "dedup-output", Group: GroupOutput, Commands: Recluster | Update,
		Help: "also write the deduplicated crawl here when the run has finished, as runner export would (--drop, --drop-invalid, --add-columns; after an update, the update's sweep)",
		set:  func(r *Run, v string) error { r.DedupOutput = v; return nil }},
	{Name: "drop", Group: GroupOutput, Default: string(export.DropDuplicates), Commands: Export | Recluster | Update,
		Help: "export, --dedup-output: which input rows are left out: duplicates (every clustered document but the one its cluster keeps, identical copies included: the rows whose docs row is not is_representative), identical (only exact copies: identical_to set) or none; empty and rejected rows go by --drop-invalid; redirect rows (--redirect-column) are dropped by duplicates",
		set: func(r *Run, v string) (err error) {
			r.Drop, err = export.ParseDrop(v)
			return err
		}},
	{Name: "drop-invalid", Group: GroupOutput, Default: "false", Bool: true, Commands: Export | Recluster | Update,
		Help: "export, --dedup-output: leave out the rows whose status is empty or rejected too (kept by default)",
		set: func(r *Run, v string) (err error) {
			r.DropInvalid, err = strconv.ParseBool(v)
			return err
		}},
	{Name: "add-columns", Group: GroupOutput, Default: "none", Commands: Export | Recluster | Update,
		Help: "export, --dedup-output: columns added after the input's, from the docs table: none, all, or a list of doc_id, cluster_id, cluster_size (1 when alone; for upsampling), kept_doc_id, resemblance_to_kept",
		set: func(r *Run, v string) (err error) {
			r.AddColumns, err = export.ParseColumns(v)
			return err
		}},
	{Name: "column-prefix", Group: GroupOutput, Default: export.DefaultPrefix, Commands: Export | Recluster | Update,
		Help: "export, --dedup-output: the added columns' names begin with it; an input column of the same name is refused",
		set: func(r *Run, v string) error {
			if v == "" {
				return fmt.Errorf("want a prefix, not an empty one")
			}
			r.ColumnPrefix = v
			return nil
		}},
	{Name: "sweep", Group: GroupOutput, Commands: Export | NotRun,
		Help: "export: the sweep (a --sweep-date of the run or of an update) whose input files are written; by default the latest, after an update the new crawl's",
		set: func(r *Run, v string) error {
			if t, err := time.Parse(time.DateOnly, v); err != nil || t.Format(time.DateOnly) != v {
				return fmt.Errorf("want a date, YYYY-MM-DD, not %q", v)
			}
			r.ExportSweep = v
			return nil
		}},

	// incremental
	{Name: "from", Group: GroupIncremental, Commands: Recluster | Update | Lost | Export | NotRun,
		Help: "recluster, update, lost, export: the finished output to read (update: the index the new input is deduplicated against)",
		set:  func(r *Run, v string) error { r.From = v; return nil }},
	{Name: "sweep-date", Group: GroupIncremental, Default: "today", Commands: Update, Manifest: "sweep_date",
		Help:     "the sweep (crawl) the input's documents come from, YYYY-MM-DD (today: the date in UTC); an update with the index's latest sweep date adds to that sweep, a later one starts a new sweep",
		manifest: func(c Config) string { return c.Sweep },
		set: func(r *Run, v string) error {
			if v == "today" {
				v = time.Now().UTC().Format(time.DateOnly)
			}
			if t, err := time.Parse(time.DateOnly, v); err != nil || t.Format(time.DateOnly) != v {
				return fmt.Errorf("want a date, YYYY-MM-DD, not %q", v)
			}
			r.Sweep = v
			return nil
		}},
	{Name: "lost-matches", Group: GroupIncremental, Default: "10", Commands: Recluster | Update, Manifest: "lost_matches",
		Help:     "the lost table lists, per lost URL, this many documents of the latest sweep in its cluster, the most resembling first (ties: the smaller doc ID); 0: all of them (a cluster of many copies across sweeps then makes lost times live rows)",
		manifest: func(c Config) string { return strconv.Itoa(c.LostMatches) },
		set:      atLeast(0, func(r *Run, n int) { r.LostMatches = n })},
	{Name: "url", Group: GroupIncremental, Commands: Lost | NotRun,
		Help: "lost: the URL to look for",
		set:  func(r *Run, v string) error { r.URL = v; return nil }},

	// runner
	{Name: "partitions", Group: GroupRunner, Default: "0", Commands: Update,
		Help: "hash partitions per shuffle; 0: the square root of the input size in 2 MiB units, at least 4, and at least twice the bundles the cluster runs at once when the runner's flags say (Dataflow: --max_num_workers, else --num_workers, times the vCPUs of --worker_machine_type; otherwise --parallelism) (in an update, a multiple of the index's)",
		set:  atLeast(0, func(r *Run, n int) { r.Partitions = n })},
	{Name: "max-group-bytes", Group: GroupRunner, Default: FormatSize(DefaultMaxGroupBytes), Commands: Update,
		Help: "the most one worker may hold of a keyed step's group, a size such as 1GiB: --partitions=0 takes at least enough partitions to keep the estimated largest group (0.5 byte per byte of input text over the partitions) within it, and a run or update whose estimate passes it is refused before it starts, saying what to set (a recluster and an export keep the run's partitions)",
		set: func(r *Run, v string) error {
			n, err := memlimit.ParseSize(v)
			if err != nil {
				return fmt.Errorf("want a size such as 1GiB, not %q", v)
			}
			r.MaxGroupBytes = n
			return nil
		}},
	{Name: "memory-limit", Group: GroupRunner, Default: memlimit.Auto, Commands: Recluster | Update | Export,
		Help: "the Go heap's soft limit, set at start: auto (at most 80% of the memory the machine, or its cgroup, has free; on the embedded runner it follows the live heap, a quarter above it, never under 400 MiB + 0.45 byte per byte of input text), off, or a size such as 6GiB; GOMEMLIMIT, when set, wins. It covers the embedded runner's workers, which run in this process; a cluster runner's worker processes take auto from their own machine. The run may still take more when its live data needs it; the manifest records the limit",
		set: func(r *Run, v string) error {
			if err := memlimit.ParseValue(v); err != nil {
				return err
			}
			r.MemoryLimit = v
			return nil
		}},
	{Name: "progress", Group: GroupRunner, Default: progress.Auto, Commands: Recluster | Update,
		Help: "progress on stderr while the job runs (read from the job's service where the workers run elsewhere): auto (a status line rewritten in place on a terminal, one line per phase otherwise), always (the status line, every 5 s, even when stderr is not a terminal), never",
		set: func(r *Run, v string) error {
			if _, err := progress.ParseMode(v, nil); err != nil {
				return err
			}
			r.Progress = v
			return nil
		}},
	{Name: "verbose", Group: GroupRunner, Default: "false", Bool: true, Commands: Recluster | Update | Export,
		Help: "Beam's and the Prism runner's own log on stderr; without it the log goes to a file in the temporary folder, kept and named when the run fails",
		set: func(r *Run, v string) (err error) {
			r.Verbose, err = strconv.ParseBool(v)
			return err
		}},
}

// atLeast is the set of an integer setting of min or more.
func atLeast(min int, to func(r *Run, n int)) func(r *Run, v string) error {
	want := fmt.Sprintf("at least %d", min)
	if min == 0 {
		want = "0 or more"
	}
	return func(r *Run, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < min {
			return fmt.Errorf("want %s, not %q", want, v)
		}
		to(r, n)
		return nil
	}
}

// loadMode reads the manifest's mode setting (see Config.ModeSetting).
func loadMode(c *Config, v string) error {
	base, verify := strings.CutSuffix(v, ",verify")
	kind, n, _ := strings.Cut(base, ":")
	x, _ := strconv.Atoi(n)
	switch kind {
	case "pairs", "exact":
		c.Mode = Mode(kind)
		return nil
	case "supershingle":
		c.Mode, c.SuperSize = ModeSuperShingle, x
	case "bands":
		c.Mode, c.Bands = ModeSuperShingle, x
	default:
		return fmt.Errorf("mode %q", v)
	}
	if verify {
		c.Verify = VerifySketch
	}
	return nil
}

// loadVerify reads the manifest's verify setting (see
// Config.VerifySetting); the sketch verification is in its mode setting.
func loadVerify(c *Config, v string) error {
	kind, bits, _ := strings.Cut(v, ":")
	if _, _, err := VerifiedAt(v); err != nil {
		return err
	}
	switch Verify(kind) {
	case VerifyBloom:
		c.Verify = VerifyBloom
		c.BloomBits, _ = strconv.Atoi(bits)
	case VerifyExact, VerifyUncertain, VerifyDense:
		if c.Mode != ModeExact {
			c.Verify = Verify(kind)
		}
	case VerifySketch, VerifyNone, "":
	default:
		return fmt.Errorf("verify %q", v)
	}
	return nil
}

// loadTemplates reads the manifest's template_shingles setting.
func loadTemplates(c *Config, v string) error {
	if v == "off" || v == "" {
		c.Templates = sitetemplate.Spec{}
		return nil
	}
	var t sitetemplate.Spec
	for _, kv := range strings.Split(v, ",") {
		k, x, _ := strings.Cut(kv, ":")
		var err error
		switch k {
		case "share":
			t.Share, err = strconv.ParseFloat(x, 64)
		case "min-pages":
			t.MinPages, err = strconv.Atoi(x)
		default:
			err = fmt.Errorf("unknown part %q", k)
		}
		if err != nil {
			return fmt.Errorf("template_shingles %q: %w", v, err)
		}
	}
	c.Templates = t
	return t.Validate()
}
