// Package transforms holds neardup's Beam composite transforms, one per
// phase of Broder et al.'s clustering: Sketch (phase 1), Identical (the
// identical-document shortcut), ShingleMerge (phase 2), PairCount (phase 3)
// and Cluster (phase 4), plus ReadSplits before them and Assemble after.
// The algorithms live in plain Go packages (canon, shingle, sketch,
// unionfind); these transforms only move their inputs and outputs.
//
// Every shuffle carries packed batches keyed by a hash partition, never one
// element per shingle or per pair: see package packed.
package transforms

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/bloom"
	"github.com/neardup/neardup/chunk"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/keep"
	"github.com/neardup/neardup/packed"
	"github.com/neardup/neardup/policy"
	"github.com/neardup/neardup/simjoin"
	"github.com/neardup/neardup/sitetemplate"
	"github.com/neardup/neardup/sketch"
)

// Config is what every phase needs to know. It travels inside the DoFns, so
// all its fields are exported and plain.
type Config struct {
	Columns      crawl.Columns
	ShingleWords int // w, words per shingle
	// Chunks, when above 0, makes each document's features its
	// content-defined chunks of about Chunks bytes of canonical text
	// (--features=chunks:C, package chunk) instead of its w-word
	// shingles.
	Chunks int
	// Stopwords, when set, is a language code (package stopword): the
	// canonical tokens that are its stop words make no feature
	// (--stopwords, Maharjan 2016).
	Stopwords      string
	Sketch         sketch.Spec   // MOD_m or MIN_s
	Equivalence    string        // what the identical shortcut merges: IdenticalContent, Lexical or ShingleEquivalent
	MaxShingleDocs int           // shingles in more documents than this are dropped
	Policy         policy.Policy // which pairs link
	Keep           keep.Policy   // which document of a cluster stands for it
	Centered       bool          // --clusters=centered: every member meets Policy against its kept document
	// SuperShingle selects Broder's super-shingle shortcut instead of
	// phases 2 and 3: documents sharing a super-shingle are candidates.
	// SuperSize values per super-shingle for mod/min sketches; Bands bands
	// of a minhash sketch. Verify keeps a candidate link only if the
	// sketch estimate also satisfies Policy.
	SuperShingle bool
	SuperSize    int
	Bands        int
	Verify       bool
	// Verification (--verify=bloom or exact; "" for none) checks every
	// candidate pair, of either mode, on the two documents' whole feature
	// sets (see Verify): their Bloom filters of BloomBits bits per feature
	// (bloom.DefaultBitsPerFeature when 0), or the sets themselves. A
	// link then needs the verified figures to satisfy Policy.
	Verification string
	BloomBits    int
	// Exact (--mode=exact) makes the join exact: each document's sketch
	// is its ppjoin+ prefix (ExactPrefix), phases 2 and 3 find the pairs
	// sharing a prefix feature, and Verification is VerifyExact.
	Exact bool
	// LinkedOnly (--pairs=linked) narrows the pairs table to the linked
	// pairs, for runs that need no recluster: phase 3 then skips pairs
	// whose sketch sizes alone rule out a link (see sizesMayLink), and the
	// contained table is written only where it stays complete.
	LinkedOnly bool
	// Components is how phase 4 finds the connected components:
	// ComponentsSingle or ComponentsDistributed (the launcher resolves
	// ComponentsAuto), the latter in ComponentRounds rounds.
	Components      string
	ComponentRounds int
	// Templates (--template-shingles) drops from each page's sketch the
	// values that are its site's template (see SiteTemplates); the zero
	// Spec drops none.
	Templates sitetemplate.Spec
	// Extract is how HTML becomes text (--extract): ExtractVisible or
	// ExtractMain (also the default, ""). Unused for text input.
	Extract string
	// FirstNewDoc, in an update, is the first doc ID of the new input:
	// documents below it are the index's, and phase 3 leaves their pairs
	// among themselves to the index's pairs table (0: a full run).
	FirstNewDoc uint64
	// Index, in an update, names the index's table shards by partition,
	// which the keyed steps read beside the new documents' records of the
	// same partition (zero: a full run).
	Index IndexTables
	// CarryPairs, in an update under the index's policy, carries over the
	// index's pairs shards whose rows all stay (see IndexPairs).
	CarryPairs   bool
	Partitions   int    // hash partitions of every shuffle
	MaxDocBytes  int    // documents longer than this are rejected (0: no limit)
	SkipBadFiles bool   // an unreadable file or row group is recorded and skipped instead of failing the run
	Seed         uint64 // fingerprint seed
	Sweep        string // the sweep the run's documents come from (--sweep-date, YYYY-MM-DD)
	// LatestSweep is the latest sweep of all the output's documents (an
	// update's index may hold earlier ones), and MultiSweep whether they
	// come from more than one, when Sweeps lists the lost URLs.
	LatestSweep string
	MultiSweep  bool
	TempDir     string // where table shards are written before the launcher publishes them
	// Lanes is how many elements of a bundle a keyed step works on at
	// once (see lanes): the cores, where the launcher runs the workers
	// itself on the embedded runner; 1 elsewhere. It never changes what
	// is written.
	Lanes int
}

