package canon

import (
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/neardup/neardup/hashing/fingerprint"
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
// then, on that canonical text:
//
//   - every letter or number (unicode.IsLetter, unicode.IsNumber) of the
//     Han, Hiragana, Katakana, Thai, Lao, Khmer and Myanmar scripts (the
//     unicode package's Script tables), and the six Common-script letters
//     used only with Han and kana (U+3006, U+3031..U+3035, U+303C and
//     U+30FC, the prolonged sound mark), is a token by itself, a
//     "character token" (isCharToken): these scripts are written without
//     spaces between words;
//   - any other token is a maximal run of the other letters and numbers;
//   - combining marks (Mn, Mc, Me) right after a letter or number stay in
//     its token, a character token's included (Thai, Lao, Khmer and
//     Myanmar vowel signs and tone marks are marks);
//   - everything else (spaces, punctuation, symbols, a mark with no
//     letter before it) separates tokens.
//
// So "abc漢字def" gives "abc", "漢", "字", "def", and "ภาษาไทย" gives
// one token per letter. Halfwidth katakana, CJK compatibility ideographs
// and Kangxi radicals are character tokens because NFKC maps them to
// katakana and unified ideographs; digits of the seven scripts (Thai
// "๒๕", Han "〇") are character tokens too, while ASCII and fullwidth
// digits (Script Common) still form runs ("2023年" gives "2023", "年").
// Invalid UTF-8 bytes are treated as separators (never panic).
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
	return tokenize(stringSink{dst}, text).dst
}

// AppendHashes appends h.String(t) for every token t of Tokens(text), in
// order, without building the tokens as strings: it is what shingling
// needs, and the hot loop of phase 1. Tokens that are substrings of the
// text are hashed where they stand; only words that need folding or
// normalization are built, in a scratch buffer or by x/text.
func AppendHashes(dst []uint64, h fingerprint.Hasher, text string) []uint64 {
	return tokenize(hashSink{dst, h}, text).dst
}

// A tokenSink receives the tokens of a text in order and returns itself
// updated. The sinks are values of distinct struct types, so the generic
// tokenizer is compiled once for each, its calls to add inline, and
// nothing escapes to the heap.
type tokenSink[S any] interface {
	add(tok string) S
	addBytes(tok []byte) S // tok is scratch: used before the next call
	// charHashes returns the hashes addHash takes for the inertChar
	// runes (indexed by rune), or nil if the sink wants add instead.
	charHashes(t *runeTables) *[1 << 16]uint64
	addHash(h uint64) S // h from charHashes
}

type stringSink struct{ dst []string }

func (s stringSink) add(t string) stringSink                 { s.dst = append(s.dst, t); return s }
func (s stringSink) addBytes(t []byte) stringSink            { s.dst = append(s.dst, string(t)); return s }
func (s stringSink) charHashes(*runeTables) *[1 << 16]uint64 { return nil }
func (s stringSink) addHash(uint64) stringSink               { panic("canon: addHash on a string sink") }

// hashSink is four words: a fifth (say, the character hashes) cost 10 to
// 20% of the throughput on every kind of text, as the sink is passed and
// returned by value at every token.
type hashSink struct {
	dst []uint64
	h   fingerprint.Hasher
}

func (s hashSink) add(t string) hashSink                     { s.dst = append(s.dst, s.h.String(t)); return s }
func (s hashSink) addBytes(t []byte) hashSink                { s.dst = append(s.dst, s.h.Bytes(t)); return s }
func (s hashSink) charHashes(t *runeTables) *[1 << 16]uint64 { return charHashes(t, s.h) }
func (s hashSink) addHash(h uint64) hashSink                 { s.dst = append(s.dst, h); return s }

