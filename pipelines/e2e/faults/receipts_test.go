package faults

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/tables"
)

// TestEmptyPartitionsHaveReceipts: with far more partitions than rows,
// most partitions of every keyed table hold no rows; their writers still
// leave receipts (transforms' everyPartition), so the run proves its
// tables and publishes the same rows as with 4 partitions.
func TestEmptyPartitionsHaveReceipts(t *testing.T) {
	input := "../../../testdata/crawl/part-00000.parquet"
	cfg := pipelinetest.DefaultConfig()
	cfg.Partitions = 4
	few := pipelinetest.Run(t, input, cfg)
	cfg.Partitions = 1024
	many := pipelinetest.Run(t, input, cfg)
	if err := tables.Diff(context.Background(), few.Dir, many.Dir); err != nil {
		t.Error(err)
	}
	shards, _ := filepath.Glob(filepath.Join(many.Dir, tables.URLsTable, "*.parquet"))
	if len(shards) >= 1024 || len(shards) == 0 {
		t.Errorf("%d urls shards for 750 rows in 1024 partitions: want some partitions empty", len(shards))
	}
}
