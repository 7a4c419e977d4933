package keep

import (
	"context"
	"strings"
	"testing"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
)

// TestReclusterMatchesFullRun: phase 4 redone from the stored tables under
// another policy gives the tables a full run with that policy gives.
func TestReclusterMatchesFullRun(t *testing.T) {
	const input = "../../../testdata/crawl/*.parquet"
	base := pipelinetest.Run(t, input, pipelinetest.DefaultConfig())
	for _, spec := range []string{"containment:0.8", "resemblance:0.8", "resemblance:0.3,containment:0.9", "resemblance:0.5"} {
		t.Run(spec, func(t *testing.T) {
			pol, err := policy.Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			cfg := pipelinetest.DefaultConfig()
			cfg.Policy = pol
			full := pipelinetest.Run(t, input, cfg)
			pipelinetest.CheckInvariants(t, full, len(base.Docs))

			dir := t.TempDir()
			m, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: base.Dir, Output: dir, Policy: pol})
			if err != nil {
				t.Fatal(err)
			}
			re := pipelinetest.ReadResult(t, dir, m, pol)
			pipelinetest.CheckInvariants(t, re, len(base.Docs))
			if m.Counts["pair_triplets"] != 0 || m.Counts["shingles"] != 0 {
				t.Errorf("recluster recomputed phases 1-3: counts %v", m.Counts)
			}
			pipelinetest.SameTables(t, full, re)
			t.Logf("%s: %d clusters, %d linked pairs, %d contained rows", spec, len(re.Clusters), m.Counts["links"], len(re.Contained))
		})
	}
}

// TestReclusterUncertain: a --verify=uncertain run reclustered under
// another policy links its verified pairs on their exact figures and the
// others on their estimates, wherever they stand against the new
// threshold; the links it takes on uncertain estimates are counted; and
// a recluster of the recluster still knows which pairs were verified.
func TestReclusterUncertain(t *testing.T) {
	cfg := pipelinetest.DefaultConfig()
	cfg.Verify = settings.VerifyUncertain
	base := pipelinetest.Run(t, pipelinetest.SampleGlob, cfg)
	from := base.Dir
	for _, spec := range []string{"resemblance:0.3", "containment:0.8", "resemblance:0.5"} {
		pol, err := policy.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		m, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: from, Output: dir, Policy: pol})
		if err != nil {
			t.Fatal(err)
		}
		re := pipelinetest.ReadResult(t, dir, m, pol)
		pipelinetest.CheckInvariants(t, re, len(base.Docs)) // links each pair by uncertainByRule at resemblance 0.5
		if got := m.Settings["verify"]; got != "uncertain:resemblance:0.5" {
			t.Errorf("%s: verify setting %q, want the source's", spec, got)
		}
		var uncertain int64
		for _, p := range re.Pairs {
			if p.Linked && !pipelinetest.UncertainByRule(cfg.Sketch, cfg.Policy, p) && pipelinetest.UncertainByRule(cfg.Sketch, pol, p) {
				uncertain++
			}
		}
		if got := m.Counts["links_uncertain"]; got != uncertain {
			t.Errorf("%s: links_uncertain %d, want %d", spec, got, uncertain)
		}
		if spec == "resemblance:0.5" {
			pipelinetest.SameTables(t, base, re)
		}
		t.Logf("%s: %d links, %d uncertain", spec, m.Counts["links"], uncertain)
		from = dir
	}
}

// TestReclusterVerifiedSuperShingles: a verified super-shingle run links by
// policy too, so recluster redoes it exactly.
func TestReclusterVerifiedSuperShingles(t *testing.T) {
	const input = "../../../testdata/crawl/*.parquet"
	cfg := pipelinetest.DefaultConfig()
	cfg.Sketch, cfg.Mode, cfg.SuperSize, cfg.Verify = sketch.Spec{Kind: sketch.Min, N: 100}, settings.ModeSuperShingle, 5, settings.VerifySketch
	base := pipelinetest.Run(t, input, cfg)
	pol := policy.Policy{Resemblance: 0.8}
	cfg.Policy = pol
	full := pipelinetest.Run(t, input, cfg)
	dir := t.TempDir()
	m, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: base.Dir, Output: dir, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.SameTables(t, full, pipelinetest.ReadResult(t, dir, m, pol))

	cfg.Verify = settings.VerifyNone
	unverified := pipelinetest.Run(t, input, cfg)
	if _, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: unverified.Dir, Output: t.TempDir(), Policy: pol}); err == nil {
		t.Error("recluster accepted an unverified super-shingle run")
	}
}

func TestReclusterRefusesWhatItCannotDoExactly(t *testing.T) {
	base := pipelinetest.Run(t, "../../../testdata/crawl/*.parquet", pipelinetest.DefaultConfig())
	for _, pol := range []policy.Policy{{Resemblance: 0.1}, {Containment: 0.3}} {
		if _, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: base.Dir, Output: t.TempDir(), Policy: pol}); err == nil {
			t.Errorf("recluster accepted %v, below the floors the pairs table keeps", pol)
		}
	}
	if _, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: t.TempDir(), Output: t.TempDir(), Policy: policy.Default}); err == nil {
		t.Error("recluster accepted a folder that is not a finished output")
	}
}

// TestReclusterKeeps: recluster with --keep gives the tables of a full run
// with it, ranking by an input column too (read from the first run's
// inputs; in a list, joined with the rules the docs table ranks by), and
// names a rank column the inputs lack.
func TestReclusterKeeps(t *testing.T) {
	const input = "../../../testdata/crawl/*.parquet"
	base := pipelinetest.Run(t, input, pipelinetest.DefaultConfig())
	for _, spec := range []string{"longest", "earliest", "shortest-url", "max:language_score", "min:language_score",
		"static-url,max:language_score,shortest-url", "host-suffix:.uk,longest"} {
		kp, err := keep.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		cfg := pipelinetest.DefaultConfig()
		cfg.Keep, cfg.Columns.Score = kp, kp.NeedsColumn()
		full := pipelinetest.Run(t, input, cfg)
		dir := t.TempDir()
		m, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: base.Dir, Output: dir, Policy: policy.Default, Keep: kp})
		if err != nil {
			t.Fatal(err)
		}
		pipelinetest.SameTables(t, full, pipelinetest.ReadResult(t, dir, m, policy.Default))
	}
	kp, _ := keep.Parse("max:no_such_column")
	if _, err := pipelines.Recluster(context.Background(), pipelines.ReclusterOptions{From: base.Dir, Output: beamtest.FailedRunOutput(t), Policy: policy.Default, Keep: kp}); err == nil || !strings.Contains(err.Error(), "no_such_column") {
		t.Errorf("recluster with a missing rank column: %v", err)
	}
}
