package main

import (
	"os"
	"os/exec"
	"strings"
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

// TestLockRefusesASecondRun: a second run on the same --work folder stops
// at once, and the folder is free again when the first lets go.
func TestLockRefusesASecondRun(t *testing.T) {
	work := t.TempDir()
	unlock, err := lock(work)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock(work); err == nil {
		t.Fatal("a second run took the folder the first holds")
	}
	unlock()
	again, err := lock(work)
	if err != nil {
		t.Fatalf("the folder is not free after the first run: %v", err)
	}
	again()
}

// TestKilledForNamesTheSignal: a tool killed by SIGKILL (the out-of-memory
// killer's signal) is said to be, one that exits with a status is not.
func TestKilledForNamesTheSignal(t *testing.T) {
	err := exec.Command("sh", "-c", "kill -9 $$").Run()
	if got := killedFor(err); !strings.Contains(got, "SIGKILL") {
		t.Fatalf("killed by SIGKILL: %q", got)
	}
	err = exec.Command("sh", "-c", "exit 3").Run()
	if got := killedFor(err); got != "" {
		t.Fatalf("exit status 3: %q", got)
	}
}
