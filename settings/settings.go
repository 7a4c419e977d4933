// Package settings declares every setting of a neardup run once. Each
// declaration (see Declarations) gives the flag's name, group, default and
// help, how the value is parsed into a Config, how the manifest records it,
// and whether recluster or update may change it; the runner's flags, its
// help, docs/flags.md, the manifest's settings and their reading back by
// recluster, update and query all come from that one list.
//
// Config holds what decides the tables a run writes: how the input is read
// and the algorithm's settings (features, sketch, join mode, verification,
// policy, clusters, the document to keep). Run adds the command's plumbing
// (paths, partitions, progress). Neither imports Beam: the packages that
// read a finished output rebuild a Config from its manifest.
package settings

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/chunk"
	"github.com/neardup/neardup/features/sitetemplate"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/similarity/bloom"
	"github.com/neardup/neardup/similarity/sketch"
)

// Config is what every phase needs to know of the user's choices. It
// travels inside the DoFns, so all its fields are exported and plain.
type Config struct {
	// Input: which columns hold what, how HTML becomes text, and which
	// rows are refused.
	Columns crawl.Columns
	// Extract is how HTML becomes text (--extract): ExtractVisible or
	// ExtractMain (also the default, ""). Unused for text input.
	Extract      string
	MaxDocBytes  int    // documents longer than this are rejected (0: no limit)
	SkipBadFiles bool   // an unreadable file or row group is recorded and skipped instead of failing the run
	Sweep        string // the sweep the run's documents come from (--sweep-date, YYYY-MM-DD)
	// LostMatches is how many documents of the latest sweep the lost
	// table lists per lost URL, the most resembling first (--lost-matches;
	// 0: every live document of its cluster).
	LostMatches int

	// Features: what a document is a set of.
	ShingleWords int // w, words per shingle
	// Chunks, when above 0, makes each document's features its
	// content-defined chunks of about Chunks bytes of canonical text
	// (--features=chunks:C, package chunk) instead of its w-word
	// shingles.
	Chunks int
	// Stopwords, when set, is a language code (package stopword): the
	// canonical tokens that are its stop words make no feature
	// (--stopwords, Maharjan 2016).
	Stopwords string
	Seed      uint64 // fingerprint seed
	// Templates (--template-shingles) drops from each page's sketch the
	// values that are its site's template; the zero Spec drops none.
	Templates sitetemplate.Spec

	// Similarity: the sketch, how candidate pairs are found and checked.
	Sketch sketch.Spec // MOD_m, MIN_s or MinHash
	// Mode is how candidate pairs are found: Broder's phases 2 and 3,
	// his super-shingles (SuperSize values per super-shingle for mod/min
	// sketches, Bands bands of a minhash sketch), or the exact join (each
	// document's sketch is its ppjoin+ prefix, and every candidate is
	// verified exactly).
	Mode      Mode
	SuperSize int
	Bands     int
	// Verify is what a candidate must also pass to link (see
	// Verification and SketchVerified); BloomBits the bits per feature of
	// --verify=bloom's filters (bloom.DefaultBitsPerFeature when 0).
	Verify         Verify
	BloomBits      int
	Equivalence    string // what the identical shortcut merges: IdenticalContent, Lexical or ShingleEquivalent
	MaxShingleDocs int    // shingles in more documents than this are dropped, or anchored
	// AnchorDocs, when above 0 (4 by default), keeps a shingle in more
	// than MaxShingleDocs documents as a link of each of them to the
	// AnchorDocs lowest-numbered documents of its list, at a cost linear
	// in the list, where Broder drops it (0): a family of near-copies
	// larger than the cap shares nothing but such shingles.
	AnchorDocs int

	// Clustering: which pairs link, what a cluster is, which document it
	// keeps, how the components are found.
	Policy policy.Policy
	// LinkedOnly (--pairs=linked) narrows the pairs table to the linked
	// pairs, for runs that need no recluster.
	LinkedOnly bool
	// Tables are the tables the run writes (--tables; nil: all); the
	// others are not built, and the rows of those written do not change.
	Tables   tables.Selection
	Keep     keep.Policy // which document of a cluster stands for it
	Centered bool        // --clusters=centered: every member is linked to its kept document and meets Policy against it
	// Components is how phase 4 finds the connected components:
	// ComponentsSingle or ComponentsDistributed (the launcher resolves
	// ComponentsAuto), the latter in ComponentRounds rounds.
	Components      string
	ComponentRounds int
}

