package exports

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/io/export"
	"github.com/neardup/neardup/pipelines"
)

// BenchmarkExport runs the whole export in process (for CPU profiles: go
// test ./pipelines/e2e/exports -run XXX -bench Export -benchtime 1x -cpuprofile
// cpu.out) on the finished run in $NEARDUP_EXPORT_BENCH_FROM, such as
// scripts/bench-export.sh's /tmp/export-bench/out.
func BenchmarkExport(b *testing.B) {
	from := os.Getenv("NEARDUP_EXPORT_BENCH_FROM")
	if from == "" {
		b.Skip("set NEARDUP_EXPORT_BENCH_FROM to a finished run's output folder")
	}
	for i := 0; b.Loop(); i++ {
		_, err := pipelines.Export(context.Background(), pipelines.ExportOptions{From: from, Output: filepath.Join(b.TempDir(), "dedup"),
			Rule: export.Rule{Drop: export.DropDuplicates}, Overwrite: true})
		if err != nil {
			b.Fatal(err)
		}
	}
}
