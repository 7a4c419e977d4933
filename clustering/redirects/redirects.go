// Package redirects follows chains of redirects to the documents they end
// at: Zhu et al.'s redirection-based duplicates, "one web page redirects to
// another, either through permanent or temporary HTTP redirect". A row of
// the crawl that redirects (its redirect column set) is not compared by
// content; it belongs to the cluster of the page its chain ends at, in the
// input.
//
// URLs are matched by their fingerprints. Every row with a URL claims it
// (a Claim); where several rows share a URL, the row of the latest sweep
// wins (a page crawled again is what its latest crawl found: Zhu et al.'s
// cases of a page that changed or now redirects), then a row with content
// over a redirect, a redirect over an empty row, then the smallest doc ID. A
// redirect starts at the URL it points to (relative ones resolved against
// its own) and each Step looks up the URL reached: a content row ends the
// chain there; a redirect moves it on. A chain ends unresolved when a URL
// is claimed by no row (Outside), by an empty row only (ToEmpty), comes
// back to a URL it passed (Cycle: a page redirecting to itself included),
// or takes more than MaxHops redirects (TooLong). Steps are independent:
// the pipeline runs one round of them per hop, each redirect at the
// partition of the URL it has reached, so that no worker holds all URLs.
package redirects

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

// MaxHops is the longest chain followed: chains of up to MaxHops redirects
// resolve exactly; longer ones end TooLong. Browsers stop at 20; crawlers
// at 5 to 10.
const MaxHops = 8

// Kinds of URL owners, in the order they win a URL.
const (
	Content  uint8 = 1 // a row with content (sketched, or too short to be)
	Redirect uint8 = 2 // a row redirecting elsewhere
	Empty    uint8 = 3 // a row without content (empty or rejected)
)

// Outcomes of a chain.
const (
	Underway uint8 = iota // not ended yet
	Joined                // ended at a document with content: Target
	Outside               // at a URL no row of the input has
	ToEmpty               // at a URL only empty or rejected rows have
	Cycle                 // back at a URL it passed
	TooLong               // more than MaxHops redirects
)

// Reason is the docs table's reason for a redirect whose chain ended
// without a document (an outcome other than Joined), hops redirects on.
func Reason(outcome uint8, hops int) string {
	switch outcome {
	case Outside:
		return fmt.Sprintf("redirect target not in the input (after %d redirects)", hops)
	case ToEmpty:
		return fmt.Sprintf("redirect target has no content in the input (after %d redirects)", hops)
	case Cycle:
		return fmt.Sprintf("redirect cycle (back after %d redirects)", hops)
	case TooLong:
		return fmt.Sprintf("redirect chain longer than %d redirects", MaxHops)
	}
	return ""
}

// Tally is the manifest count of each outcome.
var Tally = map[uint8]string{
	Joined: "redirects_joined", Outside: "redirects_outside", ToEmpty: "redirects_to_empty",
	Cycle: "redirect_cycles", TooLong: "redirects_too_long",
}

// Target is the URL a row at own redirects to when its redirect column
// holds to: to itself when absolute, resolved against own when relative
// (a Location header may be "/new-path"); "" when to is empty.
func Target(own, to string) string {
	to = strings.TrimSpace(to)
	if to == "" {
		return ""
	}
	t, err := url.Parse(to)
	if err != nil || t.IsAbs() {
		return to
	}
	base, err := url.Parse(own)
	if err != nil || !base.IsAbs() {
		return to
	}
	return base.ResolveReference(t).String()
}

// Claim is the docs row d's claim on its URL, its fingerprints (URL,
// Next) left to the caller: its doc ID, sweep and kind by its status.
func Claim(d *tables.Doc) packed.URLOwner {
	o := packed.URLOwner{Doc: uint64(d.DocID), Sweep: SweepDay(d.Sweep), Kind: Empty}
	switch d.Status {
	case tables.StatusRedirect:
		o.Kind = Redirect
	case tables.StatusOK, tables.StatusTooShort:
		o.Kind = Content
	}
	return o
}

// SweepDay is the sweep date (YYYY-MM-DD) as days since 1970-01-01, which
// order sweeps as their dates do; 0 for none.
func SweepDay(sweep string) uint32 {
	t, err := time.Parse(time.DateOnly, sweep)
	if err != nil || t.Unix() < 0 {
		return 0
	}
	return uint32(t.Unix() / 86400)
}

// Wins reports whether owner a wins its URL over b: the later sweep, then
// a content row over a redirect, a redirect over an empty row, then the
// smaller doc ID.
func Wins(a, b packed.URLOwner) bool {
	if a.Sweep != b.Sweep {
		return a.Sweep > b.Sweep
	}
	if a.Kind != b.Kind {
		return a.Kind < b.Kind
	}
	return a.Doc < b.Doc
}

// Owners keeps, of owners, the winner of each URL, sorted by URL.
func Owners(owners []packed.URLOwner) []packed.URLOwner {
	slices.SortFunc(owners, func(a, b packed.URLOwner) int {
		switch {
		case a.URL != b.URL:
			if a.URL < b.URL {
				return -1
			}
			return 1
		case Wins(a, b):
			return -1
		case Wins(b, a):
			return 1
		}
		return 0
	})
	return slices.CompactFunc(owners, func(a, b packed.URLOwner) bool { return a.URL == b.URL })
}

// Lookup finds the owner of url in owners (as Owners returns them).
func Lookup(owners []packed.URLOwner, url uint64) (packed.URLOwner, bool) {
	k, ok := slices.BinarySearchFunc(owners, url, func(o packed.URLOwner, u uint64) int {
		switch {
		case o.URL < u:
			return -1
		case o.URL > u:
			return 1
		}
		return 0
	})
	if !ok {
		return packed.URLOwner{}, false
	}
	return owners[k], true
}

// Start is a redirect at the beginning of its chain: source, at the URL
// whose fingerprint is own, pointing at the URL whose fingerprint is to.
func Start(source, own, to uint64) packed.RedirectHop {
	return packed.RedirectHop{Source: source, At: to, Visited: []uint64{own}}
}

// Step follows h one URL on: owner is the owner of h.At (ok false when no
// row has it). It returns h ended (Outcome set) or moved to the next URL.
func Step(h packed.RedirectHop, owner packed.URLOwner, ok bool) packed.RedirectHop {
	switch {
	case slices.Contains(h.Visited, h.At):
		h.Outcome = Cycle
	case !ok:
		h.Outcome = Outside
	case owner.Kind == Content:
		h.Outcome, h.Target = Joined, owner.Doc
	case owner.Kind == Empty:
		h.Outcome = ToEmpty
	case len(h.Visited) >= MaxHops:
		h.Outcome = TooLong
	default:
		h.Visited = append(slices.Clip(h.Visited), h.At)
		h.At = owner.Next
	}
	return h
}

// Hops is how many redirects h has followed: to where it ended, or so far.
func Hops(h packed.RedirectHop) int { return len(h.Visited) }
