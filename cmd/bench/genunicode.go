package main

// The unicode text mode: the same pages as the ascii mode (the same kinds,
// sources, sites, lengths and word ranks, drawn from the same streams), but
// written as real web pages are. Each page has a style, a function of
// (seed, page) alone, or of (seed, site) for a site's pages, so a copy is
// written in its source's style:
//
//   - 80% Latin script: 24% of all pages English-like (ASCII words; half of
//     them with typographic punctuation and apostrophes inside words, as in
//     don’t), 56% with accented words of French, German, Polish, Spanish,
//     Nordic and Czech flavours (café, naïve, straße, łódź-like; 2% of them
//     written decomposed, with combining accents), 70% of those with
//     typographic punctuation.
//   - 8% Cyrillic (Russian-like words), 7% CJK (ideographs, hiragana and
//     katakana, no spaces between words, fullwidth punctuation ，。「」), and
//     5% Greek, Arabic, Hebrew or Devanagari.
//
// Typographic punctuation is curly quotes (“ ” ‘ ’, « », „ “, by language),
// en and em dashes, no-break spaces and the ellipsis …. All words are
// pseudo-words from syllables and alphabets: no real text is copied. The
// layout adds separators only, never tokens, so near copies keep their
// resemblance in every script that separates words with spaces (CJK text
// has none: its canonical tokens are whole clauses).

import (
	"math/rand/v2"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/neardup/neardup/scripts/gencrawl/synth"
	"golang.org/x/text/unicode/norm"
)

// unicodeVersion names the unicode mode's rendering; bump it whenever the
// unicode crawl a seed gives changes.
const unicodeVersion = 1

// Scripts (and flavours of Latin) of the unicode mode.
const (
	scriptEnglish = iota // ASCII words; typographic punctuation on some pages
	scriptLatin          // accented words
	scriptCyrillic
	scriptCJK
	scriptGreek
	scriptArabic
	scriptHebrew
	scriptDevanagari
	numScripts
)

var scriptNames = [numScripts]string{"english", "latin", "cyrillic", "cjk", "greek", "arabic", "hebrew", "devanagari"}

// style is how a page is written in the unicode mode.
type style struct {
	script uint8
	typo   bool  // typographic punctuation (always, outside Latin script)
	quotes uint8 // index into the script's quote pairs
}

// scriptInfo is a script's punctuation.
type scriptInfo struct {
	cased, spaced                     bool
	stop, question, exclaim, ellipsis string
	comma, comma2, dash, join         string // join: between two words, no spaces (en dash)
	quotes                            [][2]string
	headerSeps                        []string
}

