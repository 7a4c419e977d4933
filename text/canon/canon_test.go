package canon

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/quick"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/neardup/neardup/hashing/fingerprint"
)

func TestTokens(t *testing.T) {
	fold := func(s string) string { return cases.Fold().String(s) }
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"only separators", " \t\n.,;!?-- ", nil},
		{"ascii", "A rose is a Rose, IS a ROSE!", []string{"a", "rose", "is", "a", "rose", "is", "a", "rose"}},
		{"ascii digits", "route 66 and 3.14", []string{"route", "66", "and", "3", "14"}},
		{"punctuation splits", "don't e-mail foo@bar.com", []string{"don", "t", "e", "mail", "foo", "bar", "com"}},
		{"underscore separates", "snake_case", []string{"snake", "case"}},
		{"german sharp s", "Straße STRASSE straße", []string{"strasse", "strasse", "strasse"}},
		{"capital sharp s", "GROẞ", []string{"gross"}},
		// Default (non-Turkic) folding: whatever x/text does, asserted
		// against cases.Fold itself so that only our tokenization is
		// under test. "İ" folds to "i" + U+0307, and the mark stays in
		// the token; dotless "ı" has no fold.
		{"turkish dotted capital I", "İstanbul", []string{fold("İstanbul")}},
		{"turkish dotless i", "ılık", []string{fold("ılık")}},
		{"full-width", "ＡＢＣ　ｄｅｆ１２", []string{"abc", "def12"}},
		{"ligature fi", "ﬁnd the ﬂag", []string{"find", "the", "flag"}},
		{"combining accent composes", "cafe\u0301 CAFÉ", []string{"café", "café"}},
		{"mark after run stays", "x\u20dd y", []string{"x\u20dd", "y"}},
		{"mark after separator separates", "a \u0301b", []string{"a", "b"}},
		{"cjk", "日本語のテキスト、中文。", []string{"日", "本", "語", "の", "テ", "キ", "ス", "ト", "中", "文"}},
		{"hangul", "한국어 텍스트", []string{"한국어", "텍스트"}},
		{"devanagari with spacing marks", "हिन्दी भाषा", []string{"हिन्दी", "भाषा"}},
		{"other numbers", "Ⅻ ½ ²", []string{"xii", "1", "2", "2"}},
		{"arabic digits", "١٢٣ abc", []string{"١٢٣", "abc"}},
		{"greek final sigma", "ΟΔΟΣ οδος οδος", []string{"οδοσ", "οδοσ", "οδοσ"}},
		{"nbsp and curly quotes", "“Hello”\u00a0world’s", []string{"hello", "world", "s"}},
		{"emoji separates", "fire🔥water", []string{"fire", "water"}},
		// \xc3 followed by '(' is an invalid sequence: the lone \xc3
		// separates, and so does '('; the trailing \xe2\x82 is truncated.
		{"invalid utf8 separates", "ab\xffcd\xc3(ef\xe2\x82", []string{"ab", "cd", "ef"}},
		// Found by fuzzing: x/text's NFKC leaves a rune after an invalid
		// byte unnormalized (U+0678 is NFKC "\u064a\u0674").
		{"normalized after invalid byte", "\xf6\u0678", []string{"\u064a\u0674"}},
		{"cherokee folds to capitals", "Ꭰ ꭰ ᏸ", []string{"Ꭰ", "Ꭰ", "Ᏸ"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tokens(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestCharacterTokens covers the scripts written without spaces, whose
// letters and numbers are each a token (isCharToken), with the marks that
// follow them.
func TestCharacterTokens(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"kanji and kana", "東京へ行きます。", []string{"東", "京", "へ", "行", "き", "ま", "す"}},
		{"katakana word", "テキスト", []string{"テ", "キ", "ス", "ト"}},
		// U+30FC is Script Common but a character token all the same,
		// so it never joins Latin letters or digits, nor itself.
		{"prolonged sound mark", "ラーメン aー1 ーー", []string{"ラ", "ー", "メ", "ン", "a", "ー", "1", "ー", "ー"}},
		{"iteration marks", "人々 いすゞ 〆切", []string{"人", "々", "い", "す", "ゞ", "〆", "切"}},
		// NFKC maps halfwidth katakana to fullwidth (U+FF70 to U+30FC)
		// and composes a halfwidth voiced mark with its kana.
		{"halfwidth katakana", "ｶﾀｶﾅ ﾗｰﾒﾝ ｶﾞｷﾞ", []string{"カ", "タ", "カ", "ナ", "ラ", "ー", "メ", "ン", "ガ", "ギ"}},
		{"combining voiced mark", "か\u3099", []string{"が"}},
		{"squared katakana", "㌀", []string{"ア", "パ", "ー", "ト"}},
		{"simplified chinese", "中华人民共和国成立于1949年。", []string{"中", "华", "人", "民", "共", "和", "国", "成", "立", "于", "1949", "年"}},
		{"traditional chinese", "繁體中文，臺灣", []string{"繁", "體", "中", "文", "臺", "灣"}},
		{"compatibility ideographs and radicals", "\uf900 ⼀⼆ ㊀ ㈠", []string{"\u8c48", "一", "二", "一", "一"}},
		{"cjk digits", "2023年5月 ２０２３年 二〇二三年 〡〢", []string{"2023", "年", "5", "月", "2023", "年", "二", "〇", "二", "三", "年", "〡", "〢"}},
		{"latin around han", "abc漢字def", []string{"abc", "漢", "字", "def"}},
		{"fullwidth latin next to han", "ＬＩＮＵＸ漢字ＡＢＣ１２", []string{"linux", "漢", "字", "abc12"}},
		{"mixed latin and katakana", "Linuxカーネル2.6", []string{"linux", "カ", "ー", "ネ", "ル", "2", "6"}},
		// Thai vowel signs and tone marks (Mn) stay with the letter
		// before them; leading vowels (เ, ไ) are letters.
		{"thai", "ภาษาไทย สวัสดี ไม่", []string{"ภ", "า", "ษ", "า", "ไ", "ท", "ย", "ส", "วั", "ส", "ดี", "ไ", "ม่"}},
		// Sara am (U+0E33) is NFKC nikhahit (Mn) plus sara aa (Lo).
		{"thai sara am", "น้ำ", []string{"น\u0e49\u0e4d", "\u0e32"}},
		{"thai marks reordered", "ก\u0e48\u0e38", []string{"ก\u0e38\u0e48"}},
		{"thai digits", "๒๕๖๖", []string{"๒", "๕", "๖", "๖"}},
		{"lao", "ພາສາລາວ ເມືອງ", []string{"ພ", "າ", "ສ", "າ", "ລ", "າ", "ວ", "ເ", "ມື", "ອ", "ງ"}},
		// Khmer subscript consonants follow a coeng (U+17D2, Mn), which
		// stays with the letter before it; the subscript letter is a
		// token of its own.
		{"khmer", "ភាសាខ្មែរ ១២", []string{"ភា", "សា", "ខ្", "មែ", "រ", "១", "២"}},
		{"myanmar", "မြန်မာ ၁၉", []string{"မြ", "န်", "မာ", "၁", "၉"}},
		{"mark after separator", "a \u0e48ก", []string{"a", "ก"}},
		{"hangul keeps words", "한국어 텍스트", []string{"한국어", "텍스트"}},
		{"bopomofo keeps words", "ㄅㄆㄇ", []string{"ㄅㄆㄇ"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Tokens(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestInvalidUTF8NeverPanics(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		for _, tok := range Tokens(string(b)) {
			if tok == "" || !utf8.ValidString(tok) {
				t.Fatalf("Tokens(%q) produced bad token %q", b, tok)
			}
		}
	}
}

func TestAppendTokensReusesSlice(t *testing.T) {
	dst := make([]string, 0, 16)
	dst = append(dst, "keep")
	got := AppendTokens(dst, "One two")
	if want := []string{"keep", "one", "two"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if &got[0] != &dst[:1][0] {
		t.Error("AppendTokens reallocated a slice that had capacity")
	}
}

func TestASCIINoUppercaseAllocatesOnlyTheSlice(t *testing.T) {
	dst := make([]string, 0, 64)
	text := "plain lower case ascii text with 42 words or so"
	allocs := testing.AllocsPerRun(100, func() { dst = AppendTokens(dst[:0], text) })
	if allocs != 0 {
		t.Errorf("AppendTokens on lowercase ASCII: %v allocs, want 0", allocs)
	}
	text = "Some Upper Case ASCII"
	allocs = testing.AllocsPerRun(100, func() { dst = AppendTokens(dst[:0], text) })
	if allocs != 1 {
		t.Errorf("AppendTokens on ASCII with capitals: %v allocs, want 1 (the lowercase copy)", allocs)
	}
}

// interesting is an alphabet that exercises every branch of the rule:
// ASCII letters of both cases, separators, non-ASCII letters with
// decompositions and folds, combining marks, compatibility characters,
// numbers, symbols and the bytes of invalid UTF-8.
var interesting = []string{
	"a", "B", "z", "Q", "0", "9", " ", ".", "-", "=", "<", "\t", "_",
	"é", "E", "\u0301", "\u0308", "\u0338", "\u0345", "ß", "ẞ", "İ", "ı", "Σ", "ς",
	"ﬁ", "Ａ", "ｂ", "１", "½", "Ⅻ", "ǰ", "ΐ", "Ω", "K", "ſ",
	"日", "本", "한", "\u1100", "\u1161", "\u11a8", "ा", "्", "क",
	"Ꭰ", "ꭰ", "ᏸ", "Ᏸ", "🔥", "\u00a0", "\u200b", "\ufffd",
	"б", "Б", "и", "\u0306", "й", "。", "—", "«", "€", "\u3099", "か", "𝐀", "\U00020000",
	"\u0678", "ǅ", "\u1e9b", "\ufb03",
	"ー", "ｶ", "ﾞ", "ｰ", "々", "〇", "㌀", "\uf900", "⼀", "ก", "\u0e48", "\u0e38", "\u0e33", "๒",
	"ເ", "\u0eb7", "ខ", "\u17d2", "ែ", "မ", "\u103a", "\u102e", "ဥ",
	"\xff", "\xc3", "\x80", "\xe2\x82",
}

func randomText(r *rand.Rand, alphabet []string, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// TestChunkedMatchesWhole checks the optimization in scanMixed: only
// normalizing the words that contain non-ASCII bytes must give the same
// tokens as applying the rule (appendSlow) to the whole text at once.
func TestChunkedMatchesWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		in := randomText(r, interesting, r.IntN(12))
		got := Tokens(in)
		want := appendSlow(nil, in)
		if !slices.Equal(got, want) {
			t.Fatalf("Tokens(%q) = %q, whole-text rule gives %q", in, got, want)
		}
		checkHashes(t, in, AppendHashes(nil, testHasher, in), want)
	}
}

// TestFastPathMatchesSlowPath: on ASCII input the ASCII path must agree
// with the x/text path.
func TestFastPathMatchesSlowPath(t *testing.T) {
	f := func(b []byte) bool {
		for i := range b {
			b[i] &= 0x7f
		}
		s := string(b)
		return slices.Equal(Tokens(s), appendSlow(nil, s))
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 5000, Rand: newQuickRand()}); err != nil {
		t.Error(err)
	}
}

func TestIdempotent(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		in := randomText(r, interesting, r.IntN(12))
		once := Tokens(in)
		twice := Tokens(strings.Join(once, " "))
		if !slices.Equal(once, twice) {
			t.Fatalf("Tokens(%q) = %q but re-tokenizing gives %q", in, once, twice)
		}
	}
}

// TestIdempotentEveryBMPRune is the exhaustive form of TestIdempotent for
// single runes, alone and after a letter (so that marks attach), and also
// checks that the output is NFKC and fold-stable.
func TestIdempotentEveryBMPRune(t *testing.T) {
	var buf []string
	for r := rune(0); r < 0x10000; r++ {
		if 0xD800 <= r && r < 0xE000 {
			continue
		}
		for _, in := range []string{string(r), "a" + string(r)} {
			buf = AppendTokens(buf[:0], in)
			for _, tok := range buf {
				if !norm.NFKC.IsNormalString(tok) {
					t.Errorf("Tokens(%q) has non-NFKC token %q", in, tok)
				}
			}
			again := Tokens(strings.Join(buf, " "))
			if !slices.Equal(buf, again) {
				t.Errorf("%U: Tokens(%q) = %q, re-tokenized %q", r, in, buf, again)
			}
		}
	}
}

func TestASCIIUpperEqualsLower(t *testing.T) {
	f := func(b []byte) bool {
		for i := range b {
			b[i] &= 0x7f
		}
		s := string(b)
		return slices.Equal(Tokens(strings.ToUpper(s)), Tokens(s))
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 5000, Rand: newQuickRand()}); err != nil {
		t.Error(err)
	}
}

func TestConsistentWithFold(t *testing.T) {
	// Tokenizing is insensitive to case in the Unicode sense: folding the
	// input first changes nothing. U+0345 is left out: it is a combining
	// mark that folds to the letter ι, so folding before NFKC has
	// reordered the marks gives a different string (the reason Unicode's
	// canonical caseless match is NFD(fold(NFD(x))), not fold(x)). The
	// rule normalizes first, which is the order that respects rendering.
	alphabet := slices.DeleteFunc(slices.Clone(interesting), func(s string) bool { return s == "\u0345" })
	r := rand.New(rand.NewPCG(7, 8))
	for range 5000 {
		in := randomText(r, alphabet, r.IntN(10))
		if !utf8.ValidString(in) {
			continue
		}
		a, b := Tokens(in), Tokens(cases.Fold().String(in))
		if !slices.Equal(a, b) {
			t.Fatalf("Tokens(%+q) = %+q, Tokens(Fold) = %+q", in, a, b)
		}
	}
}

// FuzzTokens checks, on any input: the fast paths agree with the rule
// applied to the whole text (appendSlow); AppendTokens leaves dst alone;
// every token is a non-empty, valid, NFKC-normal run of letters, numbers
// and marks that starts with a letter or number (so holds no separator)
// and is a whole token on its own; re-tokenizing the joined tokens gives
// them back; and on ASCII input the tokens are the lowercased maximal runs
// of [0-9A-Za-z], a reference independent of the package's code.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{"", "A rose is a rose", "Straße", "e\u0301", "\xff\xfe", "ﬁ ＡＢＣ", "Ꭰꭰ", "\xf6ٸ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Tokens(s)
		want := appendSlow(nil, s)
		checkHashes(t, s, AppendHashes(nil, testHasher, s), want)
		if !slices.Equal(got, want) {
			t.Fatalf("Tokens(%q) = %q, whole-text rule %q", s, got, want)
		}
		if app := AppendTokens([]string{"keep"}, s); app[0] != "keep" || !slices.Equal(app[1:], got) {
			t.Fatalf("AppendTokens([keep], %q) = %q, want keep then %q", s, app, got)
		}
		for _, tok := range got {
			checkToken(t, s, tok)
		}
		if again := Tokens(strings.Join(got, " ")); !slices.Equal(got, again) {
			t.Fatalf("not idempotent on %q: %q then %q", s, got, again)
		}
		if isASCII(s) {
			if want := asciiTokens(s); !slices.Equal(got, want) {
				t.Fatalf("Tokens(%q) = %q, ASCII reference %q", s, got, want)
			}
		}
	})
}

