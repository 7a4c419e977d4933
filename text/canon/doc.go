// Package canon turns text into the canonical token sequence that neardup
// shingles.
//
// Broder et al. canonicalize a document by "removing HTML formatting and
// converting all words to lowercase"; this package is the "words" and
// "lowercase" half of that (package htmltext is the HTML half), extended
// to Unicode so that text which renders the same tokenizes the same:
//
//  1. NFKC normalization, so that compatibility variants (full-width
//     "ＡＢＣ", the ligature "ﬁ", precomposed versus combining accents)
//     become one spelling;
//  2. full Unicode case folding (golang.org/x/text/cases.Fold), which is
//     lowercasing done right ("Straße" and "STRASSE" both give "strasse");
//  3. splitting into tokens: every letter or number of the scripts
//     written without spaces between words (Han, Hiragana, Katakana,
//     Thai, Lao, Khmer, Myanmar, by the unicode package's Script tables,
//     plus the six Common-script letters used only with Han and kana:
//     U+3006, U+3031..U+3035, U+303C and U+30FC, the prolonged sound
//     mark) is a token of its own, as character-level shingling does for
//     these scripts elsewhere; any other token is a maximal run of the
//     other letters and numbers; combining marks stay with the letter or
//     number they follow (so Thai, Lao, Khmer and Myanmar vowel signs and
//     tone marks stay with their consonant); every other rune (space,
//     punctuation, symbols, invalid UTF-8) is a separator. "abc漢字def"
//     gives "abc", "漢", "字", "def"; "ラーメン" gives four tokens.
//
// Which runes are character tokens is decided on the canonical text, after
// NFKC and folding, one rune at a time. That is what keeps the rule
// idempotent (the joined tokens are canonical text already, with the same
// runes), and it settles the edge cases without a list: halfwidth
// katakana, CJK compatibility ideographs and Kangxi radicals are character
// tokens because NFKC maps them to katakana and unified ideographs; "㌀"
// gives the four katakana it stands for. Digits of the seven scripts
// (Thai "๒", Khmer "១", Han "〇") are character tokens like their
// letters, while ASCII and fullwidth digits (Script Common) still form
// runs, so "2023年" gives "2023" and "年". Hangul and Bopomofo keep their
// runs: Korean is written with spaces. A subscript consonant after a
// Khmer coeng or a Myanmar virama (both marks) is a token of its own,
// the sign staying with the letter before it.
//
// Two corrections keep the result a function of the rendered text only,
// so that Tokens(strings.Join(Tokens(x), " ")) equals Tokens(x): a second
// NFKC pass after folding (folding can denormalize, as in "ß\u0301"), and
// a workaround for x/text folding Cherokee the wrong way
// (golang/go#46101). The tests check idempotence over every rune of the
// Basic Multilingual Plane.
//
// Most web text is ASCII, so the package never runs x/text on ASCII: pure
// ASCII input costs one lowercase copy (none if it has no capital letters)
// plus the token slice, and in mixed text only the words that contain
// non-ASCII bytes are normalized. Tokens are substrings of that lowercase
// copy or of per-word normalized strings, so holding any token keeps its
// backing string alive.
package canon
