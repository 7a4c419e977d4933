package canon

import (
	"encoding/binary"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// asciiAlnum marks the ASCII bytes that belong to tokens. In ASCII the
// Unicode classes of the rule reduce to [0-9A-Za-z]: no other ASCII rune is
// a letter, a number or a combining mark.
var asciiAlnum = func() (t [utf8.RuneSelf]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	return t
}()

// folders pools case folders because a cases.Caser keeps state between
// calls and so must not be shared between goroutines, while building one per
// call would cost an allocation per non-ASCII chunk.
var folders = sync.Pool{New: func() any {
	c := cases.Fold()
	return &c
}}

// Tokens returns the canonical tokens of text. Rule: Unicode NFKC
// normalization, then full case folding (golang.org/x/text/cases.Fold()),
// then a token is a maximal run of letters and digits (unicode.IsLetter,
// unicode.IsDigit, unicode.IsNumber) where combining marks (Mn, Mc, Me)
// inside or right after a run stay part of the token; everything else
// separates tokens. Invalid UTF-8 bytes are treated as separators (never
// panic).
//
// Two refinements make the rule idempotent (see the package comment): the
// folded text is NFKC-normalized again, and Cherokee folds to its capital
// letters as CaseFolding.txt specifies, working around golang/go#46101.
func Tokens(text string) []string {
	return AppendTokens(nil, text)
}

// AppendTokens is Tokens appending to dst, for reuse of the slice across
// documents.
func AppendTokens(dst []string, text string) []string {
	ascii, upper := scanASCII(text)
	if !ascii {
		return appendMixed(dst, text)
	}
	// NFKC and case folding are the identity on ASCII apart from A-Z, so
	// lowering is the whole normalization, and tokens can be substrings of
	// the one lowered copy (or of text itself when nothing needs lowering).
	if upper {
		text = lowerASCII(text)
	}
	return appendASCII(dst, text)
}

// Eight-byte-at-a-time (SWAR) constants. A byte b < 0x80 is in 'A'..'Z'
// iff b+0x3f has its high bit set (b >= 0x41) and b+0x25 has not
// (b < 0x5b); adding to 7-bit bytes cannot carry into the next byte.
const (
	lsb7 = 0x7f7f7f7f7f7f7f7f
	msb  = 0x8080808080808080
	addA = 0x3f3f3f3f3f3f3f3f
	addZ = 0x2525252525252525
)

// load64 reads 8 bytes of s little-endian; the compiler fuses the byte
// loads into one, and it keeps the package free of unsafe.
func load64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// upperMask has 0x80 in each byte of w that is an ASCII capital letter.
func upperMask(w uint64) uint64 {
	x := w & lsb7
	return ((x + addA) &^ (x + addZ)) &^ w & msb
}

// scanASCII reports whether s is all ASCII and whether it has any of
// 'A'..'Z', in one pass, so that the common lowercase-free or ASCII-only
// cases cost no more than reading the text.
func scanASCII(s string) (ascii, upper bool) {
	var hi, up uint64
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := load64(s, i)
		hi |= w
		up |= upperMask(w)
	}
	for ; i < len(s); i++ {
		c := s[i]
		hi |= uint64(c)
		if 'A' <= c && c <= 'Z' {
			up = 1
		}
	}
	return hi&msb == 0, up != 0
}

// appendASCII splits lowered ASCII text into tokens.
func appendASCII(dst []string, s string) []string {
	i := 0
	for i < len(s) {
		for i < len(s) && !asciiAlnum[s[i]] {
			i++
		}
		j := i
		for i < len(s) && asciiAlnum[s[i]] {
			i++
		}
		if j < i {
			dst = append(dst, s[j:i])
		}
	}
	return dst
}

