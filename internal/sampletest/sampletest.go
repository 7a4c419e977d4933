// Package sampletest runs the pipeline for the tests of the packages that
// read its output (query, report, serve, the runner's commands): the
// runner's default settings, over the sample crawl or any input.
package sampletest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/fingerprint"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/policy"
	"github.com/neardup/neardup/sketch"
	"github.com/neardup/neardup/transforms"
)

// Config is the runner's default configuration, with a fixed sweep date.
func Config() transforms.Config {
	return transforms.Config{
		Columns:        crawl.Columns{Text: "text", URL: "url", ID: "id", Date: "date"},
		ShingleWords:   10,
		Sketch:         sketch.Spec{Kind: sketch.Mod, N: 25},
		MaxShingleDocs: 1000,
		Policy:         policy.Default,
		Seed:           fingerprint.DefaultSeed,
		Equivalence:    transforms.IdenticalContent,
		Sweep:          "2026-11-01",
	}
}

// Run runs the pipeline with Config over input (a glob) into a folder of
// tb's, and returns the folder and the manifest.
func Run(tb testing.TB, input string) (string, *output.Manifest) {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "out")
	m, err := pipelines.Run(context.Background(), pipelines.Options{Input: input, Output: dir, Config: Config()})
	if err != nil {
		tb.Fatalf("pipelines.Run: %v", err)
	}
	return dir, m
}
