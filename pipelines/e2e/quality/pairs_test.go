package quality

import (
	"cmp"
	"context"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
)

// TestLinkedPairsOnly: --pairs=linked gives the docs and clusters of the
// default run, a pairs table of exactly its linked pairs, and a contained
// table only where it stays complete; under a resemblance policy phase 3
// skips pairs by their sketch sizes, and recluster refuses the output.
func TestLinkedPairsOnly(t *testing.T) {
	inputs := []string{"../../../testdata/crawl/*.parquet"}
	if shared, ok := shareddata.Optional(t, "deb-copyright.parquet"); ok {
		inputs = append(inputs, shared)
	}
	for _, input := range inputs {
		for _, spec := range []string{"resemblance:0.5", "containment:0.8"} {
			t.Run(input+"/"+spec, func(t *testing.T) {
				pol, err := policy.Parse(spec)
				if err != nil {
					t.Fatal(err)
				}
				cfg := pipelinetest.DefaultConfig()
				cfg.Policy = pol
				all := pipelinetest.Run(t, input, cfg)
				cfg.LinkedOnly = true
				linked := pipelinetest.Run(t, input, cfg)
				pipelinetest.CheckInvariants(t, linked, len(all.Docs))

				ctx := context.Background()
				if err := tables.Diff(ctx, all.Dir, linked.Dir, tables.DocsTable, tables.ClustersTable); err != nil {
					t.Error(err)
				}
				var want []tables.Pair
				for _, p := range all.Pairs {
					if p.Linked {
						want = append(want, p)
					}
				}
				got := slices.Clone(linked.Pairs)
				byPair := func(x, y tables.Pair) int { return cmp.Or(cmp.Compare(x.DocA, y.DocA), cmp.Compare(x.DocB, y.DocB)) }
				slices.SortFunc(want, byPair)
				slices.SortFunc(got, byPair)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("pairs table holds %d rows, want the %d linked pairs of the default run", len(got), len(want))
				}
				if len(want) == 0 {
					t.Error("no linked pairs: the test compares nothing")
				}

				skipped := linked.Manifest.Counts["pair_triplets_skipped"]
				if pol.Containment > 0 {
					if skipped != 0 {
						t.Errorf("%d triplets skipped under a containment policy, which sizes cannot rule out", skipped)
					}
					if len(linked.Contained) != len(all.Contained) {
						t.Errorf("contained table: %d rows, want the default run's %d", len(linked.Contained), len(all.Contained))
					}
				} else {
					if skipped == 0 {
						t.Error("no triplet skipped by sketch sizes under a resemblance policy")
					}
					if len(linked.Contained) != 0 {
						t.Errorf("contained table: %d rows, want none (its pairs were not kept)", len(linked.Contained))
					}
				}
				t.Logf("pairs %d -> %d rows, triplets %d counted, %d skipped", len(all.Pairs), len(got),
					linked.Manifest.Counts["pair_triplets"], skipped)

				if _, err := pipelines.Recluster(ctx, pipelines.ReclusterOptions{From: linked.Dir, Output: t.TempDir(), Policy: pol}); err == nil {
					t.Error("recluster accepted an output that kept only its linked pairs")
				}
			})
		}
	}
}

// TestUncertainLinksCounted checks the manifest's links_uncertain against
// the pairs table, worked out apart from clusters.Uncertain: the
// linked rows whose MOD_25 estimate is within 2.5 standard errors,
// sqrt(0.25 / (a + b - shared)), of 0.5.
func TestUncertainLinksCounted(t *testing.T) {
	inputs := []string{"../../../testdata/crawl/*.parquet"}
	if shared, ok := shareddata.Optional(t, "deb-manpages.parquet"); ok {
		inputs = append(inputs, shared)
	}
	for _, input := range inputs {
		t.Run(input, func(t *testing.T) {
			r := pipelinetest.Run(t, input, pipelinetest.DefaultConfig())
			var want int64
			for _, p := range r.Pairs {
				n := float64(p.SketchSizeA + p.SketchSizeB - p.Shared)
				if p.Linked && math.Abs(p.Resemblance-0.5) < 2.5*math.Sqrt(0.25/n) {
					want++
				}
			}
			if got := r.Manifest.Counts["links_uncertain"]; got != want {
				t.Errorf("links_uncertain %d, want %d of the %d linked pairs", got, want, r.Manifest.Counts["links"])
			}
			t.Logf("%d of %d links uncertain", want, r.Manifest.Counts["links"])
			if want == 0 && strings.Contains(input, "manpages") {
				t.Error("no uncertain links on the manual pages: the test compares nothing")
			}
		})
	}
}
