package main

import (
	"math/rand/v2"
	"strings"
	"unicode"

	"github.com/neardup/neardup/scripts/gencrawl/synth"
)

// ShingleSize is the w of Broder's w-shingling used for all ground truth.
const ShingleSize = 10

// item is one word of a generated document together with the punctuation
// written right after it. Words are lowercase letters/digits only, so the
// token sequence of a rendered document is exactly the sequence of item words.
type item struct {
	w     string // lowercase word (ASCII letters/digits)
	p     string // punctuation written after the word: "", ",", ".", "?", "!", ";", ":", " |", " &", " ©"
	br    bool   // paragraph break after this item
	title bool   // always capitalized (names, navigation)
	nb    bool   // html only: the space after this word is a no-break space entity
}

func endsSentence(p string) bool {
	return p != "" && strings.ContainsAny(p[len(p)-1:], ".?!")
}

func capitalize(w string) string {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return w
	}
	return string(w[0]-'a'+'A') + w[1:]
}

// textGen generates sentences, paragraphs and documents.
type textGen struct {
	r *rand.Rand
	v *Vocab
}

func (g *textGen) word() string {
	if g.r.IntN(1000) < 12 {
		return numberWord(g.r)
	}
	return g.v.Zipf(g.r)
}

func (g *textGen) sentenceLen() int {
	return 3 + g.r.IntN(8) + g.r.IntN(8) + g.r.IntN(6)
}

// sentence returns a sentence of n words (n <= 0 picks a random length).
func (g *textGen) sentence(n int) []item {
	if n <= 0 {
		n = g.sentenceLen()
	}
	s := make([]item, n)
	for i := range s {
		s[i].w = g.word()
		if i < n-2 {
			switch x := g.r.IntN(1000); {
			case x < 70:
				s[i].p = ","
			case x < 74:
				s[i].p = ";"
			case x < 77:
				s[i].p = ":"
			}
		}
	}
	switch x := g.r.IntN(100); {
	case x < 86:
		s[n-1].p = "."
	case x < 93:
		s[n-1].p = "?"
	case x < 97:
		s[n-1].p = "!"
	default:
		s[n-1].p = "..."
	}
	return s
}

// paragraph returns 1-6 sentences, the last item carrying br=true.
func (g *textGen) paragraph() []item {
	var p []item
	k := 1 + g.r.IntN(6)
	for i := 0; i < k; i++ {
		p = append(p, g.sentence(0)...)
	}
	p[len(p)-1].br = true
	return p
}

// doc generates a document of at least n words made of whole sentences.
func (g *textGen) doc(n int) []item {
	var d []item
	left := 0
	for len(d) < n {
		if left == 0 {
			if len(d) > 0 {
				d[len(d)-1].br = true
			}
			left = 1 + g.r.IntN(6)
		}
		d = append(d, g.sentence(0)...)
		left--
	}
	d[len(d)-1].br = false
	return d
}

func clone(d []item) []item { return append([]item(nil), d...) }

// render writes a document as plain text: single spaces between words,
// "\n" between paragraphs, first word of each sentence capitalized.
func render(d []item) string {
	var b strings.Builder
	capNext := true
	for i, it := range d {
		w := it.w
		if capNext || it.title {
			w = capitalize(w)
		}
		b.WriteString(w)
		b.WriteString(it.p)
		capNext = endsSentence(it.p)
		if i < len(d)-1 {
			if it.br {
				b.WriteByte('\n')
				capNext = true
			} else {
				b.WriteByte(' ')
			}
		}
	}
	return b.String()
}

