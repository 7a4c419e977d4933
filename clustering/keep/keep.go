// Package keep chooses the document a cluster keeps: Zhu et al.'s
// "winner", the one that stands for the others in the deduplicated corpus.
// A policy ranks every document; the kept one has the highest rank, ties
// going to the smallest doc ID, so that the choice is deterministic.
// Cluster IDs do not depend on it: they stay the smallest doc ID.
package keep

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The policies.
const (
	SmallestID  = "smallest-id"  // the smallest doc ID (Broder's representative)
	Longest     = "longest"      // the most canonical tokens
	Earliest    = "earliest"     // the earliest date
	Latest      = "latest"       // the latest date
	ShortestURL = "shortest-url" // the shortest URL
	Max         = "max"          // max:COLUMN, the largest value of a numeric input column
	Min         = "min"          // min:COLUMN, the smallest
)

// Policy is a parsed --keep.
type Policy struct {
	Kind   string
	Column string // for Max and Min
}

// Parse reads smallest-id, longest, earliest, latest, shortest-url,
// max:COLUMN or min:COLUMN; empty is smallest-id.
func Parse(s string) (Policy, error) {
	switch s {
	case "", SmallestID:
		return Policy{Kind: SmallestID}, nil
	case Longest, Earliest, Latest, ShortestURL:
		return Policy{Kind: s}, nil
	}
	if kind, col, ok := strings.Cut(s, ":"); ok && (kind == Max || kind == Min) {
		if col == "" {
			return Policy{}, fmt.Errorf("keep %q: name the column: %s:COLUMN", s, kind)
		}
		return Policy{Kind: kind, Column: col}, nil
	}
	return Policy{}, fmt.Errorf("keep %q: want smallest-id, longest, earliest, latest, shortest-url, max:COLUMN or min:COLUMN", s)
}

// String is the policy as Parse reads it.
func (p Policy) String() string {
	if p.Column != "" {
		return p.Kind + ":" + p.Column
	}
	if p.Kind == "" {
		return SmallestID
	}
	return p.Kind
}

// Ranked reports whether documents need ranks at all: every policy but
// smallest-id.
func (p Policy) Ranked() bool { return p.Kind != "" && p.Kind != SmallestID }

// NeedsColumn is the input column the policy reads, if any.
func (p Policy) NeedsColumn() string { return p.Column }

// Missing is the rank of a document without the value the policy needs
// (no date, no URL, a null score): it is kept only if no member has one.
var Missing = math.Inf(-1)

// Doc is what a policy may look at.
type Doc struct {
	Tokens   int64
	URL      string
	Date     string
	Score    float64
	HasScore bool
}

// Rank is d's rank under p: the kept document has the highest.
func (p Policy) Rank(d Doc) float64 {
	switch p.Kind {
	case Longest:
		return float64(d.Tokens)
	case Earliest, Latest:
		t, ok := ParseDate(d.Date)
		if !ok {
			return Missing
		}
		// Seconds and nanoseconds apart keep every instant of a crawl
		// exact in a float64 (53 bits: seconds to 2^53, nanoseconds
		// folded in as a fraction only breaks ties between documents of
		// the same second).
		r := float64(t.Unix()) + float64(t.Nanosecond())/1e9
		if p.Kind == Earliest {
			return -r
		}
		return r
	case ShortestURL:
		if d.URL == "" {
			return Missing
		}
		return -float64(len(d.URL))
	case Max, Min:
		if !d.HasScore || math.IsNaN(d.Score) {
			return Missing
		}
		if p.Kind == Min {
			return -d.Score
		}
		return d.Score
	}
	return 0
}

// Better reports whether (rank a, doc x) is kept over (rank b, doc y).
func Better(a float64, x uint64, b float64, y uint64) bool {
	if a != b {
		return a > b
	}
	return x < y
}

// dateLayouts are the date forms crawl dumps use: RFC 3339 (FineWeb,
// timestamps as neardup renders them), and plain dates and times.
var dateLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02", "20060102150405"}

// ParseDate reads a date column's value; ok is false when it is not one.
func ParseDate(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
