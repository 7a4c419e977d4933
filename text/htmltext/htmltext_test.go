package htmltext

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func TestExtract(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain text", "just text", "just text"},
		{"inline glues", "a<b>b</b>c", "abc"},
		{"span and link glue", `x<span>y</span><a href="/z">z</a>`, "xyz"},
		{"block separates", "a<p>b</p>c", "a\nb\nc"},
		{"div", "one<div>two</div>three", "one\ntwo\nthree"},
		{"br", "line<br>next<br/>last", "line\nnext\nlast"},
		{"list", "<ul><li>x</li><li>y</li></ul>", "x\ny"},
		{"headings", "<h1>Title</h1><h2>Sub</h2>body", "Title\nSub\nbody"},
		{"table", "<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a b\nc"},
		{"image between words", `see<img src=x alt="ALT">this`, "see this"},
		{"script dropped", "a<script>var x = '<p>not text</p>'; if (a<b) {}</script>b", "ab"},
		{"script with type and case", `a<SCRIPT type="text/javascript">x()</SCRIPT>b`, "ab"},
		{"style dropped", "<style>p { color: red }</style>visible", "visible"},
		{"noscript dropped", "<noscript>enable js</noscript>ok", "ok"},
		{"template dropped", "<template><p>hidden <b>stuff</b></p></template>shown", "shown"},
		{"nested template", "<template>x<template>y</template>z</template>w", "w"},
		{"iframe dropped", "<iframe>fallback</iframe>page", "page"},
		{"comment dropped", "a<!-- a comment <p> -->b", "ab"},
		{"conditional comment", "a<!--[if IE]><p>old</p><![endif]-->b", "ab"},
		{"doctype dropped", "<!DOCTYPE html><html><body>hi</body></html>", "hi"},
		{"title kept", "<html><head><title>My Page</title><meta charset=utf-8></head><body>Body</body></html>", "My Page\nBody"},
		{"entities", "caf&eacute; &amp; cr&#232;me &lt;b&gt; &#x41;&nbsp;B", "café & crème <b> A\u00a0B"},
		{"entity without semicolon", "AT&T &copy 2024", "AT&T © 2024"},
		{"whitespace collapses", "  a \n\t b  <p>  c  </p>  ", "a b\nc"},
		{"attributes ignored", `<a title="tip" href="u">link</a>`, "link"},
		{"no body", "<html><head><title>t</title></head></html>", "t"},
		{"text only in head", "<head>stray</head>", "stray"},
		{"unclosed tags", "<div><p>a<b>b<i>c", "abc"},
		{"unclosed script eats rest", "a<script>b c d", "a"},
		{"stray end tags", "a</script></div></b>b", "a\nb"},
		{"self-closing script still opens", "a<script/>x()</script>b", "ab"},
		{"truncated tag", "text <di", "text"},
		{"broken attribute", `<p class="x>text</p>more`, ""},
		// "<d" at EOF is an unfinished tag, which HTML5 drops.
		{"lone lt", "a < b and c<d", "a < b and c"},
		{"lt then space is text", "1 <2 and 3< 4", "1 <2 and 3< 4"},
		{"textarea kept", "<textarea>typed &amp; text</textarea>", "typed & text"},
		{"pre kept", "<pre>x  y</pre>", "x y"},
		{"cdata outside foreign content is a comment", "a<![CDATA[x]]>b", "ab"},
		{"svg text", "<svg><text>label</text></svg>after", "label after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Extract(tt.in); got != tt.want {
				t.Errorf("Extract(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// nestedDoc is tag nested depth times around the word "deep", then
// "after".
func nestedDoc(tag string, depth int) string {
	return strings.Repeat("<"+tag+">", depth) + "deep" + strings.Repeat("</"+tag+">", depth) + "after"
}

// TestDeepNesting: deeply nested input comes out right, and Extract's work
// on it is linear (TestDeepNestingWork).
func TestDeepNesting(t *testing.T) {
	const depth = 100000
	for _, tag := range []string{"div", "b", "template", "p"} {
		got := Extract(nestedDoc(tag, depth))
		want := "deep\nafter"
		switch tag {
		case "b":
			want = "deepafter"
		case "template":
			want = "after"
		}
		if got != want {
			t.Errorf("%s: got %q, want %q", tag, got, want)
		}
	}
	// Unclosed, and with nothing but tags.
	if got := Extract(strings.Repeat("<div><span>", depth)); got != "" {
		t.Errorf("unclosed nesting: got %q", got)
	}
}

// allocated returns the heap bytes and objects that one call of f
// allocates, after a warm-up call, measured as testing.AllocsPerRun
// does (with GOMAXPROCS at 1): a figure of the work done that does not
// depend on the machine's speed or load.
func allocated(f func()) (bytes, objects uint64) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs
}

// linearWork checks that extract's work on doc(n) grows linearly in n,
// measured by its allocations at depths n and 4n: the bytes must stay
// under perByte bytes per byte of input at both depths and grow by at
// most maxRatio (linear work gives 4, a little more as slices grow in
// steps; quadratic 16), and the objects stay under maxObjects (a few
// slices that grow geometrically; an allocation per tag would be
// thousands). The depths are small, and the larger one is only tried
// when the smaller one passes, so that a quadratic extract fails in
// about a second instead of running for minutes.
//
// Allocation is the work that can be counted without a clock or a
// counter in the code: a stack copied or rebuilt per tag, or per-tag
// garbage, shows in it; a loop that only reads (a scan of the stack per
// end tag) does not, nor does the goroutine stack of a recursion, and
// they show only in the ns/tag of the benchmarks, which repeat each case
// at two depths.
func linearWork(t *testing.T, name string, doc func(n int) string, extract func(string) string, perByte float64, maxObjects uint64) {
	t.Helper()
	const n, maxRatio = 5000, 8
	var bytes [2]uint64
	for i, d := range []int{n, 4 * n} {
		in := doc(d)
		b, o := allocated(func() { sink = extract(in) })
		bytes[i] = b
		per := float64(b) / float64(len(in))
		t.Logf("%s at depth %d: %d bytes allocated (%.2f per input byte), %d objects", name, d, b, per, o)
		if per > perByte || o > maxObjects {
			t.Errorf("%s at depth %d: %d bytes allocated (%.2f per input byte), %d objects; want <= %v per byte and %d objects", name, d, b, per, o, perByte, maxObjects)
			return
		}
	}
	if r := float64(bytes[1]) / float64(max(bytes[0], 1)); r > maxRatio {
		t.Errorf("%s: %d bytes allocated at depth %d, %d at %d: x%.2f for 4 times the input, want <= x%d", name, bytes[0], n, bytes[1], 4*n, r, maxRatio)
	}
}

// TestDeepNestingWork bounds Extract's work on deep nesting (its speed
// is BenchmarkDeepNesting). Extract keeps a counter, not a stack, so its
// allocations are the output buffer, a quarter of the input's length,
// and the tokenizer's. Measured: 0.26 to 0.32 bytes per input byte at
// depth 20,000 (0.25 at 400,000), 5 objects, x3.3 to x3.5 from depth
// 5,000.
func TestDeepNestingWork(t *testing.T) {
	for _, tag := range []string{"div", "b", "template", "p"} {
		linearWork(t, tag, func(n int) string { return nestedDoc(tag, n) }, Extract, 1, 20)
	}
	linearWork(t, "unclosed", func(n int) string { return strings.Repeat("<div><span>", n) }, Extract, 1, 20)
}

// BenchmarkDeepNesting is Extract's speed on deep nesting, per tag at two
// depths: linear work shows as equal ns/tag.
func BenchmarkDeepNesting(b *testing.B) {
	for _, tag := range []string{"div", "b", "template"} {
		for _, depth := range []int{100000, 400000} {
			doc := nestedDoc(tag, depth)
			b.Run(fmt.Sprintf("%s/%d", tag, depth), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					sink = Extract(doc)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*depth), "ns/tag")
			})
		}
	}
}

