package pipelines

import (
	"context"
	"testing"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
)

// corpus is an input the end-to-end tests run on.
type corpus struct {
	name, glob string
	cols       crawl.Columns
}

// corpora are the sample crawl and every shared table that is present
// (each missing one is named in the log).
func corpora(t *testing.T) []corpus {
	t.Helper()
	text := crawl.Columns{Text: "text", URL: "url", ID: "id", Date: "date"}
	cs := []corpus{{"sample crawl", "../testdata/crawl/*.parquet", text}}
	for _, name := range []string{"deb-copyright", "cc-main-2019-30-sample", "deb-manpages", "clough-stevenson", "multilingual-docs", "python-3.11-docs-html"} {
		path, ok := shareddata.Optional(t, name+".parquet")
		if !ok {
			continue
		}
		cols := text
		if name == "python-3.11-docs-html" {
			cols = crawl.Columns{HTML: "html", URL: "url", ID: "id", Date: "date"}
		}
		cs = append(cs, corpus{name, path, cols})
	}
	return cs
}

// TestComponentsWaysAgree: on every corpus, the distributed components
// (with the default rounds, and with too few rounds for the finish to have
// nothing left) give exactly the tables of the single-worker union-find,
// whatever the partition count, and the manifest says which way ran.
func TestComponentsWaysAgree(t *testing.T) {
	for _, c := range corpora(t) {
		t.Run(c.name, func(t *testing.T) {
			cfg := defaultConfig()
			cfg.Columns = c.cols
			cfg.Components, cfg.Partitions = settings.ComponentsSingle, 4
			single := run(t, c.glob, cfg)
			if got := single.manifest.Settings["components"]; got != settings.ComponentsSingle {
				t.Errorf("manifest: components %q, want single", got)
			}
			links := single.manifest.Counts["links"]
			if got := single.manifest.Counts["components_max_worker_records"]; got != links {
				t.Errorf("single: the union-find held %d links, the run made %d", got, links)
			}
			for _, v := range []struct{ parts, rounds int }{{3, 1}, {7, 2}, {5, settings.DefaultComponentRounds}} {
				cfg.Components, cfg.Partitions, cfg.ComponentRounds = settings.ComponentsDistributed, v.parts, v.rounds
				dist := run(t, c.glob, cfg)
				if err := tables.Diff(context.Background(), single.dir, dist.dir); err != nil {
					t.Errorf("distributed, %d partitions, %d rounds: %v", v.parts, v.rounds, err)
				}
				m := dist.manifest
				if m.Settings["components"] != settings.ComponentsDistributed {
					t.Errorf("manifest: components %q, want distributed", m.Settings["components"])
				}
				t.Logf("%d partitions, %d rounds: %d links, residual %d edges, at most %d records on a worker; clusters %d",
					v.parts, v.rounds, links, m.Counts["components_residual_edges"], m.Counts["components_max_worker_records"], m.Counts["clusters"])
			}
			if len(single.clusters) == 0 {
				t.Log("no clusters: this corpus only checks that nothing is made up")
			}
		})
	}
}
