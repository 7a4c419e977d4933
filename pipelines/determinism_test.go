package pipelines

import (
	"cmp"
	"reflect"
	"slices"
	"testing"

	"github.com/neardup/neardup/io/tables"
)

// TestDeterministicAcrossPartitions runs the sample twice with different
// partition counts: the tables must hold the same rows.
func TestDeterministicAcrossPartitions(t *testing.T) {
	cfg := defaultConfig()
	cfg.Partitions = 3
	a := run(t, "../testdata/crawl/*.parquet", cfg)
	cfg.Partitions = 8
	b := run(t, "../testdata/crawl/*.parquet", cfg)
	for _, r := range []*result{a, b} {
		slices.SortFunc(r.docs, func(x, y tables.Doc) int { return cmp.Compare(x.DocID, y.DocID) })
		slices.SortFunc(r.clusters, func(x, y tables.Cluster) int { return cmp.Compare(x.ClusterID, y.ClusterID) })
		slices.SortFunc(r.pairs, func(x, y tables.Pair) int {
			return cmp.Or(cmp.Compare(x.DocA, y.DocA), cmp.Compare(x.DocB, y.DocB))
		})
	}
	if !reflect.DeepEqual(a.docs, b.docs) {
		t.Error("docs differ between 3 and 8 partitions")
	}
	if !reflect.DeepEqual(a.pairs, b.pairs) {
		t.Errorf("pairs differ between 3 and 8 partitions (%d vs %d rows)", len(a.pairs), len(b.pairs))
	}
	// Mean resemblance sums floats in an order that may differ; compare
	// the rest exactly and the means to rounding.
	if len(a.clusters) != len(b.clusters) {
		t.Fatalf("%d clusters vs %d", len(a.clusters), len(b.clusters))
	}
	for i := range a.clusters {
		x, y := a.clusters[i], b.clusters[i]
		if x.MeanResemblance != nil && y.MeanResemblance != nil && *x.MeanResemblance-*y.MeanResemblance < 1e-12 && *y.MeanResemblance-*x.MeanResemblance < 1e-12 {
			x.MeanResemblance = y.MeanResemblance
		}
		if !reflect.DeepEqual(x, y) {
			t.Errorf("cluster %d differs: %+v vs %+v", x.ClusterID, x, y)
		}
	}
	if len(a.docs) == 0 || len(a.clusters) == 0 || len(a.pairs) == 0 {
		t.Error("empty tables prove nothing")
	}
}
