package stopword_test

import (
	"slices"
	"testing"

	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/text/canon"
	"github.com/neardup/neardup/text/stopword"
)

func TestDropsTheLanguagesStopWords(t *testing.T) {
	h := fingerprint.New(fingerprint.DefaultSeed)
	en, err := stopword.Hashes("en", h)
	if err != nil {
		t.Fatal(err)
	}
	got := en.Drop(canon.AppendHashes(nil, h, "The cat sat ON the mat, and THEN it slept."))
	want := canon.AppendHashes(nil, h, "cat sat mat slept")
	if !slices.Equal(got, want) {
		t.Fatalf("without English stop words: %d tokens, want the %d of %q", len(got), len(want), "cat sat mat slept")
	}
	de, err := stopword.Hashes("de", h)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(de.Drop(canon.AppendHashes(nil, h, "der die das und oder"))); n != 0 {
		t.Errorf("%d German stop words left of 5", n)
	}
	if n := len(de.Drop(canon.AppendHashes(nil, h, "the and or"))); n != 3 {
		t.Errorf("German stop words dropped English ones: %d of 3 left", n)
	}
}

func TestLanguages(t *testing.T) {
	langs := stopword.Languages()
	for _, l := range []string{"de", "en", "fr", "ru", "zh"} {
		if !slices.Contains(langs, l) {
			t.Errorf("no %s list among %v", l, langs)
		}
	}
	for _, bad := range []string{"", "xx", "EN", "english", "e"} {
		if stopword.Check(bad) == nil {
			t.Errorf("Check(%q) accepted it", bad)
		}
	}
}
