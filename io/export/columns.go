package export

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Column is a column an export may add to the input's (--add-columns):
// the docs table's value for the row, under the name Prefix+Column.
type Column string

const (
	ColDocID       Column = "doc_id"              // the row's doc ID
	ColClusterID   Column = "cluster_id"          // its cluster, null when alone
	ColClusterSize Column = "cluster_size"        // documents in its cluster, identical copies included; 1 when alone
	ColKeptDocID   Column = "kept_doc_id"         // its cluster's kept document (itself when kept or alone); null when empty or rejected
	ColResemblance Column = "resemblance_to_kept" // estimated resemblance to the kept document; null when empty or rejected
)

// Columns are the columns an export can add, in the order they are added.
var Columns = []Column{ColDocID, ColClusterID, ColClusterSize, ColKeptDocID, ColResemblance}

// DefaultPrefix begins the added columns' names.
const DefaultPrefix = "neardup_"

// ParseColumns reads --add-columns: none (or empty), all, or a
// comma-separated list of Columns. The result is in Columns' order.
func ParseColumns(v string) ([]Column, error) {
	if v == "" || v == "none" {
		return nil, nil
	}
	want := map[Column]bool{}
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if s == "all" {
			return Columns, nil
		}
		c := Column(s)
		if !slices.Contains(Columns, c) {
			return nil, fmt.Errorf("want none, all or a list of %s, not %q", joinColumns(Columns), s)
		}
		want[c] = true
	}
	var cols []Column
	for _, c := range Columns {
		if want[c] {
			cols = append(cols, c)
		}
	}
	return cols, nil
}

// FormatColumns is ParseColumns' inverse.
func FormatColumns(cols []Column) string {
	if len(cols) == 0 {
		return "none"
	}
	return joinColumns(cols)
}

func joinColumns(cols []Column) string {
	s := make([]string, len(cols))
	for i, c := range cols {
		s[i] = string(c)
	}
	return strings.Join(s, ",")
}

// Added is what an export adds to each row: the columns (none: the
// input's schema exactly) and the prefix of their names.
type Added struct {
	Columns []Column
	Prefix  string
}

// Needs reports whether c is among the added columns.
func (a Added) Needs(c Column) bool { return slices.Contains(a.Columns, c) }

// Values are one row's docs values, for the added columns.
type Values struct {
	DocID       int64
	ClusterID   int64 // when HasCluster
	ClusterSize int64
	KeptDocID   int64   // when HasKept
	Resemblance float64 // when HasResemblance
	Has         byte    // HasCluster | HasKept | HasResemblance
}

// The bits of Values.Has.
const (
	HasCluster = 1 << iota
	HasKept
	HasResemblance
)

// addedNode is the schema of the added column c.
func addedNode(c Column) parquet.Node {
	switch c {
	case ColClusterID, ColKeptDocID:
		return parquet.Optional(parquet.Int(64))
	case ColResemblance:
		return parquet.Optional(parquet.Leaf(parquet.DoubleType))
	}
	return parquet.Int(64)
}

// field is a named node: a field of a group.
type field struct {
	parquet.Node
	name string
}

func (f field) Name() string                           { return f.name }
func (f field) Value(base reflect.Value) reflect.Value { return reflect.Value{} }

// appended is a group with fields appended after its own, in that order
// (parquet.Group would sort them by name).
type appended struct {
	parquet.Node
	fields []parquet.Field
}

func (g appended) Fields() []parquet.Field { return g.fields }

// Schema is the output schema for an input file's schema: the input's,
// or the input's with the added columns after its own. It refuses an
// added column whose name the input already has.
func (a Added) Schema(in *parquet.Schema) (*parquet.Schema, error) {
	if len(a.Columns) == 0 {
		return in, nil
	}
	fields := append([]parquet.Field(nil), in.Fields()...)
	for _, c := range a.Columns {
		name := a.Prefix + string(c)
		for _, f := range in.Fields() {
			if f.Name() == name {
				return nil, fmt.Errorf("the input has a column %s already: choose another --column-prefix than %q", name, a.Prefix)
			}
		}
		fields = append(fields, field{addedNode(c), name})
	}
	return parquet.NewSchema(in.Name(), appended{in, fields}), nil
}

// Append appends v's values for the added columns to row, an input row
// of leaves leaves (the added columns' leaves follow the input's).
func (a Added) Append(row parquet.Row, leaves int, v Values) parquet.Row {
	optional := func(col int, set bool, x parquet.Value) parquet.Value {
		if !set {
			return parquet.NullValue().Level(0, 0, col)
		}
		return x.Level(0, 1, col)
	}
	for i, c := range a.Columns {
		col := leaves + i
		switch c {
		case ColDocID:
			row = append(row, parquet.Int64Value(v.DocID).Level(0, 0, col))
		case ColClusterID:
			row = append(row, optional(col, v.Has&HasCluster != 0, parquet.Int64Value(v.ClusterID)))
		case ColClusterSize:
			row = append(row, parquet.Int64Value(v.ClusterSize).Level(0, 0, col))
		case ColKeptDocID:
			row = append(row, optional(col, v.Has&HasKept != 0, parquet.Int64Value(v.KeptDocID)))
		case ColResemblance:
			row = append(row, optional(col, v.Has&HasResemblance != 0, parquet.DoubleValue(v.Resemblance)))
		}
	}
	return row
}

// appendValues packs v (export.Pack's batches with values).
func appendValues(b []byte, v Values) []byte {
	b = append(b, v.Has)
	b = binary.AppendVarint(b, v.DocID)
	if v.Has&HasCluster != 0 {
		b = binary.AppendVarint(b, v.ClusterID)
	}
	b = binary.AppendVarint(b, v.ClusterSize)
	if v.Has&HasKept != 0 {
		b = binary.AppendVarint(b, v.KeptDocID)
	}
	if v.Has&HasResemblance != 0 {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Resemblance))
	}
	return b
}

// readValues unpacks what appendValues packed, and the bytes after it.
func readValues(b []byte) (Values, []byte, error) {
	var v Values
	if len(b) == 0 {
		return v, nil, errCorrupt
	}
	v.Has, b = b[0], b[1:]
	var ok bool
	read := func(set bool, x *int64) {
		if set && ok {
			*x, b, ok = readVarint(b)
		}
	}
	ok = true
	read(true, &v.DocID)
	read(v.Has&HasCluster != 0, &v.ClusterID)
	read(true, &v.ClusterSize)
	read(v.Has&HasKept != 0, &v.KeptDocID)
	if ok && v.Has&HasResemblance != 0 {
		if len(b) < 8 {
			return v, nil, errCorrupt
		}
		v.Resemblance = math.Float64frombits(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	if !ok {
		return v, nil, errCorrupt
	}
	return v, b, nil
}

func readVarint(b []byte) (int64, []byte, bool) {
	x, k := binary.Varint(b)
	if k <= 0 {
		return 0, b, false
	}
	return x, b[k:], true
}
