package tables

import (
	"fmt"
	"slices"
	"strings"
)

// Selection is the tables a run writes (--tables), in the order of
// Tables; nil is every table. Leaving a table out never changes the rows
// of the tables written.
type Selection []string

// The tables each reader of a finished output needs.
var (
	// IndexNeeds are what update and recluster read of their --from.
	IndexNeeds = Selection{DocsTable, PairsTable, ContainedTable, SketchesTable, PostingsTable, URLsTable}
	// QueryNeeds are what query and serve read, at the least: an output
	// without LookupNeeds is loaded whole.
	QueryNeeds = Selection{DocsTable, ClustersTable, SketchesTable}
	// LookupNeeds are what query and serve read a few pages of (and
	// postings, by which a page finds its candidates: without them, as
	// under --mode=supershingles, a text query reads every sketch).
	LookupNeeds = Selection{DocsTable, ClustersTable, SketchesTable, URLsTable, MembersTable, LargestTable}
	// ReportNeeds are what report reads.
	ReportNeeds = Selection{DocsTable, ClustersTable, PairsTable}
	// ExportNeeds are what export (and --dedup-output) read.
	ExportNeeds = Selection{DocsTable}
	// LostNeeds are what lost reads.
	LostNeeds = Selection{URLsTable, LostTable}
)

// ParseSelection parses a --tables value: "all", or a comma-separated
// list of table names.
func ParseSelection(v string) (Selection, error) {
	if v == "all" {
		return nil, nil
	}
	want := map[string]bool{}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(Tables, name) {
			return nil, fmt.Errorf("want all or a list of %s, not %q", strings.Join(Tables, ", "), name)
		}
		want[name] = true
	}
	var s Selection
	for _, t := range Tables {
		if want[t] {
			s = append(s, t)
		}
	}
	if len(s) == len(Tables) {
		return nil, nil
	}
	return s, nil
}

// Has reports whether the run writes table.
func (s Selection) Has(table string) bool { return s == nil || slices.Contains(s, table) }

// Any reports whether the run writes any of tables.
func (s Selection) Any(tables ...string) bool {
	return slices.ContainsFunc(tables, s.Has)
}

// String is s as --tables takes it.
func (s Selection) String() string {
	if s == nil {
		return "all"
	}
	return strings.Join(s, ",")
}

// Missing lists the tables of need that s leaves out.
func (s Selection) Missing(need Selection) []string {
	var out []string
	for _, t := range need {
		if !s.Has(t) {
			out = append(out, t)
		}
	}
	return out
}