// TestNeverPanics feeds random tag soup and random bytes.
func TestNeverPanics(t *testing.T) {
	pieces := []string{
		"<", ">", "/", "<p>", "</p>", "<b>", "</b>", "<script>", "</script>", "<style>",
		"<!--", "-->", "<!DOCTYPE", "&amp;", "&", "&#", "&#x", ";", "\"", "'", "=",
		"<template>", "</template>", "<br/>", "text", " ", "\n", "\x00", "\xff", "é",
		"<title>", "</title>", "<![CDATA[", "]]>", "<svg>", "<math>", "<plaintext>",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		out := Extract(b.String())
		if strings.Contains(out, "  ") || strings.HasPrefix(out, " ") || strings.HasSuffix(out, " ") {
			t.Fatalf("Extract(%q) = %q: uncollapsed whitespace", b.String(), out)
		}
	}
}

// TestWordsNeverGlueAcrossBlocks: whatever the blocks contain, the words of
// "<p>x</p><p>y</p>" come out separated.
func TestWordsNeverGlueAcrossBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	blocks := []string{"p", "div", "li", "tr", "h1", "section", "article", "td", "br"}
	for range 1000 {
		n := 2 + r.IntN(6)
		words := make([]string, n)
		var b strings.Builder
		for i := range words {
			words[i] = fmt.Sprintf("w%d", i)
			tag := blocks[r.IntN(len(blocks))]
			fmt.Fprintf(&b, "<%s>%s", tag, words[i])
			if r.IntN(2) == 0 {
				fmt.Fprintf(&b, "</%s>", tag)
			}
		}
		got := strings.Fields(Extract(b.String()))
		if strings.Join(got, ",") != strings.Join(words, ",") {
			t.Fatalf("Extract(%q) words %q, want %q", b.String(), got, words)
		}
	}
}

