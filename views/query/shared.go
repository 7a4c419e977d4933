package query

import (
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/text/canon"
)

// Span is a byte range [Start, End) of a text.
type Span struct{ Start, End int }

// SharedSpans marks the text the two documents share: in each, the words
// of every shingle (of the index's size) found in the other, as byte
// ranges, merged where they touch (the space between two marked words is
// marked too). Tokens are the canonical tokens of each word between
// spaces, as the run made them, so a shingle here is one of the run's
// (under --features=chunks:C, one of the w-word shingles the run would
// have made: runs of shared words show better than shared chunks).
func (ix *Index) SharedSpans(a, b string) (inA, inB []Span) {
	h := fingerprint.New(ix.cfg.Seed)
	setA, setB := ix.wordShingles(a), ix.wordShingles(b)
	return ix.marked(h, a, setB), ix.marked(h, b, setA)
}

// marked is the spans of text whose words belong to a shingle in other.
func (ix *Index) marked(h fingerprint.Hasher, text string, other []uint64) []Span {
	type token struct {
		hash uint64
		word int
	}
	var words []Span
	var tokens []token
	var buf []uint64
	for start := 0; start < len(text); {
		r, size := utf8.DecodeRuneInString(text[start:])
		if unicode.IsSpace(r) {
			start += size
			continue
		}
		end := start
		for end < len(text) {
			r, size := utf8.DecodeRuneInString(text[end:])
			if unicode.IsSpace(r) {
				break
			}
			end += size
		}
		buf = canon.AppendHashes(buf[:0], h, text[start:end])
		for _, x := range buf {
			tokens = append(tokens, token{x, len(words)})
		}
		words = append(words, Span{start, end})
		start = end
	}
	w := ix.cfg.ShingleWords
	hashes := make([]uint64, len(tokens))
	for i, t := range tokens {
		hashes[i] = t.hash
	}
	mark := make([]bool, len(words))
	for i := 0; i+w <= len(hashes); i++ {
		if _, ok := slices.BinarySearch(other, h.Shingle(hashes[i:i+w])); ok {
			for _, t := range tokens[i : i+w] {
				mark[t.word] = true
			}
		}
	}
	var spans []Span
	for i, m := range mark {
		switch {
		case !m:
		case len(spans) > 0 && i > 0 && mark[i-1]:
			spans[len(spans)-1].End = words[i].End
		default:
			spans = append(spans, words[i])
		}
	}
	return spans
}