var scripts = [numScripts]scriptInfo{
	scriptEnglish: {cased: true, spaced: true, stop: ".", question: "?", exclaim: "!", ellipsis: "…", comma: ",", comma2: ",", dash: " — ", join: "–",
		quotes: [][2]string{{"“", "”"}, {"‘", "’"}}, headerSeps: []string{" | ", " · ", " › ", " • "}},
	scriptLatin: {cased: true, spaced: true, stop: ".", question: "?", exclaim: "!", ellipsis: "…", comma: ",", comma2: ";", dash: " – ", join: "–",
		quotes: [][2]string{{"“", "”"}, {"«\u00a0", "\u00a0»"}, {"„", "“"}, {"„", "”"}, {"»", "«"}}, headerSeps: []string{" | ", " · ", " › ", " • "}},
	scriptCyrillic: {cased: true, spaced: true, stop: ".", question: "?", exclaim: "!", ellipsis: "…", comma: ",", comma2: ",", dash: " — ", join: "–",
		quotes: [][2]string{{"«", "»"}, {"„", "“"}}, headerSeps: []string{" | ", " · ", " → "}},
	scriptCJK: {stop: "。", question: "？", exclaim: "！", ellipsis: "……", comma: "，", comma2: "、", dash: "——", join: "・",
		quotes: [][2]string{{"「", "」"}, {"『", "』"}, {"“", "”"}}, headerSeps: []string{"｜", "・", " | "}},
	scriptGreek: {cased: true, spaced: true, stop: ".", question: "\u037e", exclaim: "!", ellipsis: "…", comma: ",", comma2: ",", dash: " — ", join: "–",
		quotes: [][2]string{{"«", "»"}}, headerSeps: []string{" | ", " · "}},
	scriptArabic: {spaced: true, stop: ".", question: "؟", exclaim: "!", ellipsis: "…", comma: "،", comma2: "؛", dash: " — ", join: "–",
		quotes: [][2]string{{"«", "»"}, {"“", "”"}}, headerSeps: []string{" | ", " · "}},
	scriptHebrew: {spaced: true, stop: ".", question: "?", exclaim: "!", ellipsis: "…", comma: ",", comma2: ",", dash: " – ", join: "–",
		quotes: [][2]string{{"“", "”"}, {"„", "”"}}, headerSeps: []string{" | ", " · "}},
	scriptDevanagari: {spaced: true, stop: "।", question: "?", exclaim: "!", ellipsis: "…", comma: ",", comma2: ",", dash: " — ", join: "–",
		quotes: [][2]string{{"“", "”"}, {"‘", "’"}}, headerSeps: []string{" | ", " • "}},
}

// unicodeText is what the unicode mode adds to a generator: a vocabulary
// per script, rank for rank the same Zipf frequencies as the ASCII one, and
// each site's style and boilerplate.
type unicodeText struct {
	vocab     [numScripts][]string
	siteStyle []style
	sites     []site // header and footer in the site's style
}

// More stream salts.
const (
	saltStyle     = 0x7374796c65       // a page's style
	saltSiteStyle = 0x73747973697465   // a site's style
	saltSitesU    = 0x756e69736974657  // the sites' unicode boilerplate
	saltVocabU    = 0x756e69766f636162 // the unicode vocabularies
	saltVocabCJK  = 0x636a6b766f636162 // the CJK pool
	saltVocabLat  = 0x6c6174766f636162 // the accented Latin words
)

func newUnicodeText(g *generator) *unicodeText {
	u := &unicodeText{}
	u.vocab[scriptEnglish] = apostrophes(rand.New(rand.NewPCG(g.seed, saltVocabU+scriptEnglish)), g.words)
	u.vocab[scriptLatin] = accented(rand.New(rand.NewPCG(g.seed, saltVocabLat)), g.words)
	for sc := scriptCyrillic; sc < numScripts; sc++ {
		r := rand.New(rand.NewPCG(g.seed, saltVocabU+uint64(sc)))
		switch sc {
		case scriptCJK:
			u.vocab[sc] = cjkWords(r, vocabSize)
		default:
			u.vocab[sc] = alphabets[sc].Words(r, vocabSize, oneToFour)
			synth.ByLength(u.vocab[sc])
		}
	}
	g.uni = u // the sites' footers are rendered with the vocabularies
	r := rand.New(rand.NewPCG(g.seed, saltSitesU))
	for k, s := range g.sites {
		st := drawStyle(mix2(g.seed^saltSiteStyle, uint64(k)))
		u.siteStyle = append(u.siteStyle, st)
		u.sites = append(u.sites, g.unicodeSite(u, r, s.domain, st))
	}
	return u
}

// mix2 hashes (a, b) to 64 well-mixed bits (splitmix64's finalizer).
func mix2(a, b uint64) uint64 { return synth.Mix64(a ^ (b+0x9e3779b97f4a7c15)*0xbf58476d1ce4e5b9) }

