package layouts

import (
	"context"
	"testing"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
)

// TestComponentsWaysAgree: on every corpus, the distributed components
// (with the default rounds, and with too few rounds for the finish to have
// nothing left, on the sample; with one round on the real corpora) give
// exactly the tables of the single-worker union-find, whatever the
// partition count, and the manifest says which way ran.
func TestComponentsWaysAgree(t *testing.T) {
	for _, c := range pipelinetest.Corpora(t) {
		t.Run(c.Name, func(t *testing.T) {
			cfg := pipelinetest.DefaultConfig()
			cfg.Columns = c.Cols
			cfg.Components, cfg.Partitions = settings.ComponentsSingle, 4
			single := pipelinetest.Run(t, c.Glob, cfg)
			if got := single.Manifest.Settings["components"]; got != settings.ComponentsSingle {
				t.Errorf("manifest: components %q, want single", got)
			}
			links := single.Manifest.Counts["links"]
			if got := single.Manifest.Counts["components_max_worker_records"]; got != links {
				t.Errorf("single: the union-find held %d links, the run made %d", got, links)
			}
			// Every way on the sample; on the real corpora the one that
			// leaves the finish the most (one round), which costs as a
			// full run of each (transforms' TestComponentsWaysMatchUnionFind
			// has the default rounds on graphs made to be hard).
			variants := []struct{ parts, rounds int }{{3, 1}, {7, 2}, {5, settings.DefaultComponentRounds}}
			if c.Glob != pipelinetest.SampleGlob {
				variants = variants[:1]
			}
			for _, v := range variants {
				cfg.Components, cfg.Partitions, cfg.ComponentRounds = settings.ComponentsDistributed, v.parts, v.rounds
				dist := pipelinetest.Run(t, c.Glob, cfg)
				if err := tables.Diff(context.Background(), single.Dir, dist.Dir); err != nil {
					t.Errorf("distributed, %d partitions, %d rounds: %v", v.parts, v.rounds, err)
				}
				m := dist.Manifest
				if m.Settings["components"] != settings.ComponentsDistributed {
					t.Errorf("manifest: components %q, want distributed", m.Settings["components"])
				}
				t.Logf("%d partitions, %d rounds: %d links, residual %d edges, at most %d records on a worker; clusters %d",
					v.parts, v.rounds, links, m.Counts["components_residual_edges"], m.Counts["components_max_worker_records"], m.Counts["clusters"])
			}
			if len(single.Clusters) == 0 {
				t.Log("no clusters: this corpus only checks that nothing is made up")
			}
		})
	}
}
