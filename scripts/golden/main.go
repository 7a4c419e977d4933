// Command golden prints a digest of every table of a finished neardup
// output folder, one line per table:
//
//	TABLE ROWS SHA256
//
// so that scripts/golden/check.sh can tell whether a change to the code
// changed any row a run writes. It reads the Parquet files generically
// (parquet-go rows, no neardup row types, no Beam) because the code it
// guards is what is being rewritten: a check that imported neardup's
// packages would move with them and could not catch their mistakes.
//
//	go run ./scripts/golden --strip "$PWD/" /tmp/neardup-out
//	go run ./scripts/golden --dump docs /tmp/neardup-out   # the rows behind a digest
//
// A table's digest covers its rows as a multiset: shards, row groups and
// row order are how a runner happened to split the work, not what the
// table says. Each table also gets a TABLE:schema line (leaf columns,
// their types and nesting), so a changed column type or nullability is
// named as such instead of showing up only as every row differing. The
// manifest's "settings" object gets a manifest.settings line; the rest of
// the manifest is left out because it holds timings, the output path,
// runner metrics and versions that change from run to run.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// stripFlag collects the repeatable --strip.
type stripFlag []string

func (s *stripFlag) String() string     { return strings.Join(*s, ",") }
func (s *stripFlag) Set(v string) error { *s = append(*s, v); return nil }

func main() {
	var strips stripFlag
	flag.Var(&strips, "strip", "a leading `PREFIX` of string values to replace with <root> (repeatable; the longest match wins)")
	dump := flag.String("dump", "", "print the sorted canonical rows of this `TABLE` (or manifest.settings) instead of the digests")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: golden [--strip PREFIX]... [--dump TABLE] OUTPUT_DIR\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	// Longest first, so that a prefix nested in another (the shared data
	// folder under the repository, say) is stripped whole.
	slices.SortStableFunc(strips, func(a, b string) int { return len(b) - len(a) })
	d := digester{strips: strips}
	if err := d.run(os.Stdout, flag.Arg(0), *dump); err != nil {
		fmt.Fprintln(os.Stderr, "golden:", err)
		os.Exit(1)
	}
}

type digester struct {
	strips []string
}

// strip makes a string independent of where the repository and the shared
// data are checked out.
func (d digester) strip(s string) string {
	for _, p := range d.strips {
		if p != "" && strings.HasPrefix(s, p) {
			return "<root>" + s[len(p):]
		}
	}
	return s
}

func (d digester) run(w io.Writer, dir, dump string) error {
	// An output without _SUCCESS is a failed or unfinished run; digesting
	// it would record whatever half of the tables happened to be there.
	if _, err := os.Stat(filepath.Join(dir, "_SUCCESS")); err != nil {
		return fmt.Errorf("%s is not a finished neardup output: %w", dir, err)
	}
	tables, err := findTables(dir)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if dump != "" && dump != t.name && dump != t.name+":schema" {
			continue
		}
		rows, schema, err := d.readTable(t.files)
		if err != nil {
			return fmt.Errorf("table %s: %w", t.name, err)
		}
		switch dump {
		case "":
			fmt.Fprintf(w, "%s %d %s\n", t.name+":schema", len(schema), digest(schema))
			fmt.Fprintf(w, "%s %d %s\n", t.name, len(rows), digest(rows))
		case t.name:
			printLines(w, rows)
		default:
			printLines(w, schema)
		}
	}
	settings, ok, err := d.settings(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return err
	}
	if ok {
		switch dump {
		case "":
			fmt.Fprintf(w, "manifest.settings %d %s\n", len(settings), digest(settings))
		case "manifest.settings":
			printLines(w, settings)
		}
	}
	return nil
}

type table struct {
	name  string
	files []string
}

// findTables lists the tables of an output folder: each folder of part
// files is a table (a top-level .parquet file would be one too). Names
// starting with _ or . are the runner's bookkeeping (_SUCCESS,
// _temporary), not tables.
func findTables(dir string) ([]table, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var tables []table
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, name)
		switch {
		case e.IsDir():
			files, err := filepath.Glob(filepath.Join(path, "*.parquet"))
			if err != nil {
				return nil, err
			}
			tables = append(tables, table{name: name, files: files})
		case strings.HasSuffix(name, ".parquet"):
			tables = append(tables, table{name: strings.TrimSuffix(name, ".parquet"), files: []string{path}})
		}
	}
	return tables, nil // os.ReadDir sorts by name
}

// column is what rendering needs of one leaf column.
type column struct {
	name     string
	repeated bool
	schema   string
}

// readTable returns the table's rows, each rendered canonically, and its
// schema, one line per leaf column; both sorted.
func (d digester) readTable(files []string) (rows, schema []string, err error) {
	seen := map[string]bool{}
	for _, path := range files {
		cols, err := d.readFile(path, func(row string) { rows = append(rows, row) })
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		// The shards of one table should share a schema; if they ever do
		// not, every distinct column description ends up in the digest.
		for _, c := range cols {
			if !seen[c.schema] {
				seen[c.schema] = true
				schema = append(schema, c.schema)
			}
		}
	}
	slices.Sort(rows)
	slices.Sort(schema)
	return rows, schema, nil
}