// checkToken checks that tok, a token of s, is a well-formed token.
func checkToken(t *testing.T, s, tok string) {
	t.Helper()
	if tok == "" || !utf8.ValidString(tok) || !norm.NFKC.IsNormalString(tok) {
		t.Fatalf("Tokens(%q): token %+q is empty, invalid UTF-8 or not NFKC", s, tok)
	}
	for i, r := range tok {
		letter := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r)
		if !letter && (i == 0 || !unicode.Is(unicode.M, r)) {
			t.Fatalf("Tokens(%q): token %+q has separator or leading mark %U at byte %d", s, tok, r, i)
		}
		// A character token is one rune and its marks.
		if i > 0 && letter {
			if first, _ := utf8.DecodeRuneInString(tok); isCharToken(first) || isCharToken(r) {
				t.Fatalf("Tokens(%q): token %+q has character token %U at byte %d", s, tok, r, i)
			}
		}
	}
	if alone := Tokens(tok); len(alone) != 1 || alone[0] != tok {
		t.Fatalf("Tokens(%q): token %+q tokenizes on its own to %+q", s, tok, alone)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiTokens is the rule restricted to ASCII, written independently:
// maximal runs of [0-9A-Za-z], lowercased.
func asciiTokens(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
	}) {
		out = append(out, strings.ToLower(f))
	}
	return out
}