// appendMixed tokenizes text that contains non-ASCII bytes. Real-world
// text is mostly ASCII or mostly runes that neither normalization nor case
// folding changes (lowercase Cyrillic, CJK, kana, Hangul syllables, ...),
// so rather than normalizing the whole document it sends only regions with
// "complex" words through x/text, and takes every other token as a
// substring of one ASCII-lowered copy of text.
//
// Runes are classed by runeClass: letters and separators that are inert
// (NFKC leaves them alone, nothing composes with them from behind, folding
// maps them to themselves) and complex runes (everything else, including
// marks and invalid bytes). A word is a maximal run of non-separators; it
// is simple if all its runes are inert letters or ASCII alphanumerics. A
// simple word between separators is already canonical except for ASCII
// case. A complex region starts at the separators before a complex word
// and runs to the end of the last complex word before the next simple one.
// Cutting there cannot change the result: each cut is right before an
// inert rune or an ASCII byte, which starts a new NFKC segment (no
// composition has one as its second element, and they never decompose),
// and case folding is context free. TestChunkedMatchesWhole and
// TestEveryBMPRuneMatchesWhole check this against the rule applied to the
// whole text.
func appendMixed(dst []string, text string) []string {
	// Lowering only ASCII bytes keeps every byte offset, so lower[j:i]
	// is the lowered form of text[j:i].
	lower := lowerASCII(text)
	classes := runeClasses()
	i := 0
	for i < len(text) {
		j := skipSeparators(classes, text, i)
		if j == len(text) {
			break
		}
		end, simple := scanWord(classes, text, j)
		if simple {
			dst = append(dst, lower[j:end])
			i = end
			continue
		}
		for {
			k := skipSeparators(classes, text, end)
			if k == len(text) {
				break
			}
			m, simple := scanWord(classes, text, k)
			if simple {
				break
			}
			end = m
		}
		// Starting at i, not j, keeps the separators before the word in
		// the region, so a word that starts with a mark still sees what
		// it could compose with.
		dst = appendSlow(dst, text[i:end])
		i = end
	}
	return dst
}

// Rune classes for appendMixed.
const (
	complexRune uint8 = iota // needs x/text
	inertLetter              // a letter or number that is its own canonical form
	inertSep                 // a separator that is its own canonical form
)

var (
	classesOnce sync.Once
	bmpClasses  *[1 << 16]uint8
)

// runeClasses builds, on first use, the class of every rune of the Basic
// Multilingual Plane by asking x/text about each one. That takes a few
// tens of milliseconds once per process, and afterwards costs one table
// load per rune instead of x/text's per-rune trie walks (which make NFKC
// plus folding cost well over 100 ns per rune). Runes above the BMP are
// rare enough in text to always go to x/text.
func runeClasses() *[1 << 16]uint8 {
	classesOnce.Do(func() {
		t := new([1 << 16]uint8)
		fold := cases.Fold()
		var buf [utf8.UTFMax]byte
		for r := rune(0); r < 1<<16; r++ {
			if r < utf8.RuneSelf {
				if asciiAlnum[r] {
					t[r] = inertLetter
				} else {
					t[r] = inertSep
				}
				continue
			}
			if 0xD800 <= r && r < 0xE000 {
				continue // surrogates never decode; invalid bytes stay complex
			}
			s := string(buf[:utf8.EncodeRune(buf[:], r)])
			p := norm.NFKC.PropertiesString(s)
			if !p.BoundaryBefore() || !norm.NFKC.IsNormalString(s) || fold.String(s) != s {
				continue
			}
			switch {
			case unicode.IsLetter(r) || unicode.IsNumber(r):
				t[r] = inertLetter
			case !unicode.Is(unicode.M, r):
				t[r] = inertSep
			}
		}
		bmpClasses = t
	})
	return bmpClasses
}

// classAt returns the class of the rune at s[i] and its length in bytes.
func classAt(classes *[1 << 16]uint8, s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return classes[c], 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r >= 1<<16 || (r == utf8.RuneError && size == 1) {
		return complexRune, size
	}
	return classes[r], size
}

// skipSeparators returns the index of the first rune at or after i that is
// not an inert separator.
func skipSeparators(classes *[1 << 16]uint8, s string, i int) int {
	for i < len(s) {
		c, size := classAt(classes, s, i)
		if c != inertSep {
			break
		}
		i += size
	}
	return i
}

