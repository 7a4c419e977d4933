package main

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFamilies: each copy is 25 words of header, the article (edited at
// the rate), 25 words of footer; at rate 0 the article is whole, and
// copies differ only in their sites' words.
func TestFamilies(t *testing.T) {
	article := strings.Repeat("alpha beta gamma delta epsilon ", 80) // 400 words, Latin
	other := strings.Repeat("zeta eta theta iota kappa ", 70)
	base := []doc{{ID: "a", Text: article}, {ID: "short", Text: "too short"}, {ID: "b", Text: other}}
	fams, err := families("3:0,2:0.3", base, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(fams) != 5 || fams[0].ID != "family-0-copy-0" || fams[4].ID != "family-1-copy-1" {
		t.Fatalf("families = %d rows, first %q, last %q; want 5, family-0-copy-0 ... family-1-copy-1", len(fams), fams[0].ID, fams[len(fams)-1].ID)
	}
	// With one long row, a second family has no article of its own.
	if _, err := families("3:0,2:0.3", base[:2], 1); err == nil {
		t.Fatal("two families from one long row: no error")
	}
	if !strings.Contains(fams[3].Text, "zeta") || strings.Contains(fams[3].Text, "alpha beta gamma delta epsilon alpha") {
		t.Fatal("the second family is not made of the second longest row")
	}
	words := strings.Fields(article)
	for _, d := range fams[:3] {
		w := strings.Fields(d.Text)
		if len(w) != 25+len(words)+25 || strings.Join(w[25:25+len(words)], " ") != strings.Join(words, " ") {
			t.Fatalf("%s: %d words, the article not whole between 25-word header and footer", d.ID, len(w))
		}
	}
	if fams[0].Text == fams[1].Text {
		t.Fatal("two copies with the same header and footer")
	}
}

// TestFamilyOptions: words=N keeps the article's first N words, bare
// leaves the site frames out, and an unknown option is refused.
func TestFamilyOptions(t *testing.T) {
	article := strings.Repeat("alpha beta gamma delta epsilon ", 80)
	base := []doc{{ID: "a", Text: article}}
	fams, err := families("2:0:words=30:bare", base, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join(strings.Fields(article)[:30], " ")
	if len(fams) != 2 || fams[0].Text != want || fams[1].Text != want {
		t.Fatalf("words=30:bare at rate 0: %q, want the article's first 30 words alone", fams[0].Text)
	}
	if _, err := families("2:0:wordz=3", base, 1); err == nil {
		t.Fatal("an unknown option accepted")
	}
}

// TestTemplateSite: every page is the same 80-word header and footer
// around 150 words of a corpus row.
func TestTemplateSite(t *testing.T) {
	row := strings.Repeat("one two three four five six seven eight nine ten ", 40)
	base := []doc{{ID: "a", Text: row}, {ID: "short", Text: "too short"}}
	pages, err := templateSite(5, base, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 5 {
		t.Fatalf("%d pages, want 5", len(pages))
	}
	parts := strings.Split(pages[0].Text, "\n")
	for _, p := range pages {
		got := strings.Split(p.Text, "\n")
		if len(got) != 3 || got[0] != parts[0] || got[2] != parts[2] || len(strings.Fields(got[0])) != 80 || len(strings.Fields(got[1])) != 150 || !strings.Contains(row, got[1]) {
			t.Fatalf("page %s is not the site's header, 150 words of the row, the site's footer", p.ID)
		}
	}
}

// TestEditShortRows: a row of one or two words edited more times than it
// has words ends empty, not in a panic.
func TestEditShortRows(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range []string{"a", "a b", "日本"} {
		for range 50 {
			edit(s, 5, r)
		}
	}
}

// TestChooseOnce: -mb 0 is every row once, as it is; a target is met
// with copies, cut once it is reached.
func TestChooseOnce(t *testing.T) {
	base := []doc{{ID: "a", Text: "one two"}, {ID: "b", Text: "three"}, {ID: "c", Text: "four five six"}}
	all := choose(base, 20, 0, 1)
	seen := map[int]bool{}
	for _, it := range all {
		if it.copy != 0 || seen[it.row] {
			t.Fatalf("-mb 0 chose %v: want each row once, copy 0", all)
		}
		seen[it.row] = true
	}
	if len(seen) != len(base) {
		t.Fatalf("-mb 0 chose %d rows of %d", len(seen), len(base))
	}
	var sum int
	more := choose(base, 20, 45, 1)
	for _, it := range more {
		sum += len(base[it.row].Text)
	}
	if sum < 45 || sum-len(base[more[len(more)-1].row].Text) >= 45 {
		t.Fatalf("a target of 45 bytes chose %d bytes in %d rows: want the first rows that reach it", sum, len(more))
	}
}
