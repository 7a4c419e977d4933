// Package keep chooses the document a cluster keeps: Zhu et al.'s
// "winner", the one that stands for the others in the deduplicated corpus.
// A policy is an ordered list of rules, each breaking the ties of the one
// before it (Zhu et al. rank by popularity, then prefer static URLs, then
// shorter ones, or a market's hosts); every rule gives a document one
// number, and a policy gives it a Rank, the rules' numbers in order. The
// kept document has the highest Rank, compared rule by rule, ties going to
// the smallest doc ID, so that the choice is deterministic. Cluster IDs do
// not depend on it: they stay the smallest doc ID.
package keep

import (
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
)

// The rules.
const (
	SmallestID  = "smallest-id"  // the smallest doc ID (Broder's representative); alone only
	Longest     = "longest"      // the most canonical tokens
	Earliest    = "earliest"     // the earliest date
	Latest      = "latest"       // the latest date
	ShortestURL = "shortest-url" // the shortest URL
	StaticURL   = "static-url"   // a URL without query string or session parameter
	HostSuffix  = "host-suffix"  // host-suffix:S, a host ending in S (a market's hosts)
	Max         = "max"          // max:COLUMN, the largest value of a numeric input column
	Min         = "min"          // min:COLUMN, the smallest
)

// Rule is one rule of a policy.
type Rule struct {
	Kind string
	Arg  string // the column of Max and Min, the suffix of HostSuffix
}

// Policy is a parsed --keep: its rules in order. No rules is smallest-id.
type Policy struct {
	Rules []Rule
}

// Parse reads a comma-separated list of rules: longest, earliest, latest,
// shortest-url, static-url, host-suffix:S, max:COLUMN or min:COLUMN, or
// smallest-id alone; empty is smallest-id. At most one rule reads an input
// column (max: or min:).
func Parse(s string) (Policy, error) {
	if s == "" || s == SmallestID {
		return Policy{}, nil
	}
	var p Policy
	columns := 0
	for _, item := range strings.Split(s, ",") {
		r, err := parseRule(strings.TrimSpace(item))
		if err != nil {
			return Policy{}, fmt.Errorf("keep %q: %w", s, err)
		}
		for _, q := range p.Rules {
			if q == r {
				return Policy{}, fmt.Errorf("keep %q: %s is listed twice", s, r)
			}
		}
		if r.Kind == Max || r.Kind == Min {
			columns++
		}
		p.Rules = append(p.Rules, r)
	}
	if columns > 1 {
		return Policy{}, fmt.Errorf("keep %q: at most one rule may read an input column (max: or min:)", s)
	}
	return p, nil
}

func parseRule(s string) (Rule, error) {
	switch s {
	case Longest, Earliest, Latest, ShortestURL, StaticURL:
		return Rule{Kind: s}, nil
	case SmallestID:
		return Rule{}, fmt.Errorf("smallest-id breaks every tie already: give it alone, or leave it out of a list")
	}
	kind, arg, ok := strings.Cut(s, ":")
	switch {
	case ok && (kind == Max || kind == Min):
		if arg == "" {
			return Rule{}, fmt.Errorf("name the column: %s:COLUMN", kind)
		}
		return Rule{Kind: kind, Arg: arg}, nil
	case ok && kind == HostSuffix:
		arg = strings.ToLower(strings.TrimSuffix(arg, "."))
		if arg == "" || arg == "." {
			return Rule{}, fmt.Errorf("name the hosts' suffix: host-suffix:.uk, host-suffix:example.com")
		}
		return Rule{Kind: kind, Arg: arg}, nil
	}
	return Rule{}, fmt.Errorf("rule %q: want longest, earliest, latest, shortest-url, static-url, host-suffix:S, max:COLUMN or min:COLUMN (a list is comma-separated), or smallest-id alone", s)
}

// String is the rule as Parse reads it.
func (r Rule) String() string {
	if r.Arg != "" {
		return r.Kind + ":" + r.Arg
	}
	return r.Kind
}

// String is the policy as Parse reads it.
func (p Policy) String() string {
	if len(p.Rules) == 0 {
		return SmallestID
	}
	s := make([]string, len(p.Rules))
	for i, r := range p.Rules {
		s[i] = r.String()
	}
	return strings.Join(s, ",")
}

// Ranked reports whether documents need ranks at all: every policy but
// smallest-id.
func (p Policy) Ranked() bool { return len(p.Rules) > 0 }

// NeedsColumn is the input column the policy reads, if any.
func (p Policy) NeedsColumn() string {
	for _, r := range p.Rules {
		if r.readsColumn() {
			return r.Arg
		}
	}
	return ""
}

func (r Rule) readsColumn() bool { return r.Kind == Max || r.Kind == Min }

// Missing is a rule's number for a document without the value the rule
// needs (no date, no URL, a null score): below every document that has one.
var Missing = math.Inf(-1)

// Doc is what a policy may look at.
type Doc struct {
	Tokens   int64
	URL      string
	Date     string
	Score    float64
	HasScore bool
}