// drawStyle turns 64 random bits into a style with the mode's shares.
func drawStyle(h uint64) style {
	var st style
	switch u := h % 1000; {
	case u < 240:
		st.script, st.typo = scriptEnglish, h>>16&1 == 0
	case u < 800:
		st.script, st.typo = scriptLatin, h>>16%10 < 7
	case u < 880:
		st.script, st.typo = scriptCyrillic, true
	case u < 950:
		st.script, st.typo = scriptCJK, true
	default:
		st.script, st.typo = scriptGreek+uint8((u-950)*4/50), true
	}
	st.quotes = uint8(h >> 32 % uint64(len(scripts[st.script].quotes)))
	return st
}

// styleOf is page i's style: its site's, or its own.
func (g *generator) styleOf(i int, p plan) style {
	if g.uni == nil {
		return style{}
	}
	if p.site >= 0 {
		return g.uni.siteStyle[p.site]
	}
	return drawStyle(mix2(g.seed^saltStyle, uint64(i)))
}

func (g *generator) unicodeSite(u *unicodeText, r *rand.Rand, domain string, st style) site {
	sc := &scripts[st.script]
	vocab := u.vocab[st.script]
	if st.script == scriptEnglish && !st.typo {
		vocab = g.words
	}
	rare := func() string { return synth.Rare(r, vocab) }
	sep := sc.headerSeps[r.IntN(len(sc.headerSeps))]
	if !st.typo {
		sep = " | "
	}
	var b []byte
	b = appendCapital(b, rare(), sc.cased)
	if sc.spaced {
		b = append(b, ' ')
	}
	b = appendCapital(b, rare(), sc.cased)
	for i, n := 0, 6+r.IntN(12); i < n; i++ {
		b = append(b, sep...)
		b = appendCapital(b, vocab[r.IntN(5000)], sc.cased)
	}
	header := string(b)
	words := make([]int32, 10+r.IntN(50))
	for i := range words {
		words[i] = g.word(r)
	}
	b = g.renderStyled(b[:0], words, r, st)
	if st.typo {
		b = append(b, " © "...)
		b = append(b, "2005–20"...)
		b = append(b, byte('0'+r.IntN(3)), byte('0'+r.IntN(10)))
	}
	b = append(b, " www."...)
	b = append(b, domain...)
	return site{domain: domain, header: header, footer: string(b)}
}

// pageUnicode is page in the unicode mode.
func (g *generator) pageUnicode(b []byte, body []int32, s int, r *rand.Rand, st style) []byte {
	if s >= 0 {
		b = append(b, g.uni.sites[s].header...)
		b = append(b, "\n\n"...)
	}
	b = g.renderStyled(b, body, r, st)
	if s >= 0 {
		b = append(b, "\n\n"...)
		b = append(b, g.uni.sites[s].footer...)
	}
	return b
}

// renderStyled is render in a style: sentences of 6 to 24 words in
// paragraphs of 2 to 7 sentences, with the script's punctuation and, with
// typographic punctuation, quotes, dashes, no-break spaces and ellipses.
// It adds separators only: the page's tokens are its words'.
func (g *generator) renderStyled(b []byte, words []int32, r *rand.Rand, st style) []byte {
	if st.script == scriptEnglish && !st.typo {
		return g.render(b, words, r)
	}
	sc := &scripts[st.script]
	vocab := g.uni.vocab[st.script]
	q := sc.quotes[st.quotes]
	if !st.typo {
		q = [2]string{`"`, `"`}
	}
	space := ""
	if sc.spaced {
		space = " "
	}
	sentence, paragraph, quoted := 0, 0, 0
	for i, w := range words {
		word := vocab[w]
		if sentence == 0 {
			if i > 0 {
				if paragraph == 0 {
					b = append(b, "\n\n"...)
				} else {
					b = append(b, space...)
				}
			}
			if paragraph == 0 {
				paragraph = 2 + r.IntN(6)
			}
			sentence = 6 + r.IntN(19)
			b = appendCapital(b, word, sc.cased)
		} else {
			x := r.Uint32()
			switch {
			case st.typo && x%64 == 0:
				b = append(b, sc.dash...)
			case st.typo && x%64 == 1:
				b = append(b, sc.join...)
			case st.typo && sc.spaced && x%64 < 4:
				b = append(b, "\u00a0"...)
			default:
				b = append(b, space...)
			}
			if quoted == 0 && x>>8%32 == 0 {
				b = append(b, q[0]...)
				quoted = 1 + int(x>>16%6)
			}
			b = append(b, word...)
		}
		if quoted > 0 {
			if quoted--; quoted == 0 {
				b = append(b, q[1]...)
			}
		}
		sentence--
		switch x := r.Uint32(); {
		case sentence == 0 || i == len(words)-1:
			if quoted > 0 {
				b = append(b, q[1]...)
				quoted = 0
			}
			sentence = 0
			paragraph--
			switch {
			case x%16 == 0:
				b = append(b, sc.question...)
			case st.typo && x%24 == 1:
				b = append(b, sc.ellipsis...)
			case x%30 == 2:
				b = append(b, sc.exclaim...)
			default:
				b = append(b, sc.stop...)
			}
		case x%12 == 0:
			if x>>8&3 == 0 {
				b = append(b, sc.comma2...)
			} else {
				b = append(b, sc.comma...)
			}
		}
	}
	return b
}