// What --verify checks candidate pairs on, besides the sketch.
const (
	VerifyBloom = "bloom" // the documents' Bloom filters (Jain et al. 2005)
	VerifyExact = "exact" // the documents' whole feature sets (ppjoin+'s verification)
)

// BloomBitsPerFeature is the bits per feature of --verify=bloom's filters.
func (cfg Config) BloomBitsPerFeature() int {
	if cfg.BloomBits > 0 {
		return cfg.BloomBits
	}
	return bloom.DefaultBitsPerFeature
}

// sizesMayLink reports whether a pair of documents with these sketch sizes
// may link, so that phase 3 must count it. Only under LinkedOnly, a MOD_m
// sketch and a resemblance-only policy can it say no: the estimate
// shared/(a+b-shared) is at most min(a,b)/max(a,b), reached when the
// smaller sketch is all shared, so a pair whose sizes keep that bound under
// the threshold never links. Verified links (Verification) follow the
// whole sets, which the sketch sizes only estimate. Containment has no such bound (a small
// document may lie wholly inside a large one), nor do MIN_s and MinHash
// sketches, whose sizes do not follow the documents'.
func (cfg Config) sizesMayLink(a, b uint32) bool {
	if !cfg.LinkedOnly || cfg.Sketch.Kind != sketch.Mod || cfg.Policy.Containment > 0 || cfg.Verification != "" {
		return true
	}
	lo, hi := min(a, b), max(a, b)
	return sketch.ModResemblance(int(lo), int(lo), int(hi)) >= cfg.Policy.Resemblance
}

// prefixesMayLink reports, under Exact, whether two documents that share
// the prefix feature of postings a and b may reach the threshold (see
// simjoin.PositionMayMatch); always true otherwise.
func (cfg Config) prefixesMayLink(a, b packed.Posting) bool {
	return !cfg.Exact || simjoin.PositionMayMatch(cfg.Policy.Resemblance, int(a.Size), int(b.Size), int(a.Rank), int(b.Rank))
}

// maxShingleDocs is how many documents a shingle may be in before phase 2
// drops it as too common: none is dropped from the exact join.
func (cfg Config) maxShingleDocs() int {
	if cfg.Exact {
		return math.MaxInt
	}
	return cfg.MaxShingleDocs
}

// keepsContained reports whether the contained table is written: always,
// unless LinkedOnly leaves the pairs table without the unlinked pairs a
// resemblance-only policy's contained table is made of.
func (cfg Config) keepsContained() bool {
	return !cfg.LinkedOnly || cfg.Policy.Containment > 0
}

// How HTML input becomes text (--extract).
const (
	ExtractVisible = "visible" // all the text a browser shows
	ExtractMain    = "main"    // the main content: navigation, headers, footers and link lists dropped
)

// Features names what a document's features are: "words:W" (its w-word
// shingles) or "chunks:C" (its content-defined chunks).
func (cfg Config) Features() string {
	if cfg.Chunks > 0 {
		return "chunks:" + strconv.Itoa(cfg.Chunks)
	}
	return "words:" + strconv.Itoa(cfg.ShingleWords)
}

// SetFeatures sets the features Features names (--features, or the
// manifest's setting): words:W sets ShingleWords, chunks:C sets Chunks
// to an expected size chunk.New takes. Its errors name f.
func (cfg *Config) SetFeatures(f string) error {
	kind, n, ok := strings.Cut(f, ":")
	x, err := strconv.Atoi(n)
	switch {
	case !ok || err != nil || (kind != "words" && kind != "chunks"):
		return fmt.Errorf("%s: want words:W or chunks:C", f)
	case kind == "words" && x < 1:
		return fmt.Errorf("%s: at least 1 word per shingle", f)
	case kind == "words":
		cfg.ShingleWords, cfg.Chunks = x, 0
		return nil
	}
	if _, err := chunk.New(x); err != nil {
		return err
	}
	cfg.Chunks = x
	return nil
}

