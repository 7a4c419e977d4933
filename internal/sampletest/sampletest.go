// Package sampletest runs the pipeline for the tests of the packages that
// read its output (query, report, serve, the runner's commands): the
// runner's default settings, over the sample crawl or any input.
package sampletest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/transforms"
)

// Config is the runner's default configuration, with a fixed sweep date.
func Config() transforms.Config {
	cfg := transforms.Config{Config: settings.Default()}
	cfg.Sweep = "2026-11-01"
	return cfg
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