// Chinese and Japanese text is mostly character tokens, one per three
// bytes, and hashing each one took a third of the time spent on such
// text (the Japanese pages of multilingual-docs tokenized at 55% of the
// speed of the old rule, with its one token per clause). So the hashes of
// all the inertChar runes (28,165 of them) are computed once per hasher
// seed, a fraction of a millisecond, and kept for a few seeds (a process
// normally uses one); a fifth seed and beyond just hash as they go.
const maxCharHashSeeds = 4

type charHashEntry struct {
	seed   uint64
	hashes *[1 << 16]uint64
}

var (
	charHashMu    sync.Mutex
	charHashCache atomic.Pointer[[]charHashEntry] // immutable once published
)

// charHashes returns the hashes by h of the inertChar runes, indexed by
// rune, or nil when maxCharHashSeeds other seeds are cached already.
func charHashes(t *runeTables, h fingerprint.Hasher) *[1 << 16]uint64 {
	if p := charHashCache.Load(); p != nil {
		for _, e := range *p {
			if e.seed == h.Seed() {
				return e.hashes
			}
		}
	}
	charHashMu.Lock()
	defer charHashMu.Unlock()
	var old []charHashEntry
	if p := charHashCache.Load(); p != nil {
		old = *p
	}
	for _, e := range old {
		if e.seed == h.Seed() {
			return e.hashes
		}
	}
	if len(old) >= maxCharHashSeeds {
		return nil
	}
	hashes := new([1 << 16]uint64)
	var buf [utf8.UTFMax]byte
	for r := rune(0); r < 1<<16; r++ {
		if t.class[r] == inertChar {
			hashes[r] = h.Bytes(buf[:utf8.EncodeRune(buf[:], r)])
		}
	}
	entries := append(old[:len(old):len(old)], charHashEntry{h.Seed(), hashes})
	charHashCache.Store(&entries)
	return hashes
}

func tokenize[S tokenSink[S]](out S, text string) S {
	ascii, upper := scanASCII(text)
	if !ascii {
		return scanMixed(out, text)
	}
	// NFKC and case folding are the identity on ASCII apart from A-Z, so
	// lowering is the whole normalization, and tokens can be substrings of
	// the one lowered copy (or of text itself when nothing needs lowering).
	if upper {
		text = lowerASCII(text)
	}
	return scanLoweredASCII(out, text)
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

// scanLoweredASCII splits lowered ASCII text into tokens.
func scanLoweredASCII[S tokenSink[S]](out S, s string) S {
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
			out = out.add(s[j:i])
		}
	}
	return out
}

