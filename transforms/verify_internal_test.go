package transforms

import (
	"context"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/metrics"

	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/settings"
)

// readFeatures runs on verifySliceFn's lanes, goroutines of its own, and
// a Beam counter's first Inc in a bundle writes a map of the bundle's
// that is not safe for concurrent use: two lanes reading at once ended a
// golden run with "fatal error: concurrent map writes". So it counts the
// documents it reread into its caller's total, and the bundle's
// goroutine adds that to the counter; it touches no metric itself. The
// reads of its files are counted on the lane's context (lanes.do's),
// which holds them until the bundle's goroutine adds them.
func TestReadFeaturesTouchesNoMetric(t *testing.T) {
	bundle := metrics.SetPTransformID(metrics.SetBundleID(context.Background(), "bundle"), "verify")
	counts := &laneCounts{}
	ctx := context.WithValue(bundle, laneCountsKey{}, counts)
	in := InputFile{Index: 0, Path: "../testdata/crawl/part-00000.parquet"}
	slice := verifySlice(crawl.DocID(0, 0))
	var docs []uint64
	for r := int64(0); r < 40; r++ {
		if d := crawl.DocID(0, r); verifySlice(d) == slice {
			docs = append(docs, d)
		}
	}
	var reread int64
	fs, err := readFeatures(ctx, []InputFile{in}, settings.Default(), slice, docs, &reread)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(docs) || reread != int64(len(docs)) {
		t.Fatalf("read %d features and counted %d rereads of %d documents", len(fs), reread, len(docs))
	}
	var touched []string
	for _, c := range metrics.ResultsExtractor(ctx).AllMetrics().Counters() {
		touched = append(touched, c.Key.Name)
	}
	if len(touched) > 0 {
		t.Fatalf("readFeatures added to the bundle's counters %v: they are not safe on a lane's goroutine", touched)
	}
	counts.flush(bundle)
	got := map[string]int64{}
	for _, c := range metrics.ResultsExtractor(bundle).AllMetrics().Counters() {
		got[c.Key.Name] = c.Committed
	}
	if got["reads_input_requests"] == 0 || got["reads_input_bytes"] == 0 {
		t.Errorf("after the lane's counts were flushed the bundle's counters are %v, want the input's reads", got)
	}
}