// appendCapital appends w with its first letter upper-cased, if cased.
func appendCapital(b []byte, w string, cased bool) []byte {
	if !cased {
		return append(b, w...)
	}
	c, n := utf8.DecodeRuneInString(w)
	b = utf8.AppendRune(b, unicode.ToUpper(c))
	return append(b, w[n:]...)
}

// apostrophes returns words with about 2% of the longer ones split by an
// apostrophe before their last one or two letters, as in don’t and we’ll.
func apostrophes(r *rand.Rand, words []string) []string {
	out := slices.Clone(words)
	for i, w := range out {
		if r.IntN(50) == 0 && len(w) >= 4 {
			k := len(w) - 1 - r.IntN(2)
			out[i] = w[:k] + "’" + w[k:]
		}
	}
	return out
}

// The accent flavours: which letters take which accents.
var accentFlavours = []map[byte][]string{
	{'a': {"à", "â"}, 'e': {"é", "è", "ê", "ë"}, 'i': {"î", "ï"}, 'o': {"ô"}, 'u': {"ù", "û"}, 'c': {"ç"}}, // French
	{'a': {"ä"}, 'o': {"ö"}, 'u': {"ü"}, 's': {"ß"}},                                                       // German
	{'a': {"ą"}, 'e': {"ę"}, 'l': {"ł"}, 's': {"ś"}, 'z': {"ź", "ż"}, 'c': {"ć"}, 'n': {"ń"}, 'o': {"ó"}},  // Polish
	{'n': {"ñ"}, 'a': {"á", "å", "ã"}, 'o': {"ø", "ó", "õ"}, 'e': {"é", "ě"}, 'c': {"č"}, 's': {"š"}, 'r': {"ř"}, 'z': {"ž"}, 'i': {"í"}, 'u': {"ú", "ů"}},
}

// elisions are French-like prefixes joined by an apostrophe.
var elisions = []string{"l’", "d’", "qu’", "j’", "n’", "s’", "c’"}

// accented returns words, rank for rank, with about 35% of them accented
// (one or two letters, of one flavour; 2% of those decomposed, with
// combining marks) and 2% elided (l’word).
func accented(r *rand.Rand, words []string) []string {
	out := make([]string, len(words))
	var pos []int
	for i, w := range words {
		switch u := r.IntN(100); {
		case u < 35:
			fl := accentFlavours[r.IntN(len(accentFlavours))]
			pos = pos[:0]
			for k := 0; k < len(w); k++ {
				if fl[w[k]] != nil {
					pos = append(pos, k)
				}
			}
			if len(pos) == 0 {
				out[i] = w
				continue
			}
			pick := map[int]bool{pos[r.IntN(len(pos))]: true}
			if r.IntN(3) == 0 {
				pick[pos[r.IntN(len(pos))]] = true
			}
			var b []byte
			for k := 0; k < len(w); k++ {
				if pick[k] && (k > 0 || w[k] != 's') { // no word starts with ß
					opts := fl[w[k]]
					b = append(b, opts[r.IntN(len(opts))]...)
				} else {
					b = append(b, w[k])
				}
			}
			out[i] = string(b)
			if r.IntN(50) == 0 {
				out[i] = norm.NFD.String(out[i])
			}
		case u < 37:
			out[i] = elisions[r.IntN(len(elisions))] + w
		default:
			out[i] = w
		}
	}
	return out
}

