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
//  3. splitting into maximal runs of letters and numbers, with combining
//     marks attached to the run they follow, every other rune (space,
//     punctuation, symbols, invalid UTF-8) being a separator.
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