// Extraction names how a document's tokens were made, for the docs table
// and the manifest: "text" for text input, else the --extract mode.
func (cfg Config) Extraction() string {
	if cfg.Columns.HTML == "" {
		return "text"
	}
	if cfg.Extract == ExtractVisible {
		return ExtractVisible
	}
	return ExtractMain
}

// Broder's three levels of equivalence, each found with one fingerprint:
// of the raw content, of the canonical token stream, or of the sketch.
const (
	IdenticalContent  = "identical"
	Lexical           = "lexical"
	ShingleEquivalent = "shingle"
)

// Equivalences lists the levels, coarsest last.
var Equivalences = []string{IdenticalContent, Lexical, ShingleEquivalent}

// Namespace is the metrics namespace of every neardup counter.
const Namespace = "neardup"

// phaseTimer records where a phase's time goes. The runner fuses and
// overlaps phases, so the manifest reports both the time the phase's DoFns
// spent working (busy, summed over workers) and the wall-clock window from
// its first element's start to its last element's end (clock: a
// distribution of Unix milliseconds whose min and max bound the window).
// It also marks the phase started for the progress line (observability
// only: one atomic load per element once the phase has started).
type phaseTimer struct {
	busy  beam.Counter
	clock beam.Distribution
	shown *progress.Phase
}

func newPhaseTimer(phase string) phaseTimer {
	return phaseTimer{beam.NewCounter(Namespace, phase+"_busy_ms"), beam.NewDistribution(Namespace, phase+"_clock_ms"),
		progress.NewPhase(phaseLabel(phase))}
}

// phaseLabel names a phase in the progress line.
func phaseLabel(phase string) string {
	switch phase {
	case "phase1_sketch":
		return "phase 1 read/sketch"
	case "identical":
		return "identical shortcut"
	case "phase2_shingle_merge":
		return "phase 2 shingle merge"
	case "phase3_pair_count":
		return "phase 3 pair counting"
	case "supershingles":
		return "super-shingles"
	case "site_templates":
		return "site templates"
	case "phase4_cluster":
		return "phase 4 clustering"
	}
	return phase
}

// begin marks the phase started now and returns now, for elements that
// run long before their done: defer t.done(ctx, t.begin()).
func (t phaseTimer) begin() time.Time {
	now := time.Now()
	t.shown.Start(now)
	return now
}

// done records one element's work that began at start.
func (t phaseTimer) done(ctx context.Context, start time.Time) {
	t.span(ctx, start, time.Now())
}

// span records one element's work from start to end (on a lane: see
// lanes).
func (t phaseTimer) span(ctx context.Context, start, end time.Time) {
	t.shown.Start(start)
	t.busy.Inc(ctx, end.Sub(start).Milliseconds())
	t.clock.Update(ctx, start.UnixMilli())
	t.clock.Update(ctx, end.UnixMilli())
}

// maxBatchBytes bounds one shuffled batch: large enough that per-element
// costs vanish, well under the 4 MB gRPC message limit runners impose.
const maxBatchBytes = 1 << 20

// maxBuffered bounds what one batcher holds across its partitions: a
// batcher that lives for a whole bundle must not grow with the bundle. A
// full flush emits one batch per partition, so the bound grows with the
// partition count, 128 KiB per partition (at least 1 MiB): batches
// average 128 KiB or more whatever the count, so a stream of D bytes makes
// about D / 128 KiB elements, linear in the data, not D × partitions.
// Memory per batcher grows with the partitions, which grow as the square
// root of the input (pipelines.AutoPartitions): 3.6 MiB at 1M bench pages,
// about 210 MiB at 6 TB of Parquet.
func maxBuffered(partitions int) int { return max(1<<20, partitions*(128<<10)) }

// batcher packs records into per-partition batches and emits each batch when
// it fills and at the end, sealed (compressed, see packed.Seal): every batch
// goes into a shuffle, whose reader opens it with eachBatch. It counts what
// it emits, and the manifest reports elements and sealed bytes shuffled per
// stream (shuffled_<name>_elements, shuffled_<name>_bytes).
//
// The number of elements a shuffle carries is what costs (microseconds and
// a kilobyte of runner memory each), and a batcher emits at least one per
// partition it touches. A batcher per element would emit up to
// elements × partitions batches, which grows faster than the input when
// the partition count grows with it; the DoFns of the big streams keep one
// batcher per bundle instead (bind it to each element's emitter, flush in
// FinishBundle), so the count is bundles × partitions plus one per full
// batch, and maxBuffered keeps the memory bounded.
type batcher struct {
	bufs            [][]byte
	buffered, limit int
	emitFn          func(int, []byte)
	elements, bytes beam.Counter
	ctx             context.Context
}