// Rank is a document's rank under a policy: one number per rule, in the
// policy's order. Nil under smallest-id.
type Rank []float64

// Rank is d's rank under p.
func (p Policy) Rank(d Doc) Rank {
	if len(p.Rules) == 0 {
		return nil
	}
	r := make(Rank, len(p.Rules))
	for i, rule := range p.Rules {
		r[i] = rule.rank(d)
	}
	return r
}

// unknown marks a rule's number that a Partial rank leaves to the other
// source (NaN: no rule gives it, see Rule.rank).
var unknown = math.NaN()

// Partial is d's rank under p with only the rules that read the input
// column (column true) or only the others (column false) filled in, the
// rest unknown: recluster ranks by the docs table it reads and by the
// input's column apart, and Merge joins the two.
func (p Policy) Partial(d Doc, column bool) Rank {
	r := p.Rank(d)
	for i, rule := range p.Rules {
		if rule.readsColumn() != column {
			r[i] = unknown
		}
	}
	return r
}

// Merge joins two Partial ranks of one document: each rule's number from
// the one that has it, Missing where neither does.
func Merge(a, b Rank) Rank {
	n := max(len(a), len(b))
	r := make(Rank, n)
	for i := range r {
		x, y := at(a, i), at(b, i)
		switch {
		case !math.IsNaN(x):
			r[i] = x
		case !math.IsNaN(y):
			r[i] = y
		default:
			r[i] = Missing
		}
	}
	return r
}

// at is r's i-th number; past its end (a rank not given), unknown.
func at(r Rank, i int) float64 {
	if i < len(r) {
		return r[i]
	}
	return unknown
}

// rank is the rule's number for d: higher is kept. Never NaN.
func (r Rule) rank(d Doc) float64 {
	switch r.Kind {
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
		s := float64(t.Unix()) + float64(t.Nanosecond())/1e9
		if r.Kind == Earliest {
			return -s
		}
		return s
	case ShortestURL:
		if d.URL == "" {
			return Missing
		}
		return -float64(len(d.URL))
	case StaticURL:
		static, ok := Static(d.URL)
		return flag(static, ok)
	case HostSuffix:
		host, ok := Host(d.URL)
		return flag(ok && HasSuffix(host, r.Arg), ok)
	case Max, Min:
		if !d.HasScore || math.IsNaN(d.Score) {
			return Missing
		}
		if r.Kind == Min {
			return -d.Score
		}
		return d.Score
	}
	return 0
}

// flag is a yes-or-no rule's number: 1 for yes, 0 for no, Missing when
// the document has no URL to judge.
func flag(yes, known bool) float64 {
	switch {
	case !known:
		return Missing
	case yes:
		return 1
	}
	return 0
}

// Better reports whether (rank a, doc x) is kept over (rank b, doc y):
// the first rule whose numbers differ decides, then the smaller doc ID.
// A rank shorter than the other (none given) counts 0 for the rules it
// lacks.
func Better(a Rank, x uint64, b Rank, y uint64) bool {
	for i := range max(len(a), len(b)) {
		p, q := 0.0, 0.0
		if i < len(a) {
			p = a[i]
		}
		if i < len(b) {
			q = b[i]
		}
		if p != q {
			return p > q
		}
	}
	return x < y
}

// sessionKeys are the parameter names of session IDs that crawlers see in
// URLs (Java, PHP, ASP.NET and generic ones), lower case.
var sessionKeys = []string{"jsessionid", "phpsessid", "aspsessionid", "sessionid", "session_id", "sid", "sessid"}

// Static reports whether u is a static URL in Zhu et al.'s sense: no query
// string and no session-like parameter in its path (";jsessionid=..." and
// its kind). ok is false when u is empty or not an absolute URL.
func Static(u string) (static, ok bool) {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || p.Host == "" {
		return false, false
	}
	if p.RawQuery != "" || p.ForceQuery {
		return false, true
	}
	path := strings.ToLower(p.EscapedPath())
	for _, seg := range strings.Split(path, "/") {
		_, params, found := strings.Cut(seg, ";")
		if !found {
			continue
		}
		for _, kv := range strings.Split(params, ";") {
			k, _, _ := strings.Cut(kv, "=")
			for _, s := range sessionKeys {
				if k == s {
					return false, true
				}
			}
		}
	}
	return true, true
}

// Host is u's host name, lower case, without port or trailing dot; ok is
// false when u is empty or not an absolute URL.
func Host(u string) (string, bool) {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || p.Hostname() == "" {
		return "", false
	}
	return strings.TrimSuffix(strings.ToLower(p.Hostname()), "."), true
}

// HasSuffix reports whether host ends in suffix at a label boundary:
// ".uk" and "uk" both match "news.bbc.co.uk"; "example.com" matches
// "example.com" and "www.example.com", not "badexample.com".
func HasSuffix(host, suffix string) bool {
	suffix = strings.TrimPrefix(suffix, ".")
	return host == suffix || strings.HasSuffix(host, "."+suffix)
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
