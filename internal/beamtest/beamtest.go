// Package beamtest runs a package's tests on the Prism runner with
// --beam_strict on, so a DoFn, emitter or type that is not registered fails
// the tests instead of silently falling back to reflection.
package beamtest

import (
	"flag"
	"os"
	"runtime"
	"testing"

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
	return ptest.MainRetWithDefault(m, "prism")
}