// Run is a command line's settings: the Config and the run's plumbing.
type Run struct {
	Config
	Input  string // comma-separated globs
	Output string
	From   string // recluster, update, lost: the finished output to read
	URL    string // lost: the URL to look for
	// Export (runner export, --dedup-output): where the deduplicated crawl
	// goes after a run, which input rows are left out, the columns added,
	// and the sweep written.
	DedupOutput  string
	Drop         export.Drop
	DropInvalid  bool
	AddColumns   []export.Column
	ColumnPrefix string
	ExportSweep  string
	Partitions   int    // hash partitions per shuffle (0: from the input size)
	MemoryLimit  string // the Go heap's soft limit (memlimit: auto, off or a size)
	// MaxGroupBytes is the most one worker may hold of a keyed step's
	// group (--max-group-bytes).
	MaxGroupBytes int64
	Overwrite     bool
	Progress      string
	Verbose       bool

	// What some flags hold until Resolve settles them against others.
	threshold     float64 // --threshold, the shorthand of --policy
	features      string  // --features, which --shingle-words is shorthand for
	templateShare float64 // --template-share
	templatePages int     // --template-min-pages
}

// Mode is how candidate pairs are found (--mode).
type Mode string

const (
	ModePairs        Mode = "pairs"        // Broder's phases 2 and 3
	ModeSuperShingle Mode = "supershingle" // documents sharing a super-shingle
	ModeExact        Mode = "exact"        // the exact join (ppjoin+)
)

// Verify is what a candidate pair must also pass to link (--verify).
type Verify string

const (
	VerifyNone   Verify = "none"
	VerifySketch Verify = "sketch" // supershingle mode: the sketch estimate satisfies the policy
	VerifyBloom  Verify = "bloom"  // the documents' Bloom filters (Jain et al. 2005)
	VerifyExact  Verify = "exact"  // the documents' whole feature sets (ppjoin+'s verification)
	// VerifyUncertain checks exactly, as VerifyExact, only the candidates
	// whose sketch estimate is too close to a threshold to tell which side
	// it is on (clusters.Uncertain); the others link on their estimate.
	VerifyUncertain Verify = "uncertain"
	// VerifyDense settles the same candidates as VerifyUncertain on a
	// second, denser sample of each document (sketch.Dense, 512 values
	// of another permutation, kept by phase 1) instead of the whole
	// feature sets: the pairs that sample cannot tell either link on it.
	VerifyDense Verify = "dense"
	// VerifyAuto is settled by the launcher (pipelines.resolveVerify):
	// VerifyDense under a resemblance policy in --mode=pairs at every
	// size; under a containment policy, VerifyUncertain on inputs up to
	// pipelines.AutoVerifyBytes and VerifyNone above. Until then it
	// verifies nothing.
	VerifyAuto Verify = "auto"
)

// How HTML input becomes text (--extract).
const (
	ExtractVisible = "visible" // all the text a browser shows
	ExtractMain    = "main"    // the main content: navigation, headers, footers and link lists dropped
)

// Broder's three levels of equivalence, each found with one fingerprint:
// of the raw content, of the canonical token stream, or of the sketch.
const (
	IdenticalContent  = "identical"
	Lexical           = "lexical"
	ShingleEquivalent = "shingle"
)

// Equivalences lists the levels, coarsest last.
var Equivalences = []string{IdenticalContent, Lexical, ShingleEquivalent}

// EquivalenceLevel is the index of an equivalence level in Equivalences
// (0, identical, for an unknown name).
func EquivalenceLevel(name string) int {
	if i := slices.Index(Equivalences, name); i >= 0 {
		return i
	}
	return 0
}

// How phase 4 finds the connected components of the links (--components).
const (
	ComponentsAuto        = "auto"        // chosen by the launcher from the input size
	ComponentsSingle      = "single"      // one worker's union-find over every link
	ComponentsDistributed = "distributed" // large-star/small-star rounds over all workers
)

// DefaultComponentRounds is how many large-star/small-star rounds the
// distributed components run before a union-find finishes what is left:
// clusters of the bench crawls become stars within 6 to 14 rounds (see
// package components and docs/components.md).
const DefaultComponentRounds = 16

// Verification is what candidate pairs are checked on besides the
// sketch: VerifyBloom or VerifyExact (always exact in the exact join and
// under VerifyUncertain, whose candidates are checked when UncertainOnly
// says), or "" when the whole feature sets are not consulted.
func (c Config) Verification() Verify {
	switch {
	case c.Mode == ModeExact:
		return VerifyExact
	case c.Verify == VerifyBloom || c.Verify == VerifyExact:
		return c.Verify
	case c.Verify == VerifyUncertain:
		return VerifyExact
	case c.Verify == VerifyDense:
		return VerifyDense
	}
	return ""
}

// VerifiedAt reads a manifest's verify setting v (see VerifySetting):
// how the uncertain pairs were settled, VerifyUncertain or VerifyDense,
// and the policy they were chosen at; kind is "" when v is neither
// uncertain:POLICY nor dense:POLICY.
func VerifiedAt(v string) (kind Verify, p policy.Policy, err error) {
	k, pol, _ := strings.Cut(v, ":")
	if kind = Verify(k); kind != VerifyUncertain && kind != VerifyDense {
		return "", p, nil
	}
	p, err = policy.Parse(pol)
	if err != nil {
		return "", p, fmt.Errorf("verify %q: %w", v, err)
	}
	return kind, p, nil
}