// alphabets are the syllables of the Cyrillic, Greek, Arabic, Hebrew and
// Devanagari words (English and Latin words are the ASCII ones, with
// apostrophes or accents; CJK words come from cjkWords).
var alphabets = [numScripts]synth.Alphabet{
	scriptCyrillic: {
		Onsets: []string{"", "", "б", "в", "г", "д", "ж", "з", "к", "л", "м", "н", "п", "р", "с", "т", "ф", "х", "ц", "ч", "ш", "щ",
			"бр", "вл", "гр", "др", "кр", "пр", "ст", "тр", "сл", "зв", "пл", "св"},
		Vowels: []string{"а", "е", "и", "о", "у", "ы", "я", "ю", "ё", "э", "о", "а", "е", "и"},
		Codas:  []string{"", "", "", "н", "р", "с", "т", "л", "м", "й", "ть", "сть", "нь", "к", "в"},
	},
	scriptGreek: {
		Onsets: []string{"", "", "β", "γ", "δ", "ζ", "θ", "κ", "λ", "μ", "ν", "ξ", "π", "ρ", "σ", "τ", "φ", "χ", "ψ", "στ", "τρ", "πρ", "κρ", "γρ"},
		Vowels: []string{"α", "ε", "η", "ι", "ο", "υ", "ω", "ά", "έ", "ή", "ί", "ό", "ύ", "ώ", "ου", "αι", "ει", "οι"},
		Codas:  []string{"", "", "", "ν", "σ", "ρ", "λ"},
		Final: func(w string) string { // σ ends a word as ς
			if r, n := utf8.DecodeLastRuneInString(w); r == 'σ' {
				return w[:len(w)-n] + "ς"
			}
			return w
		},
	},
	scriptArabic: {
		Onsets: []string{"ب", "ت", "ث", "ج", "ح", "خ", "د", "ذ", "ر", "ز", "س", "ش", "ص", "ض", "ط", "ظ", "ع", "غ", "ف", "ق", "ك", "ل", "م", "ن", "ه", "و", "ي", "ال"},
		Vowels: []string{"", "", "ا", "و", "ي", "َ", "ِ", "ُ"},
		Codas:  []string{"", "", "", "ن", "ر", "ة", "ت", "م"},
	},
	scriptHebrew: {
		Onsets: []string{"א", "ב", "ג", "ד", "ה", "ו", "ז", "ח", "ט", "י", "כ", "ל", "מ", "נ", "ס", "ע", "פ", "צ", "ק", "ר", "ש", "ת"},
		Vowels: []string{"", "", "ו", "י", "א"},
		Codas:  []string{"", "", "", "ם", "ן", "ת", "ר", "ה"},
		Final: func(w string) string { // כ מ נ פ צ end a word as ך ם ן ף ץ
			finals := map[rune]string{'כ': "ך", 'מ': "ם", 'נ': "ן", 'פ': "ף", 'צ': "ץ"}
			if r, n := utf8.DecodeLastRuneInString(w); finals[r] != "" {
				return w[:len(w)-n] + finals[r]
			}
			return w
		},
	},
	scriptDevanagari: {
		Onsets: []string{"क", "ख", "ग", "घ", "च", "छ", "ज", "झ", "ट", "ड", "त", "थ", "द", "ध", "न", "प", "फ", "ब", "भ", "म", "य", "र", "ल", "व", "श", "स", "ह", "अ", "आ", "इ", "उ", "ए"},
		Vowels: []string{"", "", "ा", "ि", "ी", "ु", "ू", "े", "ै", "ो", "ौ"},
		Codas:  []string{"", "", "", "ं", "न", "र", "्त", "्य"},
	},
}