func ExampleTokens() {
	fmt.Printf("%q\n", Tokens("A <b>rose</b> is a ROSE, is ＡＲＯＳＥ — Straße café!"))
	// Output: ["a" "b" "rose" "b" "is" "a" "rose" "is" "arose" "strasse" "café"]
}

func ExampleAppendTokens() {
	var buf []string
	for _, doc := range []string{"First document.", "Second one"} {
		buf = AppendTokens(buf[:0], doc)
		fmt.Println(len(buf), buf)
	}
	// Output:
	// 2 [first document]
	// 2 [second one]
}

var sink []string

func BenchmarkTokens(b *testing.B) {
	ascii := strings.Repeat("The quick brown Fox jumps over the lazy dog; it's 2024, and 42 rabbits watch. ", 50)
	mixed := strings.Repeat("The quick brown Fox jumps over the “lazy” dog — café, naïve, Straße. ", 50)
	nonLatin := strings.Repeat("Быстрая коричневая лиса прыгает через ленивую собаку. 日本語のテキスト。", 50)
	for _, bc := range []struct{ name, text string }{{"ascii", ascii}, {"mixed", mixed}, {"nonlatin", nonLatin}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			b.ReportAllocs()
			var dst []string
			for b.Loop() {
				dst = AppendTokens(dst[:0], bc.text)
			}
			sink = dst
		})
	}
}