func (d digester) readFile(path string, emit func(string)) ([]column, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return nil, err
	}
	s := pf.Schema()
	var cols []column
	for _, path := range s.Columns() {
		leaf, ok := s.Lookup(path...)
		if !ok {
			return nil, fmt.Errorf("column %v not in its own schema", path)
		}
		name := strings.Join(path, ".")
		typ := leaf.Node.Type()
		logical := "-"
		if lt := typ.LogicalType(); lt != nil {
			logical = lt.String()
		}
		cols = append(cols, column{
			name:     name,
			repeated: leaf.MaxRepetitionLevel > 0,
			schema: fmt.Sprintf("%s %s %s rep=%d def=%d", name, typ.Kind(), logical,
				leaf.MaxRepetitionLevel, leaf.MaxDefinitionLevel),
		})
		if leaf.ColumnIndex != len(cols)-1 {
			return nil, fmt.Errorf("column %s has index %d, expected %d", name, leaf.ColumnIndex, len(cols)-1)
		}
	}
	// Columns by name, not by position: moving a field in a Go struct
	// reorders the Parquet columns without changing what the table says.
	order := make([]int, len(cols))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(cols[a].name, cols[b].name) })

	buf := make([]parquet.Row, 256)
	vals := make([][]parquet.Value, len(cols))
	var sb strings.Builder
	for _, rg := range pf.RowGroups() {
		rr := rg.Rows()
		for {
			n, err := rr.ReadRows(buf)
			for _, row := range buf[:n] {
				for i := range vals {
					vals[i] = vals[i][:0]
				}
				for _, v := range row {
					vals[v.Column()] = append(vals[v.Column()], v)
				}
				sb.Reset()
				for k, i := range order {
					if k > 0 {
						sb.WriteByte(' ')
					}
					sb.WriteString(cols[i].name)
					sb.WriteByte('=')
					d.renderColumn(&sb, cols[i], vals[i])
				}
				emit(sb.String())
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				rr.Close()
				return nil, err
			}
		}
		if err := rr.Close(); err != nil {
			return nil, err
		}
	}
	return cols, nil
}

// renderColumn writes one row's values of one leaf column. A repeated
// column (a list, such as a sketch) is written as [v,v,...] with each
// value's repetition and definition levels when they are not the plain
// ones, so an empty list, a null list and a list holding a null differ.
func (d digester) renderColumn(sb *strings.Builder, c column, vs []parquet.Value) {
	if !c.repeated {
		for _, v := range vs { // one value
			sb.WriteString(d.render(v))
		}
		return
	}
	sb.WriteByte('[')
	for k, v := range vs {
		if k > 0 {
			sb.WriteByte(',')
		}
		if v.IsNull() || v.RepetitionLevel() > 1 {
			fmt.Fprintf(sb, "r%dd%d:", v.RepetitionLevel(), v.DefinitionLevel())
		}
		sb.WriteString(d.render(v))
	}
	sb.WriteByte(']')
}

// render writes a value so that two values render the same only when
// they are the same: floats in their shortest exact form (every bit
// counts), strings quoted (a string "null" is not a null).
func (d digester) render(v parquet.Value) string {
	if v.IsNull() {
		return "null"
	}
	switch v.Kind() {
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean())
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.Float:
		return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case parquet.ByteArray:
		return strconv.Quote(d.strip(string(v.ByteArray())))
	case parquet.FixedLenByteArray:
		return "0x" + hex.EncodeToString(v.ByteArray())
	default: // INT96, which neardup does not write
		return v.String()
	}
}

// settings returns the manifest's "settings" object as sorted key=value
// lines, without the keys that hold times, durations, paths or hosts
// (none do today; the filter keeps a later addition from making the
// digests depend on the clock or the machine).
func (d digester) settings(path string) ([]string, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var m struct {
		Settings map[string]json.RawMessage `json:"settings"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, err)
	}
	if m.Settings == nil {
		return nil, false, nil
	}
	var lines []string
	for k, raw := range m.Settings {
		if volatileKey(k) {
			continue
		}
		// Settings are strings today; anything else is kept as its JSON.
		val := string(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			val = strconv.Quote(d.strip(s))
		}
		lines = append(lines, k+"="+val)
	}
	slices.Sort(lines)
	return lines, true, nil
}

// volatileKey reports whether a settings key names something that changes
// from run to run or machine to machine rather than what the run computed.
// The sweep keys are dates the check fixes with --sweep-date, so they stay.
func volatileKey(k string) bool {
	k = strings.ToLower(k)
	for _, bad := range []string{"time", "_at", "_ms", "second", "duration", "elapsed", "path", "host", "output", "dir", "from"} {
		if strings.Contains(k, bad) {
			return true
		}
	}
	return false
}

// digest is the SHA-256 of the lines, each ended by a newline, so that
// the digest of sorted lines is that of the sorted text.
func digest(lines []string) string {
	h := sha256.New()
	for _, l := range lines {
		io.WriteString(h, l)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func printLines(w io.Writer, lines []string) {
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}
