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
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/policy"
	"github.com/neardup/neardup/sketch"
)

// Config is what every phase needs to know. It travels inside the DoFns, so
// all its fields are exported and plain.
type Config struct {
	Columns        crawl.Columns
	ShingleWords   int           // w, words per shingle
	Sketch         sketch.Spec   // MOD_m or MIN_s
	Equivalence    string        // what the identical shortcut merges: IdenticalContent, Lexical or ShingleEquivalent
	MaxShingleDocs int           // shingles in more documents than this are dropped
	Policy         policy.Policy // which pairs link
	// SuperShingle selects Broder's super-shingle shortcut instead of
	// phases 2 and 3: documents sharing a super-shingle are candidates.
	// SuperSize values per super-shingle for mod/min sketches; Bands bands
	// of a minhash sketch. Verify keeps a candidate link only if the
	// sketch estimate also satisfies Policy.
	SuperShingle bool
	SuperSize    int
	Bands        int
	Verify       bool
	Partitions   int    // hash partitions of every shuffle
	MaxDocBytes  int    // documents longer than this are rejected (0: no limit)
	SkipBadFiles bool   // an unreadable file or row group is recorded and skipped instead of failing the run
	Seed         uint64 // fingerprint seed
	TempDir      string // where table shards are written before the launcher publishes them
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
type phaseTimer struct {
	busy  beam.Counter
	clock beam.Distribution
}

func newPhaseTimer(phase string) phaseTimer {
	return phaseTimer{beam.NewCounter(Namespace, phase+"_busy_ms"), beam.NewDistribution(Namespace, phase+"_clock_ms")}
}

// done records one element's work that began at start.
func (t phaseTimer) done(ctx context.Context, start time.Time) {
	end := time.Now()
	t.busy.Inc(ctx, end.Sub(start).Milliseconds())
	t.clock.Update(ctx, start.UnixMilli())
	t.clock.Update(ctx, end.UnixMilli())
}

// maxBatchBytes bounds one shuffled batch: large enough that per-element
// costs vanish, well under the 4 MB gRPC message limit runners impose.
const maxBatchBytes = 1 << 20

// batcher packs records into per-partition batches and emits each batch when
// it fills and at the end. It counts what it emits: every batch goes into a
// shuffle, and the manifest reports elements and bytes shuffled per stream
// (shuffled_<name>_elements, shuffled_<name>_bytes).
type batcher struct {
	bufs            [][]byte
	emit            func(int, []byte)
	elements, bytes beam.Counter
	ctx             context.Context
}

func newBatcher(ctx context.Context, name string, partitions int, emit func(int, []byte)) *batcher {
	b := &batcher{bufs: make([][]byte, partitions), ctx: ctx,
		elements: beam.NewCounter(Namespace, "shuffled_"+name+"_elements"),
		bytes:    beam.NewCounter(Namespace, "shuffled_"+name+"_bytes")}
	b.emit = func(k int, v []byte) {
		b.elements.Inc(ctx, 1)
		b.bytes.Inc(ctx, int64(len(v)))
		emit(k, v)
	}
	return b
}

// add appends a record to partition p, emitting the batch first if the
// record would overflow it.
func (b *batcher) add(p int, rec interface{ Append([]byte) []byte }) {
	before := len(b.bufs[p])
	b.bufs[p] = rec.Append(b.bufs[p])
	if len(b.bufs[p]) > maxBatchBytes && before > 0 {
		b.emit(p, b.bufs[p][:before])
		b.bufs[p] = append([]byte(nil), b.bufs[p][before:]...)
	}
}

func (b *batcher) flush() {
	for p, buf := range b.bufs {
		if len(buf) > 0 {
			b.emit(p, buf)
			b.bufs[p] = nil
		}
	}
}