// FuzzExtract checks, on any input: Extract does not panic; its output is
// valid UTF-8 when the input is, and is collapsed (no HTML whitespace but
// single spaces and newlines between words, none at either end); on input
// with no markup or entities it only collapses whitespace; and, built into
// a template around the input, the contents of script, style, template
// and comments change nothing in the output (so no word that only occurs
// there can appear).
func FuzzExtract(f *testing.F) {
	for _, s := range []string{"", "a<p>b", "<script>x", "<template><template>", "&#xffffff;", "<!-- -- -->"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Extract(s)
		checkOutput(t, s, out)
		if !strings.ContainsAny(s, "<&") {
			if want := collapse(s); out != want {
				t.Fatalf("Extract(%q) = %q, want the collapsed text %q", s, out, want)
			}
		}

		with, without := hiddenTemplate(s)
		got, want := Extract(with), Extract(without)
		checkOutput(t, with, got)
		if got != want {
			t.Fatalf("hidden parts changed the text:\nExtract(%q)\n= %q\nExtract(%q)\n= %q", with, got, without, want)
		}
		if strings.Contains(got, hiddenMarker) && !strings.Contains(want, hiddenMarker) {
			t.Fatalf("Extract(%q) = %q shows a word from a hidden part", with, got)
		}
	})
}

// checkOutput checks the shape of out = Extract(in).
func checkOutput(t *testing.T, in, out string) {
	t.Helper()
	if utf8.ValidString(in) && !utf8.ValidString(out) {
		t.Fatalf("Extract(%q) = %q: invalid UTF-8 from valid input", in, out)
	}
	if strings.ContainsAny(out, "\t\r\f") {
		t.Fatalf("Extract(%q) = %q: uncollapsed HTML whitespace", in, out)
	}
	for i := 0; i < len(out); i++ {
		if out[i] != ' ' && out[i] != '\n' {
			continue
		}
		if i == 0 || i == len(out)-1 || out[i+1] == ' ' || out[i+1] == '\n' {
			t.Fatalf("Extract(%q) = %q: separator at the ends or doubled, at byte %d", in, out, i)
		}
	}
}

