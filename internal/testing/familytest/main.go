package familytest

import (
	"fmt"
	"os"
	"testing"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
)

// Glob is the crawl the tests run over (WriteCorpus), made once for the
// test binary by Main.
var Glob string

// Main is TestMain for the families' test packages: it writes the corpus,
// runs the tests as pipelinetest.Main does, and removes the corpus.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "families-")
	if err == nil {
		Glob, err = WriteCorpus(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := pipelinetest.MainRet(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
