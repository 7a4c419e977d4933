package main

import (
	"context"
	"testing"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/simjoin"
)

// TestMain runs the tests with Beam initialised (and --beam_strict), as
// every package that runs pipelines does.
func TestMain(m *testing.M) { beamtest.Main(m) }

// TestDefaultsQuality is issue 25's target in CI: with the runner's
// defaults (--verify=auto, which verifies the uncertain pairs of inputs
// this small), the linked pairs have precision and recall of at least
// 0.95 against the exact join of the full shingle sets at resemblance 0.5
// and 0.8, on the sample crawl and the small shared corpora. Unverified
// (the mode mod:25) precision on deb-manpages at 0.5 is 0.667, so the
// test fails if the defaults stop verifying.
func TestDefaultsQuality(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline on five corpora")
	}
	corpora := []corpus{{glob: "../../testdata/crawl/*.parquet"}}
	for _, name := range []string{"deb-manpages.parquet", "deb-copyright.parquet", "cc-main-2019-30-sample.parquet", "clough-stevenson.parquet"} {
		if path, ok := shareddata.Optional(t, name); ok {
			corpora = append(corpora, corpus{glob: path})
		}
	}
	ctx := context.Background()
	for _, c := range corpora {
		docs, err := readCorpus(ctx, c.glob, columns(c), c.extract)
		if err != nil {
			t.Fatal(err)
		}
		sets := shingleSets(docs, *seed, *shingleWords)
		for _, th := range []float64{0.5, 0.8} {
			pairs, _, err := simjoin.Join(records(sets), th)
			if err != nil {
				t.Fatal(err)
			}
			cfg := baseConfig(c)
			cfg.Verify = settings.Default().Verify
			cfg.Policy = policy.Policy{Resemblance: th}
			res, err := runPipeline(ctx, c.glob, cfg, "defaults")
			if err != nil {
				t.Fatal(err)
			}
			s := compare(foundPairs(res.docs, res.pairs), exactSet(pairs))
			t.Logf("%s at %g: %d exact pairs, %d found, precision %s, recall %s", c.name(), th, s.Exact, s.Found, s.precision(), s.recall())
			if s.Exact > 0 && float64(s.Both) < 0.95*float64(s.Exact) || s.Found > 0 && float64(s.Both) < 0.95*float64(s.Found) {
				t.Errorf("%s at %g: precision %s, recall %s, want 0.95 or more", c.name(), th, s.precision(), s.recall())
			}
		}
	}
}
