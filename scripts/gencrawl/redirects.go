package main

import (
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
)

// RedirectRow is a row of the redirect crawl (testdata/redirects): the
// sample's columns a run reads, and the URL the row redirects to, as
// Common Crawl's columnar index has it (fetch_redirect; null: none).
type RedirectRow struct {
	Text          string  `parquet:"text"`
	ID            string  `parquet:"id"`
	URL           string  `parquet:"url"`
	Date          string  `parquet:"date"`
	FetchRedirect *string `parquet:"fetch_redirect,optional"`
}

// RedirectsPart is the file of the redirect crawl holding its redirects;
// the sample's pages are in the first (synth.PartName(0)).
const RedirectsPart = "part-00001.parquet"

// The stub bodies crawlers store for redirects: one shared by half of the
// redirects, and a per-redirect one for the others.
const sharedStub = "301 Moved Permanently. The document has moved here."

func uniqueStub(to string) string {
	return fmt.Sprintf("Moved Permanently. The document has moved to %s, please follow the link.", to)
}

// BuildRedirects makes the redirect crawl from the sample crawl's files:
// every sample page as it is, then redirects to them: one-hop redirects to
// every 8th page, two-hop chains to a third of those, relative redirects
// (a Location of the target's path only) to a fifth, redirects to pages
// whose URL a redirect row has too (crawled twice), a chain of MaxHops+2
// redirects (too long), ten pairs redirecting to each other and five pages
// redirecting to themselves (cycles), twenty redirects to URLs the crawl
// lacks, and one to a page with no text. Half the redirects' bodies are
// one shared stub, the others' differ.
func BuildRedirects(files [][]Row) (pages, redirects []RedirectRow) {
	var sample []Row
	for _, f := range files {
		sample = append(sample, f...)
	}
	for _, r := range sample {
		pages = append(pages, RedirectRow{Text: r.Text, ID: r.ID, URL: r.URL, Date: r.Date})
	}
	n := 0
	add := func(from, to, date string) {
		body := uniqueStub(to)
		if n%2 == 0 {
			body = sharedStub
		}
		redirects = append(redirects, RedirectRow{Text: body, ID: fmt.Sprintf("redirect-%04d", n), URL: from, Date: date, FetchRedirect: &to})
		n++
	}
	for k := 0; k*8 < len(sample); k++ {
		t := sample[k*8]
		one := fmt.Sprintf("https://moved.example/%d", k)
		add(one, t.URL, t.Date)
		if k%3 == 0 {
			add(fmt.Sprintf("https://old.example/%d", k), one, t.Date)
		}
		if k%5 == 0 {
			if u, err := url.Parse(t.URL); err == nil {
				rel := u.EscapedPath()
				if u.RawQuery != "" {
					rel += "?" + u.RawQuery
				}
				add(fmt.Sprintf("%s://%s/old/%d", u.Scheme, u.Host, k), rel, t.Date)
			}
		}
	}
	// A page crawled twice, once with its text and once redirecting
	// elsewhere: a redirect to its URL ends at the text.
	for k := 1; k*64+1 < len(sample); k++ {
		t := sample[k*64+1]
		add(t.URL, fmt.Sprintf("https://gone.example/twice/%d", k), t.Date)
		add(fmt.Sprintf("https://twice.example/%d", k), t.URL, t.Date)
	}
	// Too long: 10 redirects to the last sample page.
	last := sample[len(sample)-1]
	for i := range 10 {
		to := fmt.Sprintf("https://chain.example/%d", i+1)
		if i == 9 {
			to = last.URL
		}
		add(fmt.Sprintf("https://chain.example/%d", i), to, last.Date)
	}
	for i := range 10 {
		a, b := fmt.Sprintf("https://loop.example/a%d", i), fmt.Sprintf("https://loop.example/b%d", i)
		add(a, b, "2024-01-01T00:00:00Z")
		add(b, a, "2024-01-01T00:00:00Z")
	}
	for i := range 5 {
		self := fmt.Sprintf("https://self.example/%d", i)
		add(self, self, "2024-01-01T00:00:00Z")
	}
	for i := range 20 {
		add(fmt.Sprintf("https://away.example/%d", i), fmt.Sprintf("https://gone.example/%d", i), "2024-01-01T00:00:00Z")
	}
	empty := "https://blank.example/page"
	redirects = append(redirects, RedirectRow{Text: "", ID: "blank-page", URL: empty, Date: "2024-01-01T00:00:00Z"})
	add("https://toblank.example/page", empty, "2024-01-01T00:00:00Z")
	return pages, redirects
}

// WriteRedirects writes the redirect crawl of o's sample to dir.
func (o *Output) WriteRedirects(dir string) error {
	pages, redirects := BuildRedirects(o.CrawlFiles)
	if err := writeParquet(filepath.Join(dir, "part-00000.parquet"), pages, DefaultCrawlConfig().RowsPerGroup); err != nil {
		return err
	}
	return writeParquet(filepath.Join(dir, RedirectsPart), redirects, DefaultCrawlConfig().RowsPerGroup)
}

// RecrawlPart is the file of the redirect crawl's second sweep
// (testdata/redirects-recrawl).
const RecrawlPart = "part-00000.parquet"

// BuildRecrawl makes a second sweep of the redirect crawl, for an update
// (Zhu et al.'s three cases): thirty of the pages that one-hop redirects
// lead to (every 8th, BuildRedirects) crawled again, a third with the text
// of the page three on plus a word (a duplicate of another page now), a
// third with their own words reversed (content of their own, like no
// other page), a third redirecting to the page five on (a page that now
// redirects); and ten new pages at URLs that redirects led out of the
// first sweep to, half a near copy of a sample page, half text like no
// other.
func BuildRecrawl(files [][]Row) []RedirectRow {
	var sample []Row
	for _, f := range files {
		sample = append(sample, f...)
	}
	reversed := func(text string) string {
		w := strings.Fields(text)
		slices.Reverse(w)
		return strings.Join(w, " ")
	}
	var rows []RedirectRow
	for k := 100; k < 130; k++ {
		t := sample[k*8]
		row := RedirectRow{ID: fmt.Sprintf("recrawl-%d", k), URL: t.URL, Date: t.Date}
		switch (k / 3) % 3 {
		case 0:
			row.Text = sample[k*8+3].Text + " updated"
		case 1:
			row.Text = reversed(t.Text)
		default:
			to := sample[k*8+5].URL
			row.Text, row.FetchRedirect = sharedStub, &to
		}
		rows = append(rows, row)
	}
	for i := range 10 {
		row := RedirectRow{ID: fmt.Sprintf("new-%d", i), URL: fmt.Sprintf("https://gone.example/%d", i), Date: "2024-02-01T00:00:00Z"}
		if s := sample[2000+i*10]; i%2 == 0 {
			row.Text = s.Text + " updated"
		} else {
			row.Text = reversed(s.Text)
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteRecrawl writes the second sweep of the redirect crawl to dir.
func (o *Output) WriteRecrawl(dir string) error {
	return writeParquet(filepath.Join(dir, RecrawlPart), BuildRecrawl(o.CrawlFiles), DefaultCrawlConfig().RowsPerGroup)
}
