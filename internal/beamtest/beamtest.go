// Package beamtest runs a package's tests on the Prism runner with
// --beam_strict on, so a DoFn, emitter or type that is not registered fails
// the tests instead of silently falling back to reflection.
package beamtest

import (
	"flag"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

// Main is TestMain for packages whose tests run pipelines.
func Main(m *testing.M) { os.Exit(MainRet(m)) }

// MainRet is Main without the exit: it runs the tests and returns their
// exit code, for a TestMain that has more to do after them.
func MainRet(m *testing.M) int {
	flag.Parse()
	*jobopts.Strict = true
	// Prism's bundle loop spins on a closed channel between a bundle's
	// last data and its response (stage.go, "case <-dataReady"), holding
	// a P until the scheduler preempts it, while the worker goroutines
	// that would send the response wait. The tests' jobs are small and
	// many, so on 2 cores they spend much of their time there; with 8 Ps
	// the six slowest packages take 178 s instead of 212 s (see
	// docs/development.md, "What the tests cost"). The runner keeps Go's
	// default: on a 1 GB crawl 8 Ps were slower (164.5 s against 123.7 s).
	// A GOMAXPROCS the caller sets is kept.
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 8))
	}
	// The tests' jobs make much short-lived garbage over a small live
	// heap: at Go's default GOGC=100 pipelines/e2e/update spends 57 CPU
	// seconds, at 400 42 (docs/development.md, "What the tests cost").
	// The soft limit keeps the package that runs a million rows from
	// growing past 2 GiB with it (5.4 GB without). A GOGC or GOMEMLIMIT
	// the caller sets is kept.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(testMemoryLimit)
	}
	if dir := ramTempDir(); dir != "" {
		defer os.RemoveAll(dir)
	}
	return ptest.MainRetWithDefault(m, "prism")
}

// ramTempDir points TMPDIR, where t.TempDir and the jobs' staging go, at a
// new folder of /dev/shm when the caller set no TMPDIR and the machine has
// one, and returns that folder. Every job writes and renames a hundred
// small files or more; on the virtual disks CI runs on, a create and
// rename costs 0.7 ms against 25 us in memory, a sixth of
// pipelines/e2e/update's time. The outputs are small (a few hundred MB at
// the most at once), and the folder goes when the tests end.
func ramTempDir() string {
	if os.Getenv("TMPDIR") != "" {
		return ""
	}
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		return ""
	}
	dir, err := os.MkdirTemp("/dev/shm", "neardup-test-")
	if err != nil {
		return ""
	}
	os.Setenv("TMPDIR", dir)
	return dir
}

// testMemoryLimit is the tests' soft memory limit (Main).
const testMemoryLimit = 2 << 30

// FailedRunOutput is a new folder for the output of a job the test
// expects to fail while it runs. When one bundle fails, Prism ends the job
// and the launcher returns, but the bundles the in-process workers had
// already begun run on (the Go SDK's loopback worker is a goroutine that
// is told to stop, not joined), and may still write into the run's
// temporary folder while the test ends: t.TempDir's removal then fails,
// "directory not empty". This folder's removal waits for them, for up to
// a minute.
func FailedRunOutput(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "failed-run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(time.Minute)
		for {
			err := os.RemoveAll(dir)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("the failed run's output is still being written a minute on: %v", err)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	return dir
}
