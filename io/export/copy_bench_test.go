package export

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// BenchmarkCopy copies every file matching $NEARDUP_EXPORT_BENCH_INPUT
// (such as '/tmp/export-bench/in/*.parquet'), keeping a fixed 35% of the
// rows, one file after another: Copy alone, without the pipeline.
func BenchmarkCopy(b *testing.B) {
	glob := os.Getenv("NEARDUP_EXPORT_BENCH_INPUT")
	if glob == "" {
		b.Skip("set NEARDUP_EXPORT_BENCH_INPUT to a glob of Parquet files")
	}
	files, _ := filepath.Glob(glob)
	marks := map[string][]Code{}
	var bytes int64
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			b.Fatal(err)
		}
		st, _ := fh.Stat()
		pf, err := parquet.OpenFile(fh, st.Size())
		if err != nil {
			b.Fatal(err)
		}
		m := make([]Code, pf.NumRows())
		for i := range m {
			m[i] = DroppedNear
			if uint32(i)*2654435761%100 < 35 {
				m[i] = Kept
			}
		}
		marks[f] = m
		bytes += st.Size()
		fh.Close()
	}
	b.SetBytes(bytes)
	dir := b.TempDir()
	for b.Loop() {
		for _, f := range files {
			if _, err := Copy(context.Background(), f, filepath.Join(dir, filepath.Base(f)), 0, marks[f], Added{}, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	var out int64
	for _, f := range files {
		st, err := os.Stat(filepath.Join(dir, filepath.Base(f)))
		if err != nil {
			b.Fatal(err)
		}
		out += st.Size()
	}
	b.ReportMetric(float64(out)/1e6, "outMB")
}
