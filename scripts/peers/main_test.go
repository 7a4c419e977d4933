package main

import (
	"os"
	"os/exec"
	"testing"
)

// TestMeasureSumsTheTree: a shell whose two children each hold 200 MB at
// the same time is measured at 400 MB or more, not at one child's 200.
func TestMeasureSumsTheTree(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil && os.Getenv("CI") == "" {
		t.Skip("python3 is not on PATH")
	} else if err != nil {
		t.Fatal("python3 is not on PATH, and CI runs this test")
	}
	hold := py + ` -c "x = bytearray(200 << 20); x[::4096] = b'1' * len(x[::4096]); import time; time.sleep(1)"`
	_, peak, err := measure(exec.Command("sh", "-c", hold+" & "+hold+"; wait"))
	if err != nil {
		t.Fatal(err)
	}
	if peak < 400<<20 {
		t.Fatalf("peak RSS %d MB: the two children's 200 MB each were not summed", peak>>20)
	}
	if peak > 1<<30 {
		t.Fatalf("peak RSS %d MB for 400 MB held", peak>>20)
	}
}
