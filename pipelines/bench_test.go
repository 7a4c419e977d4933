package pipelines

import (
	"context"
	"testing"
)

// BenchmarkSampleCrawl runs the whole pipeline on the sample crawl on Prism
// and reports input MB/s (go test -run x -bench SampleCrawl ./pipelines).
func BenchmarkSampleCrawl(b *testing.B) {
	ctx := context.Background()
	var bytes int64
	for i := 0; i < b.N; i++ {
		m, err := Run(ctx, Options{Input: "../testdata/crawl/*.parquet", Output: b.TempDir(), Config: defaultConfig()})
		if err != nil {
			b.Fatal(err)
		}
		bytes = m.InputBytes
	}
	b.ReportMetric(float64(bytes)*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
}