// scanMixed tokenizes text that contains non-ASCII bytes. Real-world
// text is mostly ASCII or mostly runes whose canonical form is known rune
// by rune (lowercase Cyrillic, CJK, kana, Hangul syllables; capitals that
// fold to one of those), so rather than normalizing the whole document it
// sends only regions with "complex" words through x/text, and builds
// every other token from one ASCII-lowered copy of text and a per-rune
// fold table.
//
// Runes are classed by the rune tables: letters, character tokens
// (isCharToken) and separators that are inert (NFKC leaves them alone,
// nothing composes with them from behind, folding maps them to
// themselves), folding letters (nothing composes with them from behind,
// and the whole rule maps each one alone to a fixed string of inert
// letters, as 'Б' to 'б' or 'É' to 'é'), folding characters (the same,
// to one inert character token, as 'ｶ' to 'カ'), inert marks, and
// complex runes (everything else, including most marks and invalid
// bytes). A word is a maximal run of non-separators in which a character
// token can only come first (scanWord); it is simple if all its runes are
// inert (or ASCII alphanumerics), folded if it also has folding runes. A
// simple word is already canonical except for ASCII case; a folded word
// is the concatenation of its runes' images. Runs of inert character
// tokens, most of Chinese and Japanese text, are emitted rune by rune,
// with their hashes taken from a per-seed table (charHashes). A complex
// region starts at the separators before a complex word and runs to the
// end of the last complex word before the next simple or folded one.
// Cutting there cannot change the result: each cut is right before a rune
// that starts a new NFKC segment (no composition has one as its second
// element), that NFKC and folding map on their own, and that either
// separates or starts a token whatever precedes it (a separator, or a
// character token); and case folding is context free.
// TestChunkedMatchesWhole, TestEveryBMPRuneMatchesWhole and
// TestRealCorporaMatchWhole check this against the rule applied to the
// whole text.
func scanMixed[S tokenSink[S]](out S, text string) S {
	// Lowering only ASCII bytes keeps every byte offset, so lower[j:i]
	// is the lowered form of text[j:i].
	lower := lowerASCII(text)
	t := loadTables()
	chars := out.charHashes(t)
	var buf []byte // folded words, allocated at the first one
	i := 0
	for i < len(text) {
		j, c, size := skipSeparators(t, text, i)
		if j == len(text) {
			break
		}
		// Runs of inert character tokens, the bulk of Chinese and
		// Japanese text, are taken rune by rune: each is a token as it
		// stands, unless a mark or a complex rune follows it (which
		// could attach or compose, so scanWord decides). The rune after
		// an emitted one is a starter that combines with nothing before
		// it, so cutting there is safe.
		if c == inertChar {
			k := j
			r := decode3(text, k)
			for {
				// Every inertChar rune is at or above U+0E01, so three
				// bytes long. The next rune is decoded here for the
				// common case of another three-byte one (classAt is a
				// call).
				e := k + 3
				next, nr := inertSep, rune(0)
				if e < len(text) {
					if b := text[e]; b >= 0xE0 && b < 0xF0 && e+2 < len(text) && text[e+1]&0xC0 == 0x80 && text[e+2]&0xC0 == 0x80 {
						nr = decode3(text, e)
						if nr >= 0x800 && (nr < 0xD800 || nr > 0xDFFF) {
							next = t.class[nr]
						} else {
							next, _ = t.classAt(text, e)
						}
					} else {
						// Not a valid three-byte sequence, so not an
						// inertChar rune either.
						next, _ = t.classAt(text, e)
					}
					if next == inertMark || next == complexRune {
						break
					}
				}
				if chars != nil {
					out = out.addHash(chars[r])
				} else {
					out = out.add(text[k:e])
				}
				k = e
				if next != inertChar {
					break
				}
				r = nr
			}
			if k > j {
				i = k
				continue
			}
		}
		end, kind := scanWord(t, text, j, c, size)
		switch kind {
		case wordSimple:
			out = out.add(lower[j:end])
			i = end
			continue
		case wordFolded:
			buf = t.appendFolded(buf[:0], lower[j:end])
			out = out.addBytes(buf)
			i = end
			continue
		}
		for {
			k, c, size := skipSeparators(t, text, end)
			if k == len(text) {
				break
			}
			m, kind := scanWord(t, text, k, c, size)
			if kind != wordComplex {
				break
			}
			end = m
		}
		// Starting at i, not j, keeps the separators before the word in
		// the region, so a word that starts with a mark still sees what
		// it could compose with.
		out = scanSlow(out, text[i:end])
		i = end
	}
	return out
}

// Rune classes for scanMixed, from the cheapest to handle.
const (
	complexRune uint8 = iota // needs x/text
	inertLetter              // a letter or number that is its own canonical form (not a character token)
	inertSep                 // a separator that is its own canonical form
	foldLetter               // maps alone to a fixed string of inert letters
	inertMark                // a combining mark that is its own canonical form and starts an NFKC segment
	inertChar                // a character token (isCharToken) that is its own canonical form
	foldChar                 // maps alone to one inert character token (halfwidth kana, compatibility ideographs)
)

// Word kinds for scanMixed, ordered so that a word's kind is the largest
// of its runes' kinds.
const (
	wordSimple  = iota // inert letters and ASCII alphanumerics only
	wordFolded         // and folding letters
	wordComplex        // and complex runes: x/text decides
)