// TestEveryBMPRuneMatchesWhole runs every BMP rune through scanMixed in
// contexts that touch each cut rule (inside and around ASCII, inert and
// complex words and separators) and compares with the rule applied to the
// whole text.
func TestEveryBMPRuneMatchesWhole(t *testing.T) {
	templates := []string{"%", "a%b", "% x", "x %", "я%", "%я", "。%", "%。", "Я %", "% Я", "É%", "%É", "Éa%", "%Яb", "%%", "a%%b", "a %% b", "%a%", "क%", "क%b", "%\u0E35", "a%\u0E35",
		"a\u0301 %", "%\u0301", "% \u0301",
		"日%", "%日", "a日%", "%ｶ", "ก%\u0e48"}
	var got, want []string
	var hashes []uint64
	for r := rune(0x80); r < 0x10000; r++ {
		if 0xD800 <= r && r < 0xE000 {
			continue
		}
		for _, tmpl := range templates {
			in := strings.ReplaceAll(tmpl, "%", string(r))
			got = AppendTokens(got[:0], in)
			want = appendSlow(want[:0], in)
			if !slices.Equal(got, want) {
				t.Fatalf("%U: Tokens(%+q) = %+q, whole-text rule %+q", r, in, got, want)
			}
			hashes = AppendHashes(hashes[:0], testHasher, in)
			checkHashes(t, in, hashes, want)
		}
	}
}

