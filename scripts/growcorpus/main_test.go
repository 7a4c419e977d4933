package main

import (
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
