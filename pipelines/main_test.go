package pipelines

import (
	"context"
	"testing"

	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/transforms"
)

// The end-to-end tests are in pipelines/e2e/..., with what they share in
// internal/testing/pipelinetest. Here are the tests that need the
// package's insides (its job runner, its sizing and verification rules),
// which import cycles keep apart from pipelinetest; these few helpers are
// the copies they need.

func TestMain(m *testing.M) { beamtest.Main(m) }

// sampleGlob is the sample crawl's files.
const sampleGlob = "../testdata/crawl/*.parquet"

// testConfig is the command's defaults, unverified, with a fixed sweep
// date (pipelinetest.DefaultConfig).
func testConfig() transforms.Config {
	cfg := transforms.Config{Config: settings.Default()}
	cfg.Sweep = "2026-11-01"
	cfg.Verify = settings.VerifyNone
	return cfg
}

// runnerDefaults is cmd/runner's defaults, the verification included
// (pipelinetest.RunnerDefaults).
func runnerDefaults() transforms.Config {
	cfg := testConfig()
	cfg.Verify = settings.Default().Verify
	return cfg
}

// reference is a plain run of the sample, the tables the others must equal.
func reference(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := Run(context.Background(), Options{Input: sampleGlob, Output: dir, Config: runnerDefaults()}); err != nil {
		t.Fatal(err)
	}
	return dir
}