// scanWord returns the end of the word starting at i and whether all its
// runes are inert letters.
func scanWord(classes *[1 << 16]uint8, s string, i int) (end int, simple bool) {
	simple = true
	for i < len(s) {
		c, size := classAt(classes, s, i)
		if c == inertSep {
			break
		}
		if c == complexRune {
			simple = false
		}
		i += size
	}
	return i, simple
}

// lowerASCII lowers only the ASCII letters of s, keeping every byte offset,
// and returns s itself when there is nothing to lower. It makes exactly one
// copy, written eight bytes at a time.
func lowerASCII(s string) string {
	k := 0
	for k+8 <= len(s) && upperMask(load64(s, k)) == 0 {
		k += 8
	}
	for k < len(s) && !('A' <= s[k] && s[k] <= 'Z') {
		k++
	}
	if k == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:k])
	var w [8]byte
	for ; k+8 <= len(s); k += 8 {
		x := load64(s, k)
		binary.LittleEndian.PutUint64(w[:], x|upperMask(x)>>2) // 0x80>>2 == 'a'-'A'
		b.Write(w[:])
	}
	for ; k < len(s); k++ {
		c := s[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// appendSlow applies the full rule to s with x/text. It is correct for any
// input; the fast paths above are optimizations that must agree with it.
func appendSlow(dst []string, s string) []string {
	if !utf8.ValidString(s) {
		// x/text does not promise anything for invalid UTF-8 (norm
		// skips normalizing runes that follow an invalid byte), so turn
		// each run of invalid bytes into U+FFFD first: a symbol, hence a
		// separator as documented, and inert under NFKC and folding.
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = norm.NFKC.String(s)
	f := folders.Get().(*cases.Caser)
	s = f.String(s)
	folders.Put(f)
	s = fixCherokee(s)
	// Case folding does not preserve normalization ("ß\u0301" folds to
	// "ss\u0301", whose NFKC form is "s\u015b"), so without a second NFKC
	// pass the tokens of a text and of its own tokens could differ in
	// bytes while being canonically equivalent, and would hash apart.
	// The pass is a quick check returning s itself in the common case.
	s = norm.NFKC.String(s)

	start := -1 // start of the current token, -1 between tokens
	for i := 0; i < len(s); {
		c := s[i]
		in, size := false, 1
		if c < utf8.RuneSelf {
			in = asciiAlnum[c]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				// Invalid byte: a separator, as documented.
			case unicode.IsLetter(r) || unicode.IsNumber(r):
				in = true
			case unicode.Is(unicode.M, r):
				// A mark extends a run but never starts one, so a stray
				// accent cannot become a token of its own.
				in = start >= 0
			}
		}
		if in {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			dst = append(dst, s[start:i])
			start = -1
		}
		i += size
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

// fixCherokee works around golang/go#46101: x/text's Fold swaps the case of
// Cherokee letters instead of folding both cases to the uppercase letters
// as CaseFolding.txt says (Cherokee is the one script whose fold is
// uppercase, because its lowercase letters were encoded later). Swapping
// is not idempotent, so "Ꭰ" and "ꭰ" would get different tokens and a
// document and its own tokens would tokenize differently. After x/text
// has run, every Cherokee small letter (from either input case) is mapped
// to its capital, which is the fold Unicode specifies.
func fixCherokee(s string) string {
	// Small letters live at U+13F8..U+13FD (lead byte 0xE1) and
	// U+AB70..U+ABBF (lead byte 0xEA); skip the rune walk when neither
	// lead byte occurs.
	if strings.IndexByte(s, 0xE1) < 0 && strings.IndexByte(s, 0xEA) < 0 {
		return s
	}
	return strings.Map(cherokeeFold, s)
}

func cherokeeFold(r rune) rune {
	switch {
	case 0xAB70 <= r && r <= 0xABBF:
		return r - 0xAB70 + 0x13A0
	case 0x13F8 <= r && r <= 0x13FD:
		return r - 0x13F8 + 0x13F0
	}
	return r
}