// runeTables are the per-rune facts scanMixed needs for the Basic
// Multilingual Plane: the class of every rune, and the image of every
// folding letter (folds[foldIndex[r]]).
type runeTables struct {
	class     [1 << 16]uint8
	foldIndex [1 << 16]uint16
	folds     []string
}

var (
	tablesOnce sync.Once
	bmpTables  *runeTables
)

// loadTables builds, on first use, the tables of every rune of the Basic
// Multilingual Plane by asking x/text about each one. That takes a few
// tens of milliseconds once per process, and afterwards costs one table
// load per rune instead of x/text's per-rune trie walks (which make NFKC
// plus folding cost well over 100 ns per rune). Runes above the BMP are
// rare enough in text to always go to x/text.
func loadTables() *runeTables {
	tablesOnce.Do(func() {
		t := new(runeTables)
		t.folds = []string{""}
		fold := cases.Fold()
		var buf [utf8.UTFMax]byte
		for r := rune(0); r < 1<<16; r++ {
			if r < utf8.RuneSelf {
				if asciiAlnum[r] {
					t.class[r] = inertLetter
				} else {
					t.class[r] = inertSep
				}
				continue
			}
			if 0xD800 <= r && r < 0xE000 {
				continue // surrogates never decode; invalid bytes stay complex
			}
			s := string(buf[:utf8.EncodeRune(buf[:], r)])
			if !norm.NFKC.PropertiesString(s).BoundaryBefore() {
				continue
			}
			if norm.NFKC.IsNormalString(s) && fold.String(s) == s {
				switch {
				case isCharToken(r):
					t.class[r] = inertChar
				case unicode.IsLetter(r) || unicode.IsNumber(r):
					t.class[r] = inertLetter
				case !unicode.Is(unicode.M, r):
					t.class[r] = inertSep
				default:
					// A mark extends a token but never starts one, so it
					// is as good as a letter inside a word; scanWord
					// sends a word that starts with one to x/text.
					t.class[r] = inertMark
				}
			}
		}
		// A folding letter is judged by what the rule makes of it alone,
		// once every inert letter is known: a canonical form made of
		// inert letters only (so one token, and no separator dropped).
		for r := rune(0x80); r < 1<<16; r++ {
			if t.class[r] != complexRune || (0xD800 <= r && r < 0xE000) {
				continue
			}
			s := string(buf[:utf8.EncodeRune(buf[:], r)])
			if !norm.NFKC.PropertiesString(s).BoundaryBefore() {
				continue
			}
			img := canonicalForm(s)
			if img != "" && allSeparators(img) {
				// A separator whatever it becomes (a no-break space, an
				// ellipsis, fullwidth punctuation): it can only ever
				// separate, and it starts a new NFKC segment, so it is
				// skipped like an inert one. An empty image would join
				// its neighbours instead, so it stays complex.
				t.class[r] = inertSep
				continue
			}
			if len(t.folds) == 1<<16 {
				continue
			}
			switch {
			case t.isInertChar(img):
				// Halfwidth katakana, CJK compatibility ideographs,
				// Kangxi radicals: a character token of their own,
				// whose text is the image.
				t.class[r] = foldChar
			case img != "" && t.allInertLetters(img):
				t.class[r] = foldLetter
			default:
				// Images mixing character tokens with anything
				// ("㌀" is four katakana, Thai sara am a mark and a
				// letter) stay complex.
				continue
			}
			t.foldIndex[r] = uint16(len(t.folds))
			t.folds = append(t.folds, img)
		}
		bmpTables = t
	})
	return bmpTables
}

// allSeparators reports whether no rune of s belongs to a token: no
// letter, number or mark (invalid bytes are separators too).
func allSeparators(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r) {
			return false
		}
	}
	return true
}

// isInertChar reports whether s is exactly one rune of class inertChar.
func (t *runeTables) isInertChar(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	return size == len(s) && r < 1<<16 && t.class[r] == inertChar
}

