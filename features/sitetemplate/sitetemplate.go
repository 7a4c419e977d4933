// Package sitetemplate finds the shingles that make up a web site's
// template: the navigation, headers and footers that every page of a site
// repeats. Broder et al. drop shingles common to more than 1000 documents
// of the whole crawl, which catches the boilerplate of the largest sites
// only; a site of a few hundred pages whose sidebar is most of each page
// makes all its pages look alike. Spec applies the same idea per site: a
// shingle held by more than a share of one site's pages is that site's
// template, and is dropped from those pages' sketches.
//
// A site is the host of a page's URL, lowercased, without port or
// userinfo ("https://Docs.Python.org:443/3/x.html" is "docs.python.org";
// "www.example.com" and "example.com" are two sites). Pages without a URL
// or a host belong to no site and keep their shingles.
//
// The package is the rule only; transforms.SiteTemplates applies it over a
// crawl, counting per (site, shingle) on all workers.
package sitetemplate

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// Defaults of Spec's fields, as --template-share and --template-min-pages.
const (
	DefaultShare    = 0.5
	DefaultMinPages = 20
)

// Spec says which shingles are a site's template. The zero Spec finds none.
type Spec struct {
	// Share: a shingle in more than Share of a site's pages is template.
	Share float64
	// MinPages: sites with fewer pages have no template (a pair of pages
	// sharing text on a three-page site is more likely a duplicate than
	// a template).
	MinPages int
}

// On reports whether s finds templates at all.
func (s Spec) On() bool { return s.Share > 0 }

// Validate checks s's fields.
func (s Spec) Validate() error {
	if s == (Spec{}) {
		return nil
	}
	if s.Share >= 1 || s.Share <= 0 {
		return fmt.Errorf("template share must be in (0, 1), not %v", s.Share)
	}
	if s.MinPages < 2 {
		return fmt.Errorf("template min pages must be at least 2, not %d", s.MinPages)
	}
	return nil
}

// String is s as the manifest records it.
func (s Spec) String() string {
	if !s.On() {
		return "off"
	}
	return "share:" + strconv.FormatFloat(s.Share, 'g', -1, 64) + ",min-pages:" + strconv.Itoa(s.MinPages)
}

// IsTemplate reports whether a shingle held by docs of a site's pages is
// part of the site's template.
func (s Spec) IsTemplate(docs, pages int) bool {
	return s.On() && pages >= s.MinPages && float64(docs) > s.Share*float64(pages)
}

// MayBeTemplate reports whether a shingle held by docs pages of one site
// can be template on some site big enough to have one: docs must exceed
// Share × MinPages. It lets the counting step pass on only candidates,
// before the site's page count is known.
func (s Spec) MayBeTemplate(docs int) bool {
	return s.On() && float64(docs) > s.Share*float64(s.MinPages)
}

// Site returns the site of a page's URL: its host, lowercased, without
// port, or "" when the URL has none. URLs without a scheme
// ("example.com/a") are read as if they had one.
func Site(rawURL string) string {
	u := strings.TrimSpace(rawURL)
	if u == "" {
		return ""
	}
	if !strings.Contains(u, "://") {
		u = "http://" + strings.TrimPrefix(u, "//")
	}
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.ToLower(p.Hostname()), ".")
}

// Page is one page as Find sees it: its site and its shingles (a set: no
// value twice).
type Page struct {
	Site   string
	Values []uint64
}

// Find is the rule applied in memory, the reference the distributed
// transform is tested against: for every site, the shingles that are its
// template, sorted.
func (s Spec) Find(pages []Page) map[string][]uint64 {
	count := map[string]map[uint64]int{}
	npages := map[string]int{}
	for _, p := range pages {
		if p.Site == "" {
			continue
		}
		npages[p.Site]++
		c := count[p.Site]
		if c == nil {
			c = map[uint64]int{}
			count[p.Site] = c
		}
		for _, v := range p.Values {
			c[v]++
		}
	}
	out := map[string][]uint64{}
	for site, c := range count {
		for v, n := range c {
			if s.IsTemplate(n, npages[site]) {
				out[site] = append(out[site], v)
			}
		}
		if vs := out[site]; vs != nil {
			slices.Sort(vs)
		}
	}
	return out
}

// Drop removes from values those in template (a set), keeping the order,
// and reports how many it removed. values is modified in place.
func Drop(values []uint64, template func(uint64) bool) ([]uint64, int) {
	kept := values[:0]
	for _, v := range values {
		if !template(v) {
			kept = append(kept, v)
		}
	}
	return kept, len(values) - len(kept)
}
