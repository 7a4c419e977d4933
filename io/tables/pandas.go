package tables

import (
	"encoding/json"
	"reflect"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// PandasKey is the key of the Parquet key-value metadata that pandas
// reads a file's dtypes from.
const PandasKey = "pandas"

// PandasMetadata returns the "pandas" key-value metadata for a file of
// schema s whose existing pandas metadata (as the input had it; "" for
// none) is existing, and false when the file needs none.
//
// pandas reads a nullable int64 column as float64 unless the file says
// otherwise (NaN for null), and float64 holds integers exactly only up to
// 2^53: a doc ID or fingerprint past it would be read as its neighbour.
// pyarrow's to_pandas, which pd.read_parquet calls, takes a column's
// dtype from this metadata when it names one of pandas' extension dtypes
// ("Int64", "Int32", "boolean", each with __from_arrow__), so those
// columns come out as nullable integers, exact, with <NA> for null. The
// metadata lists only those columns and no index (pandas then numbers
// the rows), so it is the same in every shard whatever its rows; the
// columns existing already lists are kept as they are. Other readers
// (DuckDB, polars, Spark, pyarrow's own tables) ignore it.
func PandasMetadata(s *parquet.Schema, existing string) (string, bool) {
	md := map[string]any{}
	var cols []any
	listed := map[string]bool{}
	if existing != "" {
		if err := json.Unmarshal([]byte(existing), &md); err != nil {
			return existing, true // not ours to repair: kept as the input had it
		}
		cols, _ = md["columns"].([]any)
		for _, c := range cols {
			if c, ok := c.(map[string]any); ok {
				if name, ok := c["field_name"].(string); ok {
					listed[name] = true
				} else if name, ok := c["name"].(string); ok {
					listed[name] = true
				}
			}
		}
	}
	added := false
	for _, f := range s.Fields() {
		numpy, pandas := nullableDtype(f)
		if numpy == "" || listed[f.Name()] {
			continue
		}
		cols = append(cols, map[string]any{"name": f.Name(), "field_name": f.Name(), "pandas_type": pandas, "numpy_type": numpy, "metadata": nil})
		added = true
	}
	if !added {
		return existing, existing != ""
	}
	md["columns"] = cols
	for k, v := range map[string]any{"index_columns": []any{}, "column_indexes": []any{}, "creator": map[string]any{"library": "neardup"}, "pandas_version": "2.2.0"} {
		if _, ok := md[k]; !ok {
			md[k] = v
		}
	}
	b, err := json.Marshal(md) // sorted keys: the same bytes every time
	if err != nil {
		panic(err) // only what json.Unmarshal made, and strings
	}
	return string(b), true
}

// nullableDtype is the pandas extension dtype (numpy_type) and
// pandas_type of f when it is a nullable top-level column that pandas
// would otherwise read as float64 or object: a signed integer or a
// boolean; "" for any other.
func nullableDtype(f parquet.Field) (numpy, pandas string) {
	if !f.Leaf() || !f.Optional() {
		return "", ""
	}
	// Plain integers only (parquet-go marks Go's as signed INT logical
	// types), not timestamps, decimals or unsigned ones.
	if lt := f.Type().LogicalType(); lt != nil && lt.Value != nil {
		if it, ok := lt.Value.(*format.IntType); !ok || !it.IsSigned {
			return "", ""
		}
	}
	switch f.Type().Kind() {
	case parquet.Int64:
		return "Int64", "int64"
	case parquet.Int32:
		return "Int32", "int32"
	case parquet.Boolean:
		return "boolean", "bool"
	}
	return "", ""
}

// pandasMetadata is PandasMetadata for a table of rows of type T, "" when
// it needs none.
func pandasMetadata[T any]() string {
	typ := reflect.TypeFor[T]()
	if v, ok := pandasCache.Load(typ); ok {
		return v.(string)
	}
	s, _ := PandasMetadata(parquet.SchemaOf(new(T)), "")
	pandasCache.Store(typ, s)
	return s
}

// pandasCache holds pandasMetadata by row type.
var pandasCache sync.Map