func (t *runeTables) allInertLetters(s string) bool {
	for _, r := range s {
		if r >= 1<<16 || t.class[r] != inertLetter {
			return false
		}
	}
	return true
}

// classAt returns the class of the rune at s[i] and its length in bytes.
func (t *runeTables) classAt(s string, i int) (uint8, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return t.class[c], 1
	}
	// Two- and three-byte sequences (every BMP rune) are decoded here:
	// utf8.DecodeRuneInString takes a function call per rune for them,
	// a sixth of phase 1 on text that is mostly not ASCII. Anything
	// else, invalid bytes included, takes the library's path.
	switch {
	case c >= 0xC2 && c < 0xE0 && i+1 < len(s):
		if c1 := s[i+1]; c1&0xC0 == 0x80 {
			return t.class[rune(c&0x1F)<<6|rune(c1&0x3F)], 2
		}
	case c >= 0xE0 && c < 0xF0 && i+2 < len(s):
		c1, c2 := s[i+1], s[i+2]
		if c1&0xC0 == 0x80 && c2&0xC0 == 0x80 {
			// Not overlong (E0 80..9F) and not a surrogate (ED A0..BF).
			if r := rune(c&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F); r >= 0x800 && (r < 0xD800 || r > 0xDFFF) {
				return t.class[r], 3
			}
		}
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r >= 1<<16 || (r == utf8.RuneError && size == 1) {
		return complexRune, size
	}
	return t.class[r], size
}

// appendFolded appends the canonical form of a folded word, given ASCII
// lowered: ASCII, inert letters and marks as they are, folding letters
// (and a folding character token) replaced by their images.
func (t *runeTables) appendFolded(dst []byte, word string) []byte {
	for i := 0; i < len(word); {
		c := word[i]
		if c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(word[i:])
		if c := t.class[r]; c == foldLetter || c == foldChar {
			dst = append(dst, t.folds[t.foldIndex[r]]...)
		} else {
			dst = append(dst, word[i:i+size]...)
		}
		i += size
	}
	return dst
}

// decode3 decodes the three-byte UTF-8 sequence at s[i] without checking it.
func decode3(s string, i int) rune {
	return rune(s[i]&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
}

// skipSeparators returns the index j of the first rune at or after i that
// is not an inert separator, and that rune's class and size (inertLetter
// and 1 for ASCII letters and digits; undefined when j == len(s)).
func skipSeparators(t *runeTables, s string, i int) (j int, class uint8, size int) {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiAlnum[c] {
				return i, inertLetter, 1
			}
			i++
			continue
		}
		c, size := t.classAt(s, i)
		if c != inertSep {
			return i, c, size
		}
		i += size
	}
	return i, inertSep, 0
}

// scanWord returns the end of the word starting at i, whose first rune
// has class c and size bytes, and the word's kind. A word is a maximal run
// of non-separators in which a character token (class inertChar or
// foldChar) can only come first: it ends right before the next one, and
// a word that starts with one ends at the first rune after it that is not
// an inert mark, unless that rune is complex, in which case the word (now
// complex) goes on as any other does.
func scanWord(t *runeTables, s string, i int, c uint8, size int) (end, kind int) {
	switch c {
	case inertChar, foldChar:
		if c == foldChar {
			kind = wordFolded
		}
		i += size
		for i < len(s) && s[i] >= utf8.RuneSelf {
			c, size := t.classAt(s, i)
			if c == complexRune {
				return scanRest(t, s, i+size)
			}
			if c != inertMark {
				break
			}
			i += size
		}
		return i, kind
	case foldLetter:
		kind = wordFolded
	case complexRune, inertMark:
		// A mark starting a word is not part of a token.
		return scanRest(t, s, i+size)
	}
	i += size
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !asciiAlnum[c] {
				return i, kind
			}
			i++
			continue
		}
		c, size := t.classAt(s, i)
		switch c {
		case inertSep, inertChar, foldChar:
			// A character token never continues a word: it starts
			// one (the case above).
			return i, kind
		case foldLetter:
			kind = max(kind, wordFolded)
		case complexRune:
			return scanRest(t, s, i+size)
		}
		i += size
	}
	return i, kind
}

