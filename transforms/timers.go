package transforms

import (
	"context"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/neardup/neardup/internal/progress"
)

// Namespace is the metrics namespace of every neardup counter.
const Namespace = "neardup"

// The metrics a launcher follows a remote job's progress by, where the
// workers' own progress counters are out of its reach.
const (
	DocsCounter      = "docs"       // input rows read
	TextBytesCounter = "text_bytes" // the bytes of their document text (or HTML)
	ClockSuffix      = "_clock_ms"  // PHASE_clock_ms: its elements' start and end times, Unix ms
)

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
	return phaseTimer{beam.NewCounter(Namespace, phase+"_busy_ms"), beam.NewDistribution(Namespace, phase+ClockSuffix),
		progress.NewPhase(PhaseLabel(phase))}
}

// PhaseLabel names a phase ("phase2_shingle_merge", as its metrics are
// named: PHASE_busy_ms, PHASE_clock_ms) in the progress line ("phase 2
// shingle merge").
func PhaseLabel(phase string) string {
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
