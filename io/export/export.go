// Package export writes the deduplicated crawl (runner export): the rows
// of a finished run's input files that its docs table says to keep, every
// column as it was, one output file per input file. It holds the plain
// logic the export pipeline (transforms.ExportMarks, transforms.WriteExport)
// calls: which rows a rule keeps (Rule.Decide), the packed batches of
// per-row decisions that travel from the docs shards to the writers (Pack,
// Unpack), the output names (Names), the row-by-row copy of one Parquet
// file (Copy), and the export folder's atomic publication (Prepare,
// Publish). It does not import Beam.
package export

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Drop is what --drop drops.
type Drop string

const (
	// DropDuplicates drops every clustered document but the one its
	// cluster keeps, identical copies included: the rows whose docs row
	// is not is_representative.
	DropDuplicates Drop = "duplicates"
	// DropIdentical drops only exact copies: rows with identical_to set.
	DropIdentical Drop = "identical"
	// DropNone keeps every row (but --drop-invalid's).
	DropNone Drop = "none"
)

// ParseDrop reads --drop.
func ParseDrop(v string) (Drop, error) {
	switch d := Drop(v); d {
	case DropDuplicates, DropIdentical, DropNone:
		return d, nil
	}
	return "", fmt.Errorf("want duplicates, identical or none, not %q", v)
}

// Rule is what an export drops: --drop and --drop-invalid.
type Rule struct {
	Drop        Drop
	DropInvalid bool // drop the rows whose status is empty or rejected
}

// Code is the decision for one input row, and why.
type Code byte

const (
	Unseen          Code = iota // no docs row named this input row
	Kept                        // kept, a valid document
	KeptInvalid                 // kept, with status empty or rejected
	DroppedNear                 // dropped: clustered, not the kept document, not an identical copy
	DroppedCopy                 // dropped: an identical copy (identical_to set)
	DroppedEmpty                // dropped: empty or rejected, with --drop-invalid
	DroppedRedirect             // dropped: a redirect (--redirect-column), with --drop=duplicates
	codes                       // the number of codes
	firstDropCode   = DroppedNear
)

// Name is the code's name in the export's counts.
func (c Code) Name() string {
	return [...]string{"unseen", "kept_valid", "kept_invalid", "dropped_near_duplicate", "dropped_identical", "dropped_invalid", "dropped_redirect"}[c]
}

// Keeps reports whether the row is written.
func (c Code) Keeps() bool { return c == Kept || c == KeptInvalid }

// Statuses of the docs table that mark a row neardup did not process,
// and a row that redirects elsewhere.
const (
	statusEmpty    = "empty"
	statusRejected = "rejected"
	statusRedirect = "redirect"
)

// Decide is r's decision for a row whose docs row has the given status,
// identical_to (set or not) and is_representative. A redirect's row (its
// body a crawler's stub) is a duplicate of the page it leads to, or of
// nothing worth keeping when its chain leads nowhere: --drop=duplicates
// drops it, the other rules keep it.
func (r Rule) Decide(status string, identical, representative bool) Code {
	if status == statusEmpty || status == statusRejected {
		if r.DropInvalid {
			return DroppedEmpty
		}
		return KeptInvalid
	}
	if status == statusRedirect {
		if r.Drop == DropDuplicates {
			return DroppedRedirect
		}
		return Kept
	}
	switch r.Drop {
	case DropNone:
		return Kept
	case DropIdentical:
		if identical {
			return DroppedCopy
		}
		return Kept
	}
	switch {
	case representative:
		return Kept
	case identical:
		return DroppedCopy
	}
	return DroppedNear
}

// Mark is the decision for one row of one input file (its index in the
// run's inputs), and the row's values for the added columns.
type Mark struct {
	File   int
	Row    int64
	Code   Code
	Values Values
}

var errCorrupt = errors.New("export: a corrupt batch")

// Pack packs marks into a batch, sorted by file and row: a byte saying
// whether the marks carry Values, their count, then each mark as its
// file's distance from the previous mark's (a uvarint), its row (the
// distance from the previous row when the file is the same), its code,
// and its values when withValues; about two bytes a row without values.
func Pack(marks []Mark, withValues bool) []byte {
	slices.SortFunc(marks, func(a, b Mark) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Row, b.Row))
	})
	b := make([]byte, 1, 3*len(marks)+8)
	if withValues {
		b[0] = 1
	}
	b = binary.AppendUvarint(b, uint64(len(marks)))
	file, row := 0, int64(0)
	for _, m := range marks {
		b = binary.AppendUvarint(b, uint64(m.File-file))
		if m.File != file {
			row = 0
		}
		b = binary.AppendUvarint(b, uint64(m.Row-row))
		b = append(b, byte(m.Code))
		if withValues {
			b = appendValues(b, m.Values)
		}
		file, row = m.File, m.Row
	}
	return b
}

// Unpack calls fn with every mark of a batch Pack packed, in file and
// row order; an empty batch has none.
func Unpack(b []byte, fn func(Mark) error) error {
	if len(b) == 0 {
		return nil
	}
	withValues := b[0] == 1
	if b[0] > 1 {
		return errCorrupt
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 {
		return errCorrupt
	}
	b = b[1+k:]
	var m Mark
	for range n {
		df, k := binary.Uvarint(b)
		if k <= 0 {
			return errCorrupt
		}
		b = b[k:]
		if df != 0 {
			m.File += int(df)
			m.Row = 0
		}
		dr, k := binary.Uvarint(b)
		if k <= 0 || len(b) < k+1 || Code(b[k]) >= codes {
			return errCorrupt
		}
		m.Row += int64(dr)
		m.Code = Code(b[k])
		b = b[k+1:]
		if withValues {
			var err error
			if m.Values, b, err = readValues(b); err != nil {
				return err
			}
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// Names are the output names of the input files paths (in the manifest's
// order), one each: the file's base name when every base name differs;
// else, when two inputs share one, every file's path below the deepest
// folder all inputs lie in (for /a/x/p.parquet and /a/y/p.parquet,
// x/p.parquet and y/p.parquet), so an output folder mirrors the inputs'
// folders below the one they share.
func Names(paths []string) []string {
	names := make([]string, len(paths))
	seen := map[string]bool{}
	clash := false
	for i, p := range paths {
		names[i] = p[strings.LastIndex(p, "/")+1:]
		clash = clash || seen[names[i]]
		seen[names[i]] = true
	}
	if !clash {
		return names
	}
	common := strings.Split(paths[0], "/")
	common = common[:len(common)-1]
	for _, p := range paths[1:] {
		parts := strings.Split(p, "/")
		parts = parts[:len(parts)-1]
		n := 0
		for n < len(common) && n < len(parts) && common[n] == parts[n] {
			n++
		}
		common = common[:n]
	}
	for i, p := range paths {
		names[i] = strings.Join(strings.Split(p, "/")[len(common):], "/")
	}
	return names
}

// Counts are an export's rows by decision: read (every input row), and
// one count per Code name.
type Counts map[string]int64

// Add adds c's counts to the total.
func (t Counts) Add(c Counts) {
	for k, v := range c {
		t[k] += v
	}
}

// Tally counts the codes of one file's rows.
func Tally(marks []Code) Counts {
	var by [codes]int64
	for _, c := range marks {
		by[c]++
	}
	c := Counts{"rows_read": int64(len(marks)), "rows_kept": by[Kept] + by[KeptInvalid], "rows_dropped": 0}
	for code := Kept; code < codes; code++ {
		c[code.Name()] = by[code]
		if code >= firstDropCode {
			c["rows_dropped"] += by[code]
		}
	}
	return c
}
