package pipelines

import (
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"

	"github.com/neardup/neardup/internal/progress"
)

// TestRemoteProgressReading: a job's metrics as a service reports them
// become the progress line's figures. The rows read are the docs counter
// summed over the steps that count it (committed where reported, else
// attempted); a phase starts at the earliest time any step's clock saw,
// and keeps the rows read when it was first seen; other namespaces and
// metrics are not figures of progress.
func TestRemoteProgressReading(t *testing.T) {
	key := func(step, name, ns string) metrics.StepKey {
		return metrics.StepKey{Step: step, Name: name, Namespace: ns}
	}
	clock := func(step string, min, max int64) metrics.DistributionResult {
		return metrics.DistributionResult{Committed: metrics.DistributionValue{Count: 2, Sum: min + max, Min: min, Max: max}, Key: key(step, "phase2_shingle_merge_clock_ms", "neardup")}
	}
	reading := func(docs int64, clocks ...metrics.DistributionResult) *metrics.Results {
		counters := []metrics.CounterResult{
			{Committed: docs, Key: key("read1", "docs", "neardup")},
			{Attempted: 100, Key: key("read2", "docs", "neardup")}, // a runner that reports attempted values only
			{Committed: 5000, Key: key("other", "docs", "someone-else")},
			{Committed: 7000, Key: key("read1", "text_bytes", "neardup")},
		}
		return metrics.NewResults(counters, clocks, nil, nil, nil)
	}
	var r remoteProgress
	r.seen(reading(900))
	if got := r.read(); got.Rows != 1000 || got.Bytes != 7000 || len(got.Started) != 0 {
		t.Fatalf("first reading: %+v, want 1000 rows, 7000 bytes, no phase", got)
	}
	r.seen(reading(1900, clock("merge1", 1_796_600_002_000, 1_796_600_009_000), clock("merge2", 1_796_600_001_500, 1_796_600_003_000)))
	want := progress.Started{Name: "phase 2 shingle merge", At: time.UnixMilli(1_796_600_001_500), Rows: 2000}
	if got := r.read(); len(got.Started) != 1 || got.Started[0] != want {
		t.Fatalf("second reading: %+v, want %+v", got.Started, want)
	}
	// A later reading: a bundle that started earlier has reported; the
	// rows at the phase's first sight stay.
	r.seen(reading(2900, clock("merge1", 1_796_600_001_000, 1_796_600_009_000)))
	want.At = time.UnixMilli(1_796_600_001_000)
	if got := r.read(); got.Rows != 3000 || len(got.Started) != 1 || got.Started[0] != want {
		t.Fatalf("third reading: %+v, want 3000 rows and %+v", got, want)
	}
}
