package main

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"

	"github.com/neardup/neardup/scripts/gencrawl/synth"
)

// Vocab is a synthetic vocabulary of pseudo-words built from random
// syllables. Words holds the visible vocabulary in rank order (rank 0 is the
// most frequent word); Hidden is a disjoint set of pseudo-words that are used
// only inside HTML markup (scripts, styles, comments, attributes) and must
// therefore never appear in extracted visible text.
type Vocab struct {
	Words  []string
	Hidden []string
	cdf    []float64
}

// syllables draws a word's number of syllables: 1 to 4, two the most often.
func syllables(r *rand.Rand) int {
	switch x := r.IntN(100); {
	case x < 22:
		return 1
	case x < 62:
		return 2
	case x < 88:
		return 3
	default:
		return 4
	}
}

// NewVocab builds n visible words and nHidden hidden words. Shorter words get
// the higher ranks, which mimics natural language where frequent words are
// short. Word weights follow a Zipf-Mandelbrot law 1/(rank+2.7).
func NewVocab(r *rand.Rand, n, nHidden int) *Vocab {
	all := synth.ASCII.Words(r, n+nHidden, syllables)
	words := append([]string(nil), all[:n]...)
	hidden := append([]string(nil), all[n:]...)
	synth.ByLength(words)
	sort.Strings(hidden)
	cdf := make([]float64, n)
	total := 0.0
	for i := range words {
		total += 1 / math.Pow(float64(i)+2.7, 1.1)
		cdf[i] = total
	}
	for i := range cdf {
		cdf[i] /= total
	}
	return &Vocab{Words: words, Hidden: hidden, cdf: cdf}
}

// Zipf draws a visible word with Zipf-like frequency.
func (v *Vocab) Zipf(r *rand.Rand) string {
	u := r.Float64()
	i := sort.SearchFloat64s(v.cdf, u)
	if i >= len(v.Words) {
		i = len(v.Words) - 1
	}
	return v.Words[i]
}

// Rare draws a visible word uniformly from the less frequent half of the
// vocabulary (used for names: sites, titles, navigation).
func (v *Vocab) Rare(r *rand.Rand) string { return synth.Rare(r, v.Words) }

// Name draws a mid-frequency visible word (used for site and domain names).
func (v *Vocab) Name(r *rand.Rand) string {
	return v.Words[300+r.IntN(5700)]
}

// HiddenWord draws a word of the hidden vocabulary.
func (v *Vocab) HiddenWord(r *rand.Rand) string {
	return v.Hidden[r.IntN(len(v.Hidden))]
}

func numberWord(r *rand.Rand) string {
	switch r.IntN(3) {
	case 0:
		return strconv.Itoa(1 + r.IntN(99))
	case 1:
		return strconv.Itoa(1950 + r.IntN(77))
	default:
		return strconv.Itoa(100 + r.IntN(9900))
	}
}
