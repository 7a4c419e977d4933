package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/faultstore"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/objstore"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
)

// middleOfText is a byte in the middle of row group rg's text column chunk,
// which faultstore's readers fetch in a request of its own, apart from the
// footer.
func middleOfText(t *testing.T, path string, rg int) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(strings.NewReader(string(b)), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata().RowGroups[rg].Columns[0].MetaData
	mid := md.DataPageOffset + md.TotalCompressedSize/2
	if mid >= int64(len(b))-faultstore.Options.TailSize {
		t.Fatalf("%s: row group %d's text is in the footer's request", path, rg)
	}
	return mid
}

// TestTransientReadFaults: under --on-bad-file=skip, a ranged read of an
// input that is cut off is retried, and is not a bad file: when the store
// heals the run reads every row; when it does not, the run fails naming
// the file, rather than rejecting good rows. A corrupt row group, read
// through the same store, is still recorded and skipped.
func TestTransientReadFaults(t *testing.T) {
	was := objstore.RetryDelays
	objstore.RetryDelays = []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond}
	t.Cleanup(func() { objstore.RetryDelays = was; faultstore.Clear() })

	dir := t.TempDir()
	pipelinetest.WritePages(t, dir, "a-good.parquet", 40, 10, func(i int) string { return pipelinetest.Words(i, 60) })
	flaky := pipelinetest.WritePages(t, dir, "b-flaky.parquet", 60, 20, func(i int) string { return pipelinetest.Words(i+300, 120) })
	corrupt := pipelinetest.WritePages(t, dir, "c-corrupt.parquet", 30, 10, func(i int) string { return pipelinetest.Words(i+200, 60) })
	corruptRowGroup(t, corrupt, 1)
	input := faultstore.Name(filepath.Join(dir, "*.parquet"))
	mid := middleOfText(t, flaky, 1)
	cfg := pipelinetest.DefaultConfig()
	cfg.SkipBadFiles = true

	t.Run("heals", func(t *testing.T) {
		faultstore.Clear()
		faultstore.Inject(faultstore.Fault{Path: flaky, From: mid, To: mid + 1, Kind: faultstore.Cut, Times: 2})
		r := pipelinetest.Run(t, input, cfg)
		if st := faultstore.StatsOf(flaky); st.Failed != 2 {
			t.Errorf("%d reads of the flaky file failed (of %d), want the fault's 2", st.Failed, st.Requests)
		}
		pipelinetest.CheckInvariants(t, r, 130)
		rejected := 0
		for _, d := range r.Docs {
			switch {
			case d.SourceFile == faultstore.Name(corrupt) && d.SourceRow >= 10 && d.SourceRow < 20:
				if d.Status != tables.StatusRejected {
					t.Errorf("row %d of the corrupt row group: status %q, want rejected", d.SourceRow, d.Status)
				}
				rejected++
			case d.Status != tables.StatusOK:
				reason := ""
				if d.Reason != nil {
					reason = *d.Reason
				}
				t.Errorf("%s row %d: status %q (%s), want ok", d.SourceFile, d.SourceRow, d.Status, reason)
			}
		}
		if rejected != 10 {
			t.Errorf("%d rows of the corrupt row group in docs, want 10", rejected)
		}
		var listed []string
		for _, bf := range r.Manifest.BadFiles {
			listed = append(listed, fmt.Sprintf("%s#%d", filepath.Base(bf.Path), bf.RowGroup))
		}
		if strings.Join(listed, " ") != "c-corrupt.parquet#1" {
			t.Errorf("manifest lists bad files %v, want only c-corrupt.parquet's row group 1", listed)
		}
	})

	t.Run("never heals", func(t *testing.T) {
		faultstore.Clear()
		faultstore.Inject(faultstore.Fault{Path: flaky, From: mid, To: mid + 1, Kind: faultstore.Cut, Times: faultstore.Always})
		out := beamtest.FailedRunOutput(t)
		_, err := pipelines.Run(context.Background(), pipelines.Options{Input: input, Output: out, Config: cfg})
		if err == nil {
			t.Fatal("a run whose input never reads succeeded")
		}
		t.Log(err)
		if !strings.Contains(err.Error(), faultstore.Name(flaky)) || !strings.Contains(err.Error(), "row group 1") {
			t.Errorf("the run failed with %v; want an error naming %s and its row group", err, faultstore.Name(flaky))
		}
		if _, err := os.Stat(filepath.Join(out, output.SuccessMarker)); err == nil {
			t.Error("a failed run left a _SUCCESS marker")
		}
	})
}
