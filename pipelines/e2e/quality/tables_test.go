package quality

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/views/query"
)

// TestTablesSelection: a run with --tables writes those tables and no
// other, with the rows a full run writes, removes the other tables of an
// earlier run in its folder, keeps the accounting, and the commands that
// need a table it left out say which and how to get it.
func TestTablesSelection(t *testing.T) {
	ctx := context.Background()
	full := pipelinetest.Run(t, pipelinetest.SampleGlob, pipelinetest.DefaultConfig())

	for _, c := range []struct {
		name string
		sel  tables.Selection
	}{
		{"docs and clusters, over a full output", tables.Selection{tables.DocsTable, tables.ClustersTable}},
		{"pairs, sketches and urls", tables.Selection{tables.PairsTable, tables.SketchesTable, tables.URLsTable}},
		{"contained and postings", tables.Selection{tables.ContainedTable, tables.PostingsTable}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := pipelinetest.DefaultConfig()
			if c.sel[0] == tables.DocsTable {
				// Written into a folder holding a full run's tables: those
				// left out must go.
				if _, err := pipelines.Run(ctx, pipelines.Options{Input: pipelinetest.SampleGlob, Output: dir, Config: cfg}); err != nil {
					t.Fatal(err)
				}
			}
			cfg.Tables = c.sel
			m, err := pipelines.Run(ctx, pipelines.Options{Input: pipelinetest.SampleGlob, Output: dir, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range entries {
				got = append(got, e.Name())
			}
			want := slices.Concat([]string(c.sel), []string{output.SuccessMarker, output.ManifestFile})
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("the folder holds %v, want %v", got, want)
			}
			if err := tables.Diff(ctx, full.Dir, dir, c.sel...); err != nil {
				t.Error(err)
			}
			var listed []string
			for table := range m.Tables {
				listed = append(listed, table)
			}
			slices.Sort(listed)
			if wantListed := slices.Sorted(slices.Values([]string(c.sel))); !slices.Equal(listed, wantListed) {
				t.Errorf("the manifest lists tables %v, want %v", listed, wantListed)
			}
			if m.Settings["tables"] != c.sel.String() {
				t.Errorf("the manifest's tables setting is %q, want %q", m.Settings["tables"], c.sel)
			}
			// The counts are the full run's: the accounting does not
			// depend on the docs table being written.
			for _, k := range []string{"docs", "docs_in_clusters", "docs_alone", "docs_empty_or_rejected", "clusters", "links", "pairs_reported"} {
				if m.Counts[k] != full.Manifest.Counts[k] {
					t.Errorf("count %s = %d, the full run's %d", k, m.Counts[k], full.Manifest.Counts[k])
				}
			}
			for k, table := range map[string]string{"docs_written": tables.DocsTable, "pairs_written": tables.PairsTable, "contained_written": tables.ContainedTable, "clusters_written": tables.ClustersTable} {
				want := int64(0)
				if c.sel.Has(table) {
					want = full.Manifest.Counts[k]
				}
				if m.Counts[k] != want {
					t.Errorf("count %s = %d, want %d", k, m.Counts[k], want)
				}
			}

			_, err = pipelines.Recluster(ctx, pipelines.ReclusterOptions{From: dir, Output: t.TempDir(), Policy: cfg.Policy})
			missing := c.sel.Missing(tables.IndexNeeds)
			if err == nil || !strings.Contains(err.Error(), "--tables="+c.sel.String()) || !strings.Contains(err.Error(), "no "+strings.Join(missing, ", ")+" table") {
				t.Errorf("recluster from it: %v; want an error naming %v and --tables=%s", err, missing, c.sel)
			}
			// update says so before it looks at its input (the sample,
			// which is in the index).
			_, err = pipelines.Update(ctx, pipelines.UpdateOptions{From: dir, Options: pipelines.Options{Input: pipelinetest.SampleGlob, Output: t.TempDir(), Config: pipelinetest.DefaultConfig()}})
			if err == nil || !strings.Contains(err.Error(), "no "+strings.Join(missing, ", ")+" table") {
				t.Errorf("update from it: %v; want an error naming %v", err, missing)
			}
			_, err = query.Open(ctx, dir)
			if missing := c.sel.Missing(tables.QueryNeeds); err == nil || !strings.Contains(err.Error(), "no "+strings.Join(missing, ", ")+" table") {
				t.Errorf("query.Open: %v; want an error naming %v", err, missing)
			}
		})
	}
}
