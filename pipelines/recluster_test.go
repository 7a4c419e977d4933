package pipelines

import (
	"context"
	"strings"
	"testing"

	"github.com/neardup/neardup/clustering/keep"
	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
)

// sameTables fails the test unless two outputs hold the same rows.
func sameTables(t *testing.T, a, b *result) {
	t.Helper()
	if err := tables.Diff(context.Background(), a.dir, b.dir); err != nil {
		t.Error(err)
	}
}

// TestReclusterMatchesFullRun: phase 4 redone from the stored tables under
// another policy gives the tables a full run with that policy gives.
func TestReclusterMatchesFullRun(t *testing.T) {
	const input = "../testdata/crawl/*.parquet"
	base := run(t, input, defaultConfig())
	for _, spec := range []string{"containment:0.8", "resemblance:0.8", "resemblance:0.3,containment:0.9", "resemblance:0.5"} {
		t.Run(spec, func(t *testing.T) {
			pol, err := policy.Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			cfg := defaultConfig()
			cfg.Policy = pol
			full := run(t, input, cfg)
			checkInvariants(t, full, len(base.docs))

			dir := t.TempDir()
			m, err := Recluster(context.Background(), ReclusterOptions{From: base.dir, Output: dir, Policy: pol})
			if err != nil {
				t.Fatal(err)
			}
			re := readResult(t, dir, m, pol)
			checkInvariants(t, re, len(base.docs))
			if m.Counts["pair_triplets"] != 0 || m.Counts["shingles"] != 0 {
				t.Errorf("recluster recomputed phases 1-3: counts %v", m.Counts)
			}
			sameTables(t, full, re)
			t.Logf("%s: %d clusters, %d linked pairs, %d contained rows", spec, len(re.clusters), m.Counts["links"], len(re.contained))
		})
	}
}

// TestReclusterUncertain: a --verify=uncertain run reclustered under
// another policy links its verified pairs on their exact figures and the
// others on their estimates, wherever they stand against the new
// threshold; the links it takes on uncertain estimates are counted; and
// a recluster of the recluster still knows which pairs were verified.
func TestReclusterUncertain(t *testing.T) {
	cfg := defaultConfig()
	cfg.Verify = settings.VerifyUncertain
	base := run(t, sampleGlob, cfg)
	from := base.dir
	for _, spec := range []string{"resemblance:0.3", "containment:0.8", "resemblance:0.5"} {
		pol, err := policy.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		m, err := Recluster(context.Background(), ReclusterOptions{From: from, Output: dir, Policy: pol})
		if err != nil {
			t.Fatal(err)
		}
		re := readResult(t, dir, m, pol)
		checkInvariants(t, re, len(base.docs)) // links each pair by uncertainByRule at resemblance 0.5
		if got := m.Settings["verify"]; got != "uncertain:resemblance:0.5" {
			t.Errorf("%s: verify setting %q, want the source's", spec, got)
		}
		var uncertain int64
		for _, p := range re.pairs {
			if p.Linked && !uncertainByRule(cfg.Sketch, cfg.Policy, p) && uncertainByRule(cfg.Sketch, pol, p) {
				uncertain++
			}
		}
		if got := m.Counts["links_uncertain"]; got != uncertain {
			t.Errorf("%s: links_uncertain %d, want %d", spec, got, uncertain)
		}
		if spec == "resemblance:0.5" {
			sameTables(t, base, re)
		}
		t.Logf("%s: %d links, %d uncertain", spec, m.Counts["links"], uncertain)
		from = dir
	}
}

// TestReclusterVerifiedSuperShingles: a verified super-shingle run links by
// policy too, so recluster redoes it exactly.
func TestReclusterVerifiedSuperShingles(t *testing.T) {
	const input = "../testdata/crawl/*.parquet"
	cfg := defaultConfig()
	cfg.Sketch, cfg.Mode, cfg.SuperSize, cfg.Verify = sketch.Spec{Kind: sketch.Min, N: 100}, settings.ModeSuperShingle, 5, settings.VerifySketch
	base := run(t, input, cfg)
	pol := policy.Policy{Resemblance: 0.8}
	cfg.Policy = pol
	full := run(t, input, cfg)
	dir := t.TempDir()
	m, err := Recluster(context.Background(), ReclusterOptions{From: base.dir, Output: dir, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	sameTables(t, full, readResult(t, dir, m, pol))

	cfg.Verify = settings.VerifyNone
	unverified := run(t, input, cfg)
	if _, err := Recluster(context.Background(), ReclusterOptions{From: unverified.dir, Output: t.TempDir(), Policy: pol}); err == nil {
		t.Error("recluster accepted an unverified super-shingle run")
	}
}

func TestReclusterRefusesWhatItCannotDoExactly(t *testing.T) {
	base := run(t, "../testdata/crawl/*.parquet", defaultConfig())
	for _, pol := range []policy.Policy{{Resemblance: 0.1}, {Containment: 0.3}} {
		if _, err := Recluster(context.Background(), ReclusterOptions{From: base.dir, Output: t.TempDir(), Policy: pol}); err == nil {
			t.Errorf("recluster accepted %v, below the floors the pairs table keeps", pol)
		}
	}
	if _, err := Recluster(context.Background(), ReclusterOptions{From: t.TempDir(), Output: t.TempDir(), Policy: policy.Default}); err == nil {
		t.Error("recluster accepted a folder that is not a finished output")
	}
}

// TestReclusterKeeps: recluster with --keep gives the tables of a full run
// with it, ranking by an input column too (read from the first run's
// inputs; in a list, joined with the rules the docs table ranks by), and
// names a rank column the inputs lack.
func TestReclusterKeeps(t *testing.T) {
	const input = "../testdata/crawl/*.parquet"
	base := run(t, input, defaultConfig())
	for _, spec := range []string{"longest", "earliest", "shortest-url", "max:language_score", "min:language_score",
		"static-url,max:language_score,shortest-url", "host-suffix:.uk,longest"} {
		kp, err := keep.Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		cfg := defaultConfig()
		cfg.Keep, cfg.Columns.Score = kp, kp.NeedsColumn()
		full := run(t, input, cfg)
		dir := t.TempDir()
		m, err := Recluster(context.Background(), ReclusterOptions{From: base.dir, Output: dir, Policy: policy.Default, Keep: kp})
		if err != nil {
			t.Fatal(err)
		}
		sameTables(t, full, readResult(t, dir, m, policy.Default))
	}
	kp, _ := keep.Parse("max:no_such_column")
	if _, err := Recluster(context.Background(), ReclusterOptions{From: base.dir, Output: t.TempDir(), Policy: policy.Default, Keep: kp}); err == nil || !strings.Contains(err.Error(), "no_such_column") {
		t.Errorf("recluster with a missing rank column: %v", err)
	}
}
