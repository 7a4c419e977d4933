package quality

import (
	"context"
	"testing"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/pipelines"
)

// BenchmarkSampleCrawl runs the whole pipeline on the sample crawl on Prism
// and reports input MB/s (go test -run x -bench SampleCrawl ./pipelines/e2e/quality).
func BenchmarkSampleCrawl(b *testing.B) {
	ctx := context.Background()
	var bytes int64
	for i := 0; i < b.N; i++ {
		m, err := pipelines.Run(ctx, pipelines.Options{Input: "../../../testdata/crawl/*.parquet", Output: b.TempDir(), Config: pipelinetest.DefaultConfig()})
		if err != nil {
			b.Fatal(err)
		}
		bytes = m.InputBytes
	}
	b.ReportMetric(float64(bytes)*float64(b.N)/1e6/b.Elapsed().Seconds(), "MB/s")
}

// BenchmarkRecluster times recluster (phase 4 only, under containment:0.8)
// from a full run of the sample crawl; compare with BenchmarkSampleCrawl.
func BenchmarkRecluster(b *testing.B) {
	ctx := context.Background()
	from := b.TempDir()
	if _, err := pipelines.Run(ctx, pipelines.Options{Input: "../../../testdata/crawl/*.parquet", Output: from, Config: pipelinetest.DefaultConfig()}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := pipelines.Recluster(ctx, pipelines.ReclusterOptions{From: from, Output: b.TempDir(), Policy: policy.Policy{Containment: 0.8}}); err != nil {
			b.Fatal(err)
		}
	}
}