// collapse joins the runs of non-whitespace of plain text with single
// spaces, splitting at HTML whitespace only.
func collapse(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r < utf8.RuneSelf && isSpace(byte(r)) }), " ")
}

// hiddenMarker occurs only inside the hidden parts of hiddenTemplate.
const hiddenMarker = "zqxhidden"

// hiddenTemplate builds two documents from s: with has s (made inert) in
// visible text and in script, style, template and comment elements with
// a marker word, and without is the same minus those elements. Visible
// copies lose '<', so they cannot open markup; hidden copies also lose
// '>', so they cannot close their element early (raw text ends at "</",
// a comment at "-->" or "--!>"). Each removed element sits between tags,
// so removing it joins no text (nor any character reference).
func hiddenTemplate(s string) (with, without string) {
	vis := strings.ReplaceAll(s, "<", "")
	hid := strings.NewReplacer("<", "", ">", "").Replace(s)
	parts := []struct{ text, hidden string }{
		{"<!DOCTYPE html><html><head><title>" + vis + "</title>", ""},
		{"", "<style>" + hid + " ." + hiddenMarker + "style { color: red }</style>"},
		{"</head><body><p>" + vis + "</p>", ""},
		{"", "<script>" + hid + " " + hiddenMarker + "script()</script>"},
		{"<div>" + vis + "<b>" + vis + "</b>", ""},
		{"", "<!-- " + hid + " " + hiddenMarker + "comment -->"},
		{"<span>" + vis + "</span>", ""},
		{"", "<template>" + hid + " <p>" + hiddenMarker + "template</p></template>"},
		{"</div>" + vis + "</body></html>", ""},
	}
	var w, wo strings.Builder
	for _, p := range parts {
		w.WriteString(p.text + p.hidden)
		wo.WriteString(p.text)
	}
	return w.String(), wo.String()
}

func ExampleExtract() {
	page := `<!DOCTYPE html>
<html><head><title>Roses &amp; more</title><style>body{}</style></head>
<body><h1>A rose</h1><p>is a <b>rose</b> is a ro<i>se</i>.</p>
<script>track()</script><!-- footer --></body></html>`
	fmt.Printf("%q\n", Extract(page))
	// Output: "Roses & more\nA rose\nis a rose is a rose."
}

var sink string

func BenchmarkExtract(b *testing.B) {
	var doc strings.Builder
	doc.WriteString("<!DOCTYPE html><html><head><title>Bench</title><script>var a = 1;</script></head><body>")
	for i := range 200 {
		fmt.Fprintf(&doc, `<div class="c%d"><p>Paragraph %d with <a href="/x">a link</a> and <b>bold</b> text &amp; entities.</p>
<ul><li>one</li><li>two</li></ul></div>`, i, i)
	}
	doc.WriteString("</body></html>")
	s := doc.String()
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		sink = Extract(s)
	}
}

// TestTagAtomMatchesTokenizer: our allocation-free reading of tag names
// from Raw agrees with Tokenizer.TagName on every tag of random tag soup,
// for all atoms that matter to Extract.
func TestTagAtomMatchesTokenizer(t *testing.T) {
	pieces := []string{
		"<", "</", ">", "/", " ", "\t", "\n", "\x00", "p", "P", "div", "DiV", "script", "br",
		"template", "title", "x", "=", "\"", "a=b", "blockquote", "figcaption", "-", "é",
		"h1", "td", "img", "<!--", "-->", "text",
	}
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		z := html.NewTokenizer(strings.NewReader(b.String()))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				break
			}
			if tt != html.StartTagToken && tt != html.EndTagToken && tt != html.SelfClosingTagToken {
				continue
			}
			got := tagAtom(z.Raw())
			name, _ := z.TagName()
			want := atom.Lookup(name)
			if (dropped(got) || separatorOf(got) != none || dropped(want) || separatorOf(want) != none) && got != want {
				t.Fatalf("in %q: tagAtom = %v, TagName gives %q (%v)", b.String(), got, name, want)
			}
		}
	}
}
