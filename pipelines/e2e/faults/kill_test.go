package faults

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
)

// TestKilledRunLeavesNothingComplete kills a run in the middle, over the
// complete output of an earlier run, and checks that nothing looks
// complete afterwards and that the next run into the same folder succeeds
// without any cleaning up.
func TestKilledRunLeavesNothingComplete(t *testing.T) {
	// Three copies of the sample make the run last long enough to kill.
	in := t.TempDir()
	samples, _ := filepath.Glob("../../../testdata/crawl/*.parquet")
	for i := 0; i < 3; i++ {
		for _, s := range samples {
			copyFile(t, s, filepath.Join(in, string(rune('a'+i))+"-"+filepath.Base(s)))
		}
	}
	input := filepath.Join(in, "*.parquet")
	out := t.TempDir()
	if _, err := pipelines.Run(context.Background(), pipelines.Options{Input: input, Output: out, Config: pipelinetest.DefaultConfig()}); err != nil {
		t.Fatal(err)
	}
	success := filepath.Join(out, output.SuccessMarker)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "NEARDUP_CHILD_INPUT="+input, "NEARDUP_CHILD_OUTPUT="+out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once it has taken the folder over (the old marker is gone).
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(success); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the second run never started")
		}
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(success); err == nil {
		t.Fatal("the run finished before it could be killed; the test proves nothing")
	}

	// Rerun, with no cleaning: it succeeds and gives the clean run's tables.
	if _, err := pipelines.Run(context.Background(), pipelines.Options{Input: input, Output: out, Config: pipelinetest.DefaultConfig()}); err != nil {
		t.Fatalf("rerun after a killed run: %v", err)
	}
	if _, err := os.Stat(success); err != nil {
		t.Fatal("no _SUCCESS after the rerun")
	}
	clean := t.TempDir()
	if _, err := pipelines.Run(context.Background(), pipelines.Options{Input: input, Output: clean, Config: pipelinetest.DefaultConfig()}); err != nil {
		t.Fatal(err)
	}
	if err := tables.Diff(context.Background(), out, clean); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(out, "_temporary")); err == nil {
		t.Error("the killed run's temporary files survived the rerun")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
