package faults

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/pipelines"
)

func TestMain(m *testing.M) {
	// TestKilledRunLeavesNothingComplete re-runs this binary as a plain
	// neardup run that it can kill.
	if in := os.Getenv("NEARDUP_CHILD_INPUT"); in != "" {
		beam.Init()
		if _, err := pipelines.Run(context.Background(), pipelines.Options{Input: in, Output: os.Getenv("NEARDUP_CHILD_OUTPUT"), Config: pipelinetest.DefaultConfig()}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	pipelinetest.Main(m)
}
