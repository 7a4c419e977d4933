package pipelines

import (
	"testing"
)

// TestDeterministicAcrossPartitions runs the sample twice with different
// partition counts: the tables must hold the same rows.
func TestDeterministicAcrossPartitions(t *testing.T) {
	cfg := defaultConfig()
	cfg.Partitions = 3
	a := run(t, "../testdata/crawl/*.parquet", cfg)
	cfg.Partitions = 8
	b := run(t, "../testdata/crawl/*.parquet", cfg)
	sameTables(t, a, b)
	if len(a.docs) == 0 || len(a.clusters) == 0 || len(a.pairs) == 0 {
		t.Error("empty tables prove nothing")
	}
}
