// Package beamtest runs a package's tests on the Prism runner with
// --beam_strict on, so a DoFn, emitter or type that is not registered fails
// the tests instead of silently falling back to reflection.
package beamtest

import (
	"flag"
	"os"
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
	return ptest.MainRetWithDefault(m, "prism")
}