// TestConcurrent exercises the shared state (the folder pool and the
// lazily built rune table) from several goroutines; run with -race.
func TestConcurrent(t *testing.T) {
	texts := []string{"Straße Ꭰ café", "日本語 ﬁnd", "ASCII Only", "Быстрая лиса"}
	want := make([][]string, len(texts))
	for i, s := range texts {
		want[i] = appendSlow(nil, s)
	}
	done := make(chan bool)
	for g := range 4 {
		go func() {
			defer func() { done <- true }()
			for i := range 200 {
				k := (g + i) % len(texts)
				if got := Tokens(texts[k]); !slices.Equal(got, want[k]) {
					t.Errorf("Tokens(%q) = %q, want %q", texts[k], got, want[k])
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}

// testHasher is the hasher the differential tests compare AppendHashes
// with: any seed must do, so not the default one.
var testHasher = fingerprint.New(0x5eed)

// checkHashes fails unless hashes are the fingerprints of want, the
// tokens of in by the whole-text rule.
func checkHashes(t testing.TB, in string, hashes []uint64, want []string) {
	t.Helper()
	ok := len(hashes) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = hashes[i] == testHasher.String(want[i])
	}
	if !ok {
		t.Fatalf("AppendHashes(%+q) = %x, but the whole-text rule gives tokens %+q", in, hashes, want)
	}
}

func TestAppendHashesAppends(t *testing.T) {
	got := AppendHashes([]uint64{7}, testHasher, "Straße, Ǆemal — “ﬁne” Б")
	want := []uint64{7}
	for _, tok := range []string{"strasse", "džemal", "fine", "б"} {
		want = append(want, testHasher.String(tok))
	}
	if !slices.Equal(got, want) {
		t.Errorf("AppendHashes = %x, want %x", got, want)
	}
}

func TestAppendHashesAllocatesNothing(t *testing.T) {
	for _, text := range []string{
		strings.Repeat("lowercase ascii words only ", 20),
		strings.Repeat("Capitals And “curly quotes” — dashes, Café, naïve, ÉTÉ ", 20),
		strings.Repeat("Быстрая Лиса прыгает. ", 20),
		strings.Repeat("日本語のテキスト、中文。ラーメン ", 20),
	} {
		dst := make([]uint64, 0, 1000)
		if text != strings.ToLower(text) || !isASCII(text) {
			// The lowered copy of the text, and a buffer for words with
			// folding letters.
			allocs := testing.AllocsPerRun(50, func() { dst = AppendHashes(dst[:0], testHasher, text) })
			if allocs > 2 {
				t.Errorf("AppendHashes(%.30q...): %v allocs, want at most 2 (the lowered copy, the fold buffer)", text, allocs)
			}
			continue
		}
		if allocs := testing.AllocsPerRun(50, func() { dst = AppendHashes(dst[:0], testHasher, text) }); allocs != 0 {
			t.Errorf("AppendHashes on lowercase ASCII: %v allocs, want 0", allocs)
		}
	}
}

// TestClassAtDecodesLikeUTF8 holds classAt's own decoding of two- and
// three-byte sequences to the standard library's, on every byte triple
// that starts with a non-ASCII byte (valid, overlong, surrogate,
// truncated and stray continuation bytes alike).
func TestClassAtDecodesLikeUTF8(t *testing.T) {
	tb := loadTables()
	buf := make([]byte, 3)
	for a := 0x80; a < 0x100; a++ {
		for b := 0; b < 0x100; b++ {
			for _, c := range []int{0x00, 0x41, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xff} {
				buf[0], buf[1], buf[2] = byte(a), byte(b), byte(c)
				for n := 1; n <= 3; n++ {
					s := string(buf[:n])
					class, size := tb.classAt(s, 0)
					r, wantSize := utf8.DecodeRuneInString(s)
					wantClass := complexRune
					if r < 1<<16 && !(r == utf8.RuneError && wantSize == 1) {
						wantClass = tb.class[r]
					}
					if class != wantClass || size != wantSize {
						t.Fatalf("classAt(% x) = class %d, size %d; utf8 decodes %U of %d bytes (class %d)", s, class, size, r, wantSize, wantClass)
					}
				}
			}
		}
	}
}

// TestCharRunDecodesLikeUTF8 holds scanMixed's own decoding of the rune
// after a character token (the run of inertChar runes) to the rule, on
// every two- and three-byte sequence with a three-byte lead byte (valid,
// overlong, surrogate, truncated), at the end of the text and before
// another character.
func TestCharRunDecodesLikeUTF8(t *testing.T) {
	var got, want []string
	for a := 0xE0; a < 0xF0; a++ {
		for b := 0; b < 0x100; b++ {
			for _, c := range []int{0x00, 0x41, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xff} {
				seq := []byte{byte(a), byte(b), byte(c)}
				for n := 1; n <= 3; n++ {
					for _, in := range []string{"日" + string(seq[:n]), "日" + string(seq[:n]) + "本"} {
						got = AppendTokens(got[:0], in)
						want = appendSlow(want[:0], in)
						if !slices.Equal(got, want) {
							t.Fatalf("Tokens(%+q) = %+q, whole-text rule %+q", in, got, want)
						}
						checkHashes(t, in, AppendHashes(nil, testHasher, in), want)
					}
				}
			}
		}
	}
}