// renderLexical renders d with random changes of case, whitespace and
// punctuation that leave the token sequence unchanged.
func renderLexical(r *rand.Rand, d []item) string {
	var b strings.Builder
	capNext := true
	if r.IntN(2) == 0 {
		b.WriteString("  ")
	}
	for i, it := range d {
		w := it.w
		if capNext || it.title {
			w = capitalize(w)
		}
		switch x := r.IntN(1000); {
		case x < 40:
			w = capitalize(w)
		case x < 55:
			w = strings.ToUpper(w)
		case x < 70 && i > 0:
			w = strings.ToLower(w)
		}
		quote := r.IntN(1000) < 15
		if quote {
			b.WriteByte('"')
		}
		b.WriteString(w)
		if quote {
			b.WriteByte('"')
		}
		p := it.p
		switch p {
		case ",":
			switch x := r.IntN(10); {
			case x < 3:
				p = ""
			case x < 5:
				p = ";"
			case x < 6:
				p = " -"
			}
		case ".":
			switch x := r.IntN(20); {
			case x < 2:
				p = "!"
			case x < 3:
				p = "..."
			case x < 4:
				p = ".."
			}
		case "":
			switch x := r.IntN(1000); {
			case x < 25:
				p = ","
			case x < 30:
				p = " --"
			}
		}
		b.WriteString(p)
		capNext = endsSentence(it.p) || it.br
		if i == len(d)-1 {
			break
		}
		switch {
		case it.br:
			switch x := r.IntN(10); {
			case x < 5:
				b.WriteString("\n\n")
			case x < 7:
				b.WriteString(" \n")
			case x < 8:
				b.WriteString(" ")
			default:
				b.WriteString("\n")
			}
		default:
			switch x := r.IntN(1000); {
			case x < 40:
				b.WriteString("  ")
			case x < 50:
				b.WriteString("\t")
			case x < 60 && p == "":
				b.WriteString("-")
			case x < 65:
				b.WriteString(" \n")
			default:
				b.WriteString(" ")
			}
		}
	}
	if r.IntN(2) == 0 {
		b.WriteString(" \n")
	}
	return b.String()
}

// Tokens is the canonical tokenizer used for all ground truth: lowercase,
// then split on every rune that is not a letter or a digit.
func Tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

func itemTokens(d []item) []string {
	t := make([]string, len(d))
	for i, it := range d {
		t[i] = it.w
	}
	return t
}

// ShingleSet returns the set of w-shingles (tokens joined by a space) of a
// token sequence. A sequence shorter than w has no shingles.
func ShingleSet(toks []string) map[string]struct{} {
	s := make(map[string]struct{})
	for i := 0; i+ShingleSize <= len(toks); i++ {
		s[strings.Join(toks[i:i+ShingleSize], " ")] = struct{}{}
	}
	return s
}

// Metrics holds the exact resemblance and containments of two shingle sets.
type Metrics struct {
	Resemblance float64
	ContAInB    float64
	ContBInA    float64
}

// Compare computes exact resemblance |A∩B|/|A∪B| and containments
// |A∩B|/|A|, |A∩B|/|B| of two shingle sets.
func Compare(a, b map[string]struct{}) Metrics {
	small, large := a, b
	if len(small) > len(large) {
		small, large = large, small
	}
	inter := 0
	for k := range small {
		if _, ok := large[k]; ok {
			inter++
		}
	}
	var m Metrics
	if u := len(a) + len(b) - inter; u > 0 {
		m.Resemblance = float64(inter) / float64(u)
	}
	if len(a) > 0 {
		m.ContAInB = float64(inter) / float64(len(a))
	}
	if len(b) > 0 {
		m.ContBInA = float64(inter) / float64(len(b))
	}
	return m
}

// ---- fast hashed shingles (used inside edit loops and the background scan)

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// hashShingles returns the set of 64-bit hashes of the w-shingles of toks.
func hashShingles(toks []string) map[uint64]struct{} {
	h := make([]uint64, len(toks))
	for i, t := range toks {
		h[i] = fnv64(t)
	}
	s := make(map[uint64]struct{}, len(toks))
	for i := 0; i+ShingleSize <= len(h); i++ {
		var x uint64
		for _, y := range h[i : i+ShingleSize] {
			x = synth.Mix64(x ^ y)
		}
		s[x] = struct{}{}
	}
	return s
}

func hashJaccard(a, b map[uint64]struct{}) float64 {
	inter := 0
	for k := range a {
		if _, ok := b[k]; ok {
			inter++
		}
	}
	u := len(a) + len(b) - inter
	if u == 0 {
		return 0
	}
	return float64(inter) / float64(u)
}
