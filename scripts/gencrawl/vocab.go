package main

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
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

var (
	onsets = []string{"", "", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
		"br", "cr", "dr", "fl", "gr", "pl", "pr", "st", "tr", "ch", "sh", "th", "bl", "sk", "sl", "sp", "qu"}
	vowels = []string{"a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ea", "ou", "io", "ee", "oo", "y"}
	codas  = []string{"", "", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "rk", "ng", "x", "ck", "ll", "th"}
)

func syllable(r *rand.Rand) string {
	return onsets[r.IntN(len(onsets))] + vowels[r.IntN(len(vowels))] + codas[r.IntN(len(codas))]
}

func pseudoWord(r *rand.Rand) string {
	var n int
	switch x := r.IntN(100); {
	case x < 22:
		n = 1
	case x < 62:
		n = 2
	case x < 88:
		n = 3
	default:
		n = 4
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(syllable(r))
	}
	return b.String()
}

// NewVocab builds n visible words and nHidden hidden words. Shorter words get
// the higher ranks, which mimics natural language where frequent words are
// short. Word weights follow a Zipf-Mandelbrot law 1/(rank+2.7).
func NewVocab(r *rand.Rand, n, nHidden int) *Vocab {
	seen := make(map[string]bool, n+nHidden)
	all := make([]string, 0, n+nHidden)
	for len(all) < n+nHidden {
		w := pseudoWord(r)
		if len(w) < 2 || len(w) > 14 || seen[w] {
			continue
		}
		seen[w] = true
		all = append(all, w)
	}
	words := append([]string(nil), all[:n]...)
	hidden := append([]string(nil), all[n:]...)
	sort.SliceStable(words, func(i, j int) bool { return len(words[i]) < len(words[j]) })
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
func (v *Vocab) Rare(r *rand.Rand) string {
	h := len(v.Words) / 2
	return v.Words[h+r.IntN(len(v.Words)-h)]
}

// Name draws a mid-frequency visible word (used for site and domain names).
func (v *Vocab) Name(r *rand.Rand) string {
	return v.Words[300+r.IntN(5700)]
}

// HiddenWord draws a word of the hidden vocabulary.
func (v *Vocab) HiddenWord(r *rand.Rand) string {
	return v.Hidden[r.IntN(len(v.Hidden))]
}

// logNormalInt draws round(median*exp(sigma*N(0,1))) clamped to [lo, hi].
func logNormalInt(r *rand.Rand, median, sigma float64, lo, hi int) int {
	x := int(math.Round(median * math.Exp(sigma*r.NormFloat64())))
	if x < lo {
		x = lo
	}
	if x > hi {
		x = hi
	}
	return x
}

// logNormalAtLeast resamples until the value is >= lo (no pile-up at lo).
func logNormalAtLeast(r *rand.Rand, median, sigma float64, lo, hi int) int {
	for {
		x := int(math.Round(median * math.Exp(sigma*r.NormFloat64())))
		if x >= lo && x <= hi {
			return x
		}
	}
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
