package families

import (
	"fmt"
	"os"
	"testing"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
)

// corpusGlob is the crawl the tests run over (writeCorpus), made once for
// the test binary.
var corpusGlob string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "families-")
	if err == nil {
		corpusGlob, err = writeCorpus(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := pipelinetest.MainRet(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
