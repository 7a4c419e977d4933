package tables

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// pandasColumns is the columns pandas metadata md names, with their
// numpy_type.
func pandasColumns(t *testing.T, md string) map[string]string {
	t.Helper()
	var m struct {
		Columns []struct {
			Name  string `json:"name"`
			Field string `json:"field_name"`
			Numpy string `json:"numpy_type"`
		} `json:"columns"`
		Index []any `json:"index_columns"`
	}
	if err := json.Unmarshal([]byte(md), &m); err != nil {
		t.Fatalf("pandas metadata %q: %v", md, err)
	}
	out := map[string]string{}
	for _, c := range m.Columns {
		out[c.Field] = c.Numpy
	}
	return out
}

// TestPandasMetadata checks that every nullable integer column of the
// tables, as docs/tables.md lists them ("int64, null", "int32, null"),
// is named to pandas as a nullable extension dtype, and no other.
func TestPandasMetadata(t *testing.T) {
	for _, c := range []struct {
		name string
		md   string
		want map[string]string
	}{
		{"docs", pandasMetadata[Doc](), map[string]string{"cluster_id": "Int64", "identical_to": "Int64", "kept_doc_id": "Int64", "redirect_target": "Int64", "redirect_hops": "Int32"}},
		{"members", pandasMetadata[Member](), map[string]string{"identical_to": "Int64", "kept_doc_id": "Int64"}},
		{"lost", pandasMetadata[Lost](), map[string]string{"cluster_id": "Int64", "found_doc_id": "Int64"}},
		{"pairs", pandasMetadata[Pair](), nil},
		{"postings", pandasMetadata[Posting](), nil},
	} {
		if c.want == nil {
			if c.md != "" {
				t.Errorf("%s: pandas metadata %s, want none (no nullable integer column)", c.name, c.md)
			}
			continue
		}
		if got := pandasColumns(t, c.md); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: pandas metadata names %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPandasMetadataKeepsTheInputs checks an export's merge: the input's
// own pandas metadata (its index, its columns) is kept, and only the
// nullable integer columns it does not list are added.
func TestPandasMetadataKeepsTheInputs(t *testing.T) {
	type row struct {
		Text    string `parquet:"text"`
		Level   int64  `parquet:"__index_level_0__"`
		Score   *int64 `parquet:"score,optional"`
		Cluster *int64 `parquet:"neardup_cluster_id,optional"`
		Flag    *bool  `parquet:"flag,optional"`
		Size    int64  `parquet:"neardup_cluster_size"`
	}
	existing := `{"index_columns": ["__index_level_0__"], "column_indexes": [{"name": null}], "columns": [{"name": "text", "field_name": "text", "pandas_type": "unicode", "numpy_type": "object", "metadata": null}, {"name": "score", "field_name": "score", "pandas_type": "float64", "numpy_type": "float64", "metadata": null}], "pandas_version": "1.5.3"}`
	md, ok := PandasMetadata(parquet.SchemaOf(new(row)), existing)
	if !ok {
		t.Fatal("no pandas metadata")
	}
	want := map[string]string{"text": "object", "score": "float64", "neardup_cluster_id": "Int64", "flag": "boolean"}
	if got := pandasColumns(t, md); !reflect.DeepEqual(got, want) {
		t.Errorf("merged metadata names %v, want %v", got, want)
	}
	var m map[string]any
	json.Unmarshal([]byte(md), &m)
	if idx, _ := m["index_columns"].([]any); len(idx) != 1 || idx[0] != "__index_level_0__" {
		t.Errorf("the input's index lost: %v", m["index_columns"])
	}
	if m["pandas_version"] != "1.5.3" {
		t.Errorf("the input's pandas_version replaced: %v", m["pandas_version"])
	}
	if md, ok := PandasMetadata(parquet.SchemaOf(new(row)), "not json"); !ok || md != "not json" {
		t.Errorf("metadata pandas cannot parse came back as %q, %v; want it kept as it was", md, ok)
	}
}

// TestTablesTellPandas checks that a written table shard carries the
// metadata, in its footer's key-value metadata.
func TestTablesTellPandas(t *testing.T) {
	name := filepath.Join(t.TempDir(), "part-00000.parquet")
	one := int64(1) << 60
	if err := Write(context.Background(), name, []Doc{{DocID: 1, ClusterID: &one}, {DocID: 2}}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	md, ok := pf.Lookup(PandasKey)
	if !ok {
		t.Fatalf("no %q key-value metadata in a docs shard", PandasKey)
	}
	if got := pandasColumns(t, md)["cluster_id"]; got != "Int64" {
		t.Errorf("a docs shard's pandas metadata gives cluster_id %q, want Int64", got)
	}
}