// UncertainOnly reports whether only the candidates whose sketch
// estimates are uncertain are verified (--verify=uncertain or dense).
func (c Config) UncertainOnly() bool {
	return c.Mode != ModeExact && (c.Verify == VerifyUncertain || c.Verify == VerifyDense)
}

// SketchVerified reports whether a super-shingle candidate links only when
// its sketch estimate satisfies the policy (--verify=sketch).
func (c Config) SketchVerified() bool { return c.Verify == VerifySketch }

// LinksAll reports whether candidates link without any check: super-shingle
// candidates neither sketch- nor set-verified.
func (c Config) LinksAll() bool {
	return c.Mode == ModeSuperShingle && !c.SketchVerified() && c.Verification() == ""
}

// BloomBitsPerFeature is the bits per feature of --verify=bloom's filters.
func (c Config) BloomBitsPerFeature() int {
	if c.BloomBits > 0 {
		return c.BloomBits
	}
	return bloom.DefaultBitsPerFeature
}

// Features names what a document's features are: "words:W" (its w-word
// shingles) or "chunks:C" (its content-defined chunks).
func (c Config) Features() string {
	if c.Chunks > 0 {
		return "chunks:" + strconv.Itoa(c.Chunks)
	}
	return "words:" + strconv.Itoa(c.ShingleWords)
}

// SetFeatures sets the features Features names (--features, or the
// manifest's setting): words:W sets ShingleWords, chunks:C sets Chunks
// to an expected size chunk.New takes. Its errors name f.
func (c *Config) SetFeatures(f string) error {
	kind, n, ok := strings.Cut(f, ":")
	x, err := strconv.Atoi(n)
	switch {
	case !ok || err != nil || (kind != "words" && kind != "chunks"):
		return fmt.Errorf("%s: want words:W or chunks:C", f)
	case kind == "words" && x < 1:
		return fmt.Errorf("%s: at least 1 word per shingle", f)
	case kind == "words":
		c.ShingleWords, c.Chunks = x, 0
		return nil
	}
	if _, err := chunk.New(x); err != nil {
		return err
	}
	c.Chunks = x
	return nil
}

// Extraction names how a document's tokens were made, for the docs table
// and the manifest: "text" for text input, else the --extract mode.
func (c Config) Extraction() string {
	if c.Columns.HTML == "" {
		return "text"
	}
	if c.Extract == ExtractVisible {
		return ExtractVisible
	}
	return ExtractMain
}

// ModeSetting names the way pairs are found, as the manifest records it:
// pairs, exact, or super-shingles with their parameters.
func (c Config) ModeSetting() string {
	switch c.Mode {
	case ModeExact:
		return "exact"
	case ModeSuperShingle:
	default:
		return "pairs"
	}
	m := "supershingle:" + strconv.Itoa(c.SuperSize)
	if c.Sketch.Kind == sketch.MinHash {
		m = "bands:" + strconv.Itoa(c.Bands)
	}
	if c.SketchVerified() {
		m += ",verify"
	}
	return m
}

// VerifySetting is the manifest's verify setting: none, sketch, bloom:B
// (with the filters' bits per feature), exact, or uncertain:POLICY (with
// the policy whose uncertain pairs were verified).
func (c Config) VerifySetting() string {
	switch v := c.Verification(); {
	case c.UncertainOnly():
		// With the policy the uncertain pairs were chosen at, which a
		// recluster under another needs (VerifiedAt).
		return string(c.Verify) + ":" + c.Policy.String()
	case v == VerifyBloom:
		return "bloom:" + strconv.Itoa(c.BloomBitsPerFeature())
	case v != "":
		return string(v)
	case c.SketchVerified():
		return string(VerifySketch)
	}
	return string(VerifyNone)
}

// ClustersSetting names --clusters.
func (c Config) ClustersSetting() string {
	if c.Centered {
		return "centered"
	}
	return "components"
}

// PairsSetting names what the pairs table keeps: --pairs.
func (c Config) PairsSetting() string {
	if c.LinkedOnly {
		return "linked"
	}
	return "all"
}

// DefaultMaxGroupBytes is --max-group-bytes' default: a quarter of the
// 4 GB that a small cluster worker has (Dataflow's n1-standard-1 3.75 GB,
// Flink's default task manager 1.7 GB of process memory per slot, with
// the SDK harness beside it), leaving the rest to the runner, the
// decoded records and the bundle's other work.
const DefaultMaxGroupBytes = 1 << 30

// FormatSize writes a size as --max-group-bytes takes it: in GiB or MiB
// when it is a whole number of them, else in bytes.
func FormatSize(n int64) string {
	switch {
	case n > 0 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dB", n)
}