func newBatcher(ctx context.Context, name string, partitions int, emit func(int, []byte)) *batcher {
	b := &batcher{bufs: make([][]byte, partitions), limit: maxBuffered(partitions),
		elements: beam.NewCounter(Namespace, "shuffled_"+name+"_elements"),
		bytes:    beam.NewCounter(Namespace, "shuffled_"+name+"_bytes")}
	b.bind(ctx, emit)
	return b
}

// bind makes the batcher emit through emit from now on: the emitter of the
// element (or of FinishBundle) being processed.
func (b *batcher) bind(ctx context.Context, emit func(int, []byte)) {
	b.ctx, b.emitFn = ctx, emit
}

// bundleBatcher is the batcher a DoFn keeps for its bundle in *b: made at
// the bundle's first element, bound to this element's emitter. The DoFn
// sets *b to nil in StartBundle (a retried bundle starts afresh) and
// hands it to finishBatcher in FinishBundle.
func bundleBatcher(b **batcher, ctx context.Context, name string, partitions int, emit func(int, []byte)) *batcher {
	if *b == nil {
		*b = newBatcher(ctx, name, partitions, emit)
	}
	(*b).bind(ctx, emit)
	return *b
}

// bundleOut is the batcher of a DoFn with one keyed output, kept for the
// bundle: a DoFn embeds it, takes the batcher with bundle in
// ProcessElement, and gets its StartBundle and FinishBundle from it.
type bundleOut struct{ out *batcher }

// StartBundle forgets any batcher: a retried bundle starts afresh.
func (b *bundleOut) StartBundle(ctx context.Context, emit func(int, []byte)) { b.out = nil }

// FinishBundle emits what the bundle's batcher still holds.
func (b *bundleOut) FinishBundle(ctx context.Context, emit func(int, []byte)) {
	finishBatcher(&b.out, ctx, emit)
}

// bundle is the bundle's batcher, bound to this element's emitter.
func (b *bundleOut) bundle(ctx context.Context, name string, partitions int, emit func(int, []byte)) *batcher {
	return bundleBatcher(&b.out, ctx, name, partitions, emit)
}

// finishBatcher emits what the bundle's batcher in *b still holds through
// FinishBundle's emitter, and forgets it.
func finishBatcher(b **batcher, ctx context.Context, emit func(int, []byte)) {
	if *b != nil {
		(*b).bind(ctx, emit)
		(*b).flush()
		*b = nil
	}
}

func (b *batcher) emit(k int, v []byte) {
	v = packed.Seal(nil, v)
	b.elements.Inc(b.ctx, 1)
	b.bytes.Inc(b.ctx, int64(len(v)))
	b.emitFn(k, v)
}

// add appends a record to partition p, emitting the batch first if the
// record would overflow it, and every batch if the batcher holds too much.
func (b *batcher) add(p int, rec interface{ Append([]byte) []byte }) {
	before := len(b.bufs[p])
	b.bufs[p] = rec.Append(b.bufs[p])
	b.buffered += len(b.bufs[p]) - before
	if len(b.bufs[p]) > maxBatchBytes && before > 0 {
		b.emit(p, b.bufs[p][:before])
		// emit sealed a copy, so the buffer is free again.
		b.bufs[p] = append(b.bufs[p][:0], b.bufs[p][before:]...)
		b.buffered -= before
	}
	if b.buffered > b.limit {
		b.flush()
	}
}

func (b *batcher) flush() {
	for p, buf := range b.bufs {
		if len(buf) > 0 {
			b.emit(p, buf)
			b.bufs[p] = nil // a bundle's batcher must not keep partitions × 1 MiB
		}
	}
	b.buffered = 0
}

// eachBatch calls fn with every batch of a shuffled stream, opened (the
// batcher and emitDocRows seal what they send through a shuffle, see
// packed.Seal). fn must not keep b: its buffer is reused.
func eachBatch(it func(*[]byte) bool, fn func(b []byte) error) error {
	var sealed, buf []byte
	for it(&sealed) {
		var err error
		if buf, err = packed.Open(buf[:0], sealed); err != nil {
			return err
		}
		if err := fn(buf); err != nil {
			return err
		}
	}
	return nil
}

// decodeBatches opens every batch of a shuffled stream and decodes its
// records with decode (one of packed's Append functions, or tables.Decode),
// returning them all.
func decodeBatches[T any](it func(*[]byte) bool, decode func([]T, []byte) ([]T, error)) ([]T, error) {
	var all []T
	err := eachBatch(it, func(b []byte) error {
		var err error
		all, err = decode(all, b)
		return err
	})
	return all, err
}
