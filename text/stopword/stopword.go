// Package stopword gives the stop words of a language as the token hashes
// neardup's tokenizer makes of them, so that a document's canonical tokens
// can go without them before shingling (Maharjan 2016: similarity over
// the words that carry content). The lists are those of
// github.com/orsinium-labs/stopwords (the stopwords-iso collection),
// keyed by ISO 639-1 code.
package stopword

import (
	"fmt"
	"strings"
	"sync"

	"github.com/orsinium-labs/stopwords"

	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/text/canon"
)

// Languages lists the language codes that have a list, sorted.
var Languages = sync.OnceValue(func() []string {
	var out []string
	for a := 'a'; a <= 'z'; a++ {
		for b := 'a'; b <= 'z'; b++ {
			if code := string([]rune{a, b}); stopwords.Get(code) != nil {
				out = append(out, code)
			}
		}
	}
	return out
})

// Check reports whether lang names a language with a list.
func Check(lang string) error {
	if len(lang) == 2 && lang == strings.ToLower(lang) && stopwords.Get(lang) != nil {
		return nil
	}
	return fmt.Errorf("no stop words for %q (languages: %s)", lang, strings.Join(Languages(), ", "))
}

// Set is a language's stop words as token hashes.
type Set map[uint64]struct{}

// Hashes returns the stop words of lang as h hashes the tokens of a text
// (canon.AppendHashes). A list's word that the tokenizer splits into
// several tokens (a Chinese or Japanese word of several characters, a
// phrase) is left out: no single token is that word.
func Hashes(lang string, h fingerprint.Hasher) (Set, error) {
	if err := Check(lang); err != nil {
		return nil, err
	}
	set := Set{}
	var buf []uint64
	for _, w := range stopwords.Get(lang).Trie.Keys() {
		if buf = canon.AppendHashes(buf[:0], h, w); len(buf) == 1 {
			set[buf[0]] = struct{}{}
		}
	}
	return set, nil
}

// Drop removes from hashes, in place, the tokens in s, and returns what
// is left.
func (s Set) Drop(hashes []uint64) []uint64 {
	out := hashes[:0]
	for _, x := range hashes {
		if _, stop := s[x]; !stop {
			out = append(out, x)
		}
	}
	return out
}