// scanRest returns the end of a complex word from i on: the next
// separator or character token.
func scanRest(t *runeTables, s string, i int) (end, kind int) {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if !asciiAlnum[c] {
				return i, wordComplex
			}
			i++
			continue
		}
		c, size := t.classAt(s, i)
		if c == inertSep || c == inertChar || c == foldChar {
			return i, wordComplex
		}
		i += size
	}
	return i, wordComplex
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
// input; the fast paths are optimizations that must agree with it, and the
// tests hold them to it.
func appendSlow(dst []string, s string) []string {
	return scanSlow(stringSink{dst}, s).dst
}

func scanSlow[S tokenSink[S]](out S, s string) S {
	s = canonicalForm(s)
	start := -1   // start of the current token, -1 between tokens
	char := false // the current token is a character token
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiAlnum[c] {
				if start >= 0 && char {
					out = out.add(s[start:i])
					start = -1
				}
				if start < 0 {
					start, char = i, false
				}
			} else if start >= 0 {
				out = out.add(s[start:i])
				start = -1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// Invalid byte: a separator, as documented (canonicalForm
			// has replaced them all, so this is only defensive).
			if start >= 0 {
				out = out.add(s[start:i])
				start = -1
			}
		case isCharToken(r):
			// A token of its own, whatever precedes it.
			if start >= 0 {
				out = out.add(s[start:i])
			}
			start, char = i, true
		case unicode.IsLetter(r) || unicode.IsNumber(r):
			if start >= 0 && char {
				out = out.add(s[start:i])
				start = -1
			}
			if start < 0 {
				start, char = i, false
			}
		case unicode.Is(unicode.M, r):
			// A mark extends the current token (a run or a character
			// token alike) but never starts one, so a stray accent
			// cannot become a token of its own.
		default:
			if start >= 0 {
				out = out.add(s[start:i])
				start = -1
			}
		}
		i += size
	}
	if start >= 0 {
		out = out.add(s[start:])
	}
	return out
}

// charScripts are the scripts written without spaces between words
// whose letters and numbers are each a token of its own (isCharToken).
var charScripts = []*unicode.RangeTable{
	unicode.Han, unicode.Hiragana, unicode.Katakana,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar,
}

// isCharToken reports whether r, a rune of the canonical text (after NFKC
// and folding), is a character token: a letter or number (L, N) whose
// Unicode Script is Han, Hiragana, Katakana, Thai, Lao, Khmer or Myanmar,
// or one of the six letters of Script Common that are used only in Han
// and kana text (their Script_Extensions are Han, Hiragana and Katakana
// only): U+3006 〆, U+3031..U+3035 (vertical kana repeat marks), U+303C
// 〼 and U+30FC ー (the prolonged sound mark, which halfwidth U+FF70
// becomes under NFKC). Without that short list "ラーメン" would still give
// one token per character, but "ー" would join an adjacent Latin letter
// or digit into one token and runs of "ーー" would be one token.
//
// The predicate is a property of one rune of the canonical text, which
// is what keeps the rule idempotent: the tokens are canonical already and
// a space composes with nothing, so re-tokenizing their join sees the
// same runes and cuts at the same places.
func isCharToken(r rune) bool {
	switch {
	case r < 0x0E01: // the first rune of the seven scripts (Thai ko kai)
		return false
	case r == 0x3006 || 0x3031 <= r && r <= 0x3035 || r == 0x303C || r == 0x30FC:
		return true
	}
	return (unicode.IsLetter(r) || unicode.IsNumber(r)) && unicode.In(r, charScripts...)
}

// canonicalForm is the rule's text before splitting: NFKC, full case
// folding, Cherokee fixed, NFKC again.
func canonicalForm(s string) string {
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
	return norm.NFKC.String(s)
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