// cjkWords returns n distinct CJK pseudo-words, fewer characters first:
// 70% of 1 to 3 ideographs out of a pool of 3,000 (U+4E00..U+9FA5), 20% of
// 1 to 3 hiragana, 10% of 2 to 5 katakana (with the odd long-vowel mark ー).
func cjkWords(r *rand.Rand, n int) []string {
	pool := make([]rune, 0, 3000)
	inPool := map[rune]bool{}
	for len(pool) < cap(pool) {
		c := rune(0x4e00 + r.IntN(0x9fa5-0x4e00+1))
		if !inPool[c] {
			inPool[c] = true
			pool = append(pool, c)
		}
	}
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	var b []byte
	for len(out) < n {
		b = b[:0]
		switch u := r.IntN(10); {
		case u < 7:
			k := 2
			if x := r.IntN(20); x < 4 {
				k = 1
			} else if x >= 15 {
				k = 3
			}
			for range k {
				b = utf8.AppendRune(b, pool[r.IntN(len(pool))])
			}
		case u < 9:
			for range 1 + r.IntN(3) {
				b = utf8.AppendRune(b, rune(0x3041+r.IntN(0x3093-0x3041+1)))
			}
		default:
			for j := range 2 + r.IntN(4) {
				if j > 0 && r.IntN(6) == 0 {
					b = utf8.AppendRune(b, 'ー')
				} else {
					b = utf8.AppendRune(b, rune(0x30a1+r.IntN(0x30f6-0x30a1+1)))
				}
			}
		}
		if seen[string(b)] {
			continue
		}
		seen[string(b)] = true
		out = append(out, string(b))
	}
	synth.ByLength(out)
	return out
}

// lexicalVariantUnicode is lexicalVariant for any script: it upper-cases
// words (the first always, then one in 8), turns some full stops into
// exclamation marks, doubles some spaces, and writes typographic
// punctuation plainly (curly quotes straight, dashes as hyphens, the
// ellipsis as three dots, no-break spaces as spaces). The canonical tokens
// stay the same; if nothing changed (a script without case and no
// punctuation to change), a space is added at the end.
func lexicalVariantUnicode(b []byte, r *rand.Rand) []byte {
	out := make([]byte, 0, len(b)+len(b)/16)
	wordStart, upper := true, true
	for i := 0; i < len(b); {
		c, n := utf8.DecodeRune(b[i:])
		i += n
		inWord := unicode.IsLetter(c) || unicode.IsMark(c) || unicode.IsNumber(c)
		if inWord && wordStart {
			wordStart = false
			upper = upper || r.IntN(8) == 0
		}
		switch {
		case inWord && upper:
			c = unicode.ToUpper(c)
		case c == '.' || c == '。':
			if r.IntN(3) == 0 {
				c = '!'
			}
		case c == ' ' && r.IntN(20) == 0:
			out = append(out, ' ')
		case c == '“' || c == '”' || c == '„' || c == '«' || c == '»' || c == '「' || c == '」':
			c = '"'
		case c == '‘' || c == '’':
			c = '\''
		case c == '—' || c == '–':
			c = '-'
		case c == '\u00a0':
			c = ' '
		case c == '…':
			out = append(out, ".."...)
			c = '.'
		}
		if !inWord && !wordStart {
			wordStart, upper = true, false
		}
		out = utf8.AppendRune(out, c)
	}
	if string(out) == string(b) {
		out = append(out, ' ')
	}
	return out
}
