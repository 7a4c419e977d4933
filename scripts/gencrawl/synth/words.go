package synth

import (
	"math/rand/v2"
	"slices"
	"unicode/utf8"
)

// Alphabet is a script's syllables: a syllable is an onset, a vowel and a
// coda, each drawn uniformly from its list.
type Alphabet struct {
	Onsets, Vowels, Codas []string
	Final                 func(string) string // word-final letter forms, or nil
}

// ASCII is the alphabet of lowercase ASCII pseudo-words: the sample
// crawl's words and the benchmark crawl's ASCII ones.
var ASCII = Alphabet{
	Onsets: []string{"", "", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
		"br", "cr", "dr", "fl", "gr", "pl", "pr", "st", "tr", "ch", "sh", "th", "bl", "sk", "sl", "sp", "qu"},
	Vowels: []string{"a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ea", "ou", "io", "ee", "oo", "y"},
	Codas:  []string{"", "", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "rk", "ng", "x", "ck", "ll", "th"},
}

// Words returns n distinct pseudo-words of 2 to 14 runes in the order they
// were drawn: each draws its number of syllables with syllables(r), then
// its syllables, and is redrawn if too short, too long or already drawn.
func (a Alphabet) Words(r *rand.Rand, n int, syllables func(*rand.Rand) int) []string {
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	var b []byte
	for len(out) < n {
		b = b[:0]
		for range syllables(r) {
			b = append(b, a.Onsets[r.IntN(len(a.Onsets))]...)
			b = append(b, a.Vowels[r.IntN(len(a.Vowels))]...)
			b = append(b, a.Codas[r.IntN(len(a.Codas))]...)
		}
		w := string(b)
		if a.Final != nil {
			w = a.Final(w)
		}
		if c := utf8.RuneCountInString(w); c < 2 || c > 14 || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// ByLength sorts words by their number of runes, stably: in a vocabulary
// in rank order the shorter words get the frequent ranks, as in natural
// languages.
func ByLength(words []string) {
	slices.SortStableFunc(words, func(a, b string) int { return utf8.RuneCountInString(a) - utf8.RuneCountInString(b) })
}

// Rare draws a word uniformly from the less frequent half of a vocabulary
// in rank order (names: of sites, in titles and URLs).
func Rare(r *rand.Rand, words []string) string {
	h := len(words) / 2
	return words[h+r.IntN(len(words)-h)]
}
