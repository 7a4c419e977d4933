package pipelines

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
	"github.com/neardup/neardup/io/tables"
)

// TestLinkedPairsOnly: --pairs=linked gives the docs and clusters of the
// default run, a pairs table of exactly its linked pairs, and a contained
// table only where it stays complete; under a resemblance policy phase 3
// skips pairs by their sketch sizes, and recluster refuses the output.
func TestLinkedPairsOnly(t *testing.T) {
	inputs := []string{"../testdata/crawl/*.parquet"}
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
				cfg := defaultConfig()
				cfg.Policy = pol
				all := run(t, input, cfg)
				cfg.LinkedOnly = true
				linked := run(t, input, cfg)
				checkInvariants(t, linked, len(all.docs))

				ctx := context.Background()
				if err := tables.Diff(ctx, all.dir, linked.dir, tables.DocsTable, tables.ClustersTable); err != nil {
					t.Error(err)
				}
				var want []tables.Pair
				for _, p := range all.pairs {
					if p.Linked {
						want = append(want, p)
					}
				}
				got := slices.Clone(linked.pairs)
				byPair := func(x, y tables.Pair) int { return cmp.Or(cmp.Compare(x.DocA, y.DocA), cmp.Compare(x.DocB, y.DocB)) }
				slices.SortFunc(want, byPair)
				slices.SortFunc(got, byPair)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("pairs table holds %d rows, want the %d linked pairs of the default run", len(got), len(want))
				}
				if len(want) == 0 {
					t.Error("no linked pairs: the test compares nothing")
				}

				skipped := linked.manifest.Counts["pair_triplets_skipped"]
				if pol.Containment > 0 {
					if skipped != 0 {
						t.Errorf("%d triplets skipped under a containment policy, which sizes cannot rule out", skipped)
					}
					if len(linked.contained) != len(all.contained) {
						t.Errorf("contained table: %d rows, want the default run's %d", len(linked.contained), len(all.contained))
					}
				} else {
					if skipped == 0 {
						t.Error("no triplet skipped by sketch sizes under a resemblance policy")
					}
					if len(linked.contained) != 0 {
						t.Errorf("contained table: %d rows, want none (its pairs were not kept)", len(linked.contained))
					}
				}
				t.Logf("pairs %d -> %d rows, triplets %d counted, %d skipped", len(all.pairs), len(got),
					linked.manifest.Counts["pair_triplets"], skipped)

				if _, err := Recluster(ctx, ReclusterOptions{From: linked.dir, Output: t.TempDir(), Policy: pol}); err == nil {
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
	inputs := []string{"../testdata/crawl/*.parquet"}
	if shared, ok := shareddata.Optional(t, "deb-manpages.parquet"); ok {
		inputs = append(inputs, shared)
	}
	for _, input := range inputs {
		t.Run(input, func(t *testing.T) {
			r := run(t, input, defaultConfig())
			var want int64
			for _, p := range r.pairs {
				n := float64(p.SketchSizeA + p.SketchSizeB - p.Shared)
				if p.Linked && math.Abs(p.Resemblance-0.5) < 2.5*math.Sqrt(0.25/n) {
					want++
				}
			}
			if got := r.manifest.Counts["links_uncertain"]; got != want {
				t.Errorf("links_uncertain %d, want %d of the %d linked pairs", got, want, r.manifest.Counts["links"])
			}
			t.Logf("%d of %d links uncertain", want, r.manifest.Counts["links"])
			if want == 0 && strings.Contains(input, "manpages") {
				t.Error("no uncertain links on the manual pages: the test compares nothing")
			}
		})
	}
}
