package htmltext

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/crawl"
)

// newsPage is a news article with the usual template around it.
const newsPage = `<!DOCTYPE html><html><head><title>Storm hits coast</title></head>
<body class="single comments-open">
<div id="cookie-banner" class="cookieBanner">We use cookies to improve your experience. <a href="/privacy">Learn more</a> <button>Accept</button></div>
<header class="site-header"><a href="/" class="logo">Daily Gazette</a><p>Your trusted local news since 1901</p></header>
<nav><ul><li><a href="/">Home</a></li><li><a href="/world">World</a></li><li><a href="/sport">Sport</a></li></ul></nav>
<div class="content">
<ul class="breadcrumbs"><li><a href="/">Home</a> &gt; <a href="/weather">Weather</a></li></ul>
<article>
<header><h1>Storm hits the coast overnight</h1><p class="byline">By Jane Roe</p></header>
<p>A powerful storm struck the northern coast overnight, flooding several towns and cutting power to thousands of homes, the <a href="/agency">weather agency</a> said on Tuesday.</p>
<p>Rescue teams worked through the night to evacuate residents from low-lying streets as the river burst its banks.</p>
<div class="share-buttons"><a href="#">Share on Facebook</a> <a href="#">Tweet this</a></div>
<footer><p>Filed under weather and climate reporting.</p></footer>
</article>
<section id="comments" class="comments-area"><h2>3 comments</h2><ol class="comment-list"><li>Stay safe everyone, the river is rising fast near the bridge.</li></ol>
<form id="commentform"><label>Your reply</label><textarea>type here</textarea><input type="submit" value="Post"></form></section>
</div>
<aside><h3>Most read</h3><p>Local team wins the cup after a dramatic penalty shootout</p></aside>
<footer><p>Copyright 2024 Daily Gazette Media Group. All rights reserved.</p><a href="/about">About us</a> <a href="/contact">Contact</a></footer>
</body></html>`

// docsPage is a documentation page whose sidebar is mostly links, with
// no main element and no ARIA roles: only link density finds it.
const docsPage = `<html><head><title>frobnicate — Widget docs</title></head><body>
<div class="wrapper">
<div class="toc"><h3>Contents</h3><ul>
<li><a href="intro.html">Introduction</a></li><li><a href="install.html">Installing widgets</a></li>
<li><a href="frob.html">frobnicate</a></li><li><a href="twiddle.html">twiddle</a></li>
<li><a href="api.html">API reference</a></li><li><a href="faq.html">Frequently asked questions</a></li>
</ul></div>
<div class="doc">
<h1>frobnicate</h1>
<p>The frobnicate function adjusts a widget until it fits its socket. It takes the widget and a tolerance, and returns the number of turns it needed.</p>
<p>Call it after <a href="install.html">installing</a> the widget; before that the socket is not known and frobnicate returns an error.</p>
<pre>turns = frobnicate(w, 0.1)</pre>
</div>
<div class="links"><a href="twiddle.html">Next: twiddle</a> | <a href="install.html">Previous: Installing widgets</a></div>
</div></body></html>`

func TestExtractMain(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"news article", newsPage, "Storm hits coast\n" +
			"Storm hits the coast overnight\nBy Jane Roe\n" +
			"A powerful storm struck the northern coast overnight, flooding several towns and cutting power to thousands of homes, the weather agency said on Tuesday.\n" +
			"Rescue teams worked through the night to evacuate residents from low-lying streets as the river burst its banks.\n" +
			"Filed under weather and climate reporting."},
		{"docs page with a link sidebar", docsPage, "frobnicate — Widget docs\nfrobnicate\n" +
			"The frobnicate function adjusts a widget until it fits its socket. It takes the widget and a tolerance, and returns the number of turns it needed.\n" +
			"Call it after installing the widget; before that the socket is not known and frobnicate returns an error.\n" +
			"turns = frobnicate(w, 0.1)"},
		{"inline links kept", `<p>See <a href="/a">the manual</a> for the details of the configuration file and its many options.</p>`,
			"See the manual for the details of the configuration file and its many options."},
		{"link list dropped", `<p>Some real text of the page that is long enough.</p><ul><li><a href="/a">Alpha</a></li><li><a href="/b">Beta</a></li></ul>`,
			"Some real text of the page that is long enough."},
		{"mostly link block dropped", `<p>Body text of the page, which says what the page says.</p><p>Next: <a href="/n">the next chapter</a></p>`,
			"Body text of the page, which says what the page says."},
		{"nav dropped", "<nav>Home About</nav><p>text</p>", "text"},
		{"aside dropped", "<p>text</p><aside>related</aside>", "text"},
		{"form dropped", "<p>text</p><form>Search <input> <button>Go</button></form>", "text"},
		{"dialog dropped", "<dialog open>Subscribe now</dialog><p>text</p>", "text"},
		{"select dropped", "<p>text</p><select><option>English<option>Deutsch</select>", "text"},
		{"page header and footer dropped", "<header>Site name</header><p>text</p><footer>Copyright</footer>", "text"},
		{"header inside article kept", "<header>Site</header><article><header><h1>Title</h1></header><p>text</p><footer>tags</footer></article>", "Title\ntext\ntags"},
		{"header inside section kept", "<section><header>Part one</header>text</section>", "Part one\ntext"},
		{"header inside role=main kept", `<div role="main"><header>Heading</header>text</div>`, "Heading\ntext"},
		{"role navigation", `<div role="navigation">Home About</div><p>text</p>`, "text"},
		{"role banner contentinfo", `<div role="banner">Logo</div><p>text</p><div role="contentinfo">Legal</div>`, "text"},
		{"role complementary search menu", `<div role="complementary">x</div><div role="search">y</div><ul role="menubar"><li>z</li></ul><p>text</p>`, "text"},
		{"role dialog alertdialog", `<div role="alertdialog">Accept?</div><div role="dialog">Hi</div><p>text</p>`, "text"},
		{"role case and fallback list", `<div role="Navigation region">nav</div><div role="foo search">s</div><p>text</p>`, "text"},
		{"unknown role kept", `<div role="note">note</div><p>text</p>`, "note\ntext"},
		{"cookie banner by class", `<div class="cookie-notice">We use cookies</div><p>text</p>`, "text"},
		{"cookie recipe kept", `<div class="cookie-recipe">Flour and sugar</div>`, "Flour and sugar"},
		{"consent by id", `<div id="onetrust-consent-sdk">Accept all</div><p>text</p>`, "text"},
		{"comments section", `<p>text</p><div id="comments">Great post</div>`, "text"},
		{"code comment kept", `<pre><span class="token comment"># a comment</span></pre>`, "# a comment"},
		{"comment list camel case", `<p>text</p><ol class="commentList"><li>me too</li></ol>`, "text"},
		{"breadcrumbs", `<div class="breadcrumbs">Home Docs</div><p>text</p>`, "text"},
		{"share widget", `<p>text</p><div class="social-share">Facebook Twitter</div>`, "text"},
		{"footer class page level", `<p>text</p><div class="footer">Copyright</div>`, "text"},
		{"footer class inside article kept", `<article><p>text</p><div class="footer">Posted in news</div></article>`, "text\nPosted in news"},
		{"page-header class kept", `<div class="page-header"><h1>Title</h1></div><p>text</p>`, "Title\ntext"},
		{"main preferred", `<div>Welcome to the site of the company</div><main><p>The content of this page is here.</p></main><div>Some unmarked promotion text.</div>`,
			"The content of this page is here."},
		{"single article preferred", `<div>Welcome to the site</div><article><p>The article says this, at length, as articles do.</p></article>`,
			"The article says this, at length, as articles do."},
		{"two articles not preferred", `<div>Welcome to the site</div><article><p>First teaser.</p></article><article><p>Second teaser.</p></article>`,
			"Welcome to the site\nFirst teaser.\nSecond teaser."},
		{"links inside main kept", `<nav>Home</nav><main><h1>Index</h1><ul><li><a href="a">alpha</a></li><li><a href="b">beta</a></li></ul></main>`,
			"Index\nalpha\nbeta"},
		{"empty main ignored", `<main></main><p>The real content sits outside main on this page.</p>`,
			"The real content sits outside main on this page."},
		{"small main ignored", `<main><p>Hi.</p></main><p>The real content sits outside main on this page, and it is far longer than main.</p>`,
			"Hi.\nThe real content sits outside main on this page, and it is far longer than main."},
		{"short block among link lists", `<p>The article text, which is long enough to stand on its own here.</p><ul><li><a href="a">About</a></li></ul><h3>Follow us</h3><ul><li><a href="f">Facebook</a></li><li><a href="t">Twitter</a></li></ul>`,
			"The article text, which is long enough to stand on its own here."},
		{"short block after a link list at the end", `<p>The article text, which is long enough to stand on its own here.</p><ul><li><a href="a">About</a></li></ul><p>© 2024 Us</p>`,
			"The article text, which is long enough to stand on its own here."},
		{"short block next to good text kept", `<p>The article text, which is long enough to stand on its own here.</p><h3>Follow us</h3><ul><li><a href="f">Facebook</a></li><li><a href="t">Twitter</a></li></ul>`,
			"The article text, which is long enough to stand on its own here.\nFollow us"},
		{"short blocks of a short page kept", `<p>Hi</p><ul><li><a href="a">About</a></li></ul><p>Bye</p>`, "Hi\nBye"},
		{"short block alone kept", `<p>Hi</p>`, "Hi"},
		{"page wrapped in a form", `<form id="aspnetForm"><nav>Home</nav><h1>Title</h1><p>The whole page sits in one form, as ASP.NET pages do.</p></form>`,
			"Title\nThe whole page sits in one form, as ASP.NET pages do."},
		{"body class ignored", `<body class="comments-open share">text</body>`, "text"},
		{"inline region keeps words whole", `<p>alpha <span role="search">beta</span> gamma</p>`, "alpha gamma"},
		{"glued word stays with its start", `<p>one tw<span role="search">o three</span> four</p>`, "one two four"},
		{"class of inline element ignored", `<p>alpha <span class="share">beta</span> gamma</p>`, "alpha beta gamma"},
		{"separator kept across a dropped block", "<p>a</p><nav>x</nav>b", "a\nb"},
		{"table cells", "<table><tr><td>a</td><td>b</td></tr></table>", "a b"},
		{"unclosed nav drops the rest", "<p>text</p><nav>menu<p>more", "text"},
		{"stray end tags", "</nav></div></main><p>text</p></footer>", "text"},
		{"misnested region end", "<div><nav>menu</div><p>text</p>", "text"},
		{"link closes link", `<p>Plain words of the paragraph and then <a href="x">a</a><a href="y">b</a> and more plain words.</p>`,
			"Plain words of the paragraph and then ab and more plain words."},
		{"svg title not the page title", `<nav><svg><title>Menu</title></svg></nav><p>text</p>`, "text"},
		{"template and script still dropped", `<script>nav()</script><template><p>t</p></template><p>text</p>`, "text"},
		{"self-closing nav opens nothing", `<nav/><p>text</p>`, "text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ExtractMode(tt.in, Main)
			if got != tt.want {
				t.Errorf("ExtractMode(%q, Main) =\n%q\nwant\n%q", tt.in, got, tt.want)
			}
			checkOutput(t, tt.in, got)
			if !subsequence(strings.Fields(got), strings.Fields(Extract(tt.in))) {
				t.Errorf("Main's words are not a subsequence of Visible's")
			}
		})
	}
}

func TestExtractModeVisible(t *testing.T) {
	for _, s := range []string{newsPage, docsPage, "a<p>b", ""} {
		if got, want := ExtractMode(s, Visible), Extract(s); got != want {
			t.Errorf("ExtractMode(%q, Visible) = %q, want Extract's %q", s, got, want)
		}
		if got, want := ExtractMode(s, Mode(7)), Extract(s); got != want {
			t.Errorf("ExtractMode(%q, Mode(7)) = %q, want Extract's %q", s, got, want)
		}
	}
	if Visible.String() != "visible" || Main.String() != "main" || Mode(12).String() != "Mode(12)" {
		t.Errorf("Mode.String: %v %v %v", Visible, Main, Mode(12))
	}
}

// TestMainOfAllContent: a page with no template (no boilerplate elements,
// roles, classes or links) comes out exactly as Extract gives it,
// whatever its block structure.
func TestMainOfAllContent(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	tags := []string{"p", "div", "li", "h1", "h2", "section", "article", "main", "td", "tr", "br", "b", "i", "span", "em", "pre", "blockquote", "table", "ul"}
	words := []string{"alpha", "beta", "gamma", "delta", "ok", "x", "long sentence of words here", " ", "\n", "&amp;"}
	for range 2000 {
		var b strings.Builder
		b.WriteString("<html><head><title>A title</title></head><body>")
		for range r.IntN(30) {
			tag := tags[r.IntN(len(tags))]
			switch r.IntN(3) {
			case 0:
				fmt.Fprintf(&b, "<%s>", tag)
			case 1:
				fmt.Fprintf(&b, "</%s>", tag)
			default:
				b.WriteString(words[r.IntN(len(words))])
			}
		}
		doc := b.String()
		// One main or article with little text next to unmarked text
		// may legitimately be preferred; keep the property to pages
		// without them, and to pages where they hold all the text.
		if strings.Contains(doc, "<main>") || strings.Contains(doc, "<article>") {
			if got, want := ExtractMain(doc), Extract(doc); got != want && !strings.HasPrefix(want, got) {
				// Dropping is allowed only by main preference:
				// the result is then the title plus a part.
				if !subsequence(strings.Fields(got), strings.Fields(want)) {
					t.Fatalf("ExtractMain(%q) = %q: not a subsequence of %q", doc, got, want)
				}
			}
			continue
		}
		if got, want := ExtractMain(doc), Extract(doc); got != want {
			t.Fatalf("ExtractMain(%q) =\n%q\nExtract gives\n%q", doc, got, want)
		}
	}
	// And a hand-made one, with a main holding everything.
	page := `<!DOCTYPE html><html><head><title>Essay</title></head><body><main><h1>On rivers</h1>
<p>Rivers run to the sea, <em>mostly</em>.</p><table><tr><td>Nile</td><td>6650 km</td></tr></table>
<blockquote>A quote.</blockquote><ul><li>one</li><li>two</li></ul></main></body></html>`
	if got, want := ExtractMain(page), Extract(page); got != want {
		t.Errorf("ExtractMain(page) = %q, want Extract's %q", got, want)
	}
}

// mainNestingTags are the tags of TestMainDeepNesting: plain blocks and
// inline elements, links (each closes the last), hidden elements,
// dropped regions, and preferred ones.
var mainNestingTags = []string{"div", "nav", "b", "a", "template", "p", "article", "main", "form"}

// mainNestedDoc is tag nested depth times around "deep", between two
// paragraphs.
func mainNestedDoc(tag string, depth int) string {
	return "<p>before the nesting</p>" + strings.Repeat("<"+tag+">", depth) + "deep" + strings.Repeat("</"+tag+">", depth) + "<p>after</p>"
}

// strayEndTags and nestedNavs are the quadratic traps of an explicit
// stack: many open elements, then many stray end tags that match none,
// then many that match the bottom one; and nested dropped regions closed
// by twice as many end tags.
func strayEndTags(depth int) string {
	return strings.Repeat("<div><span>", depth) + "x" + strings.Repeat("</nav>", depth) + strings.Repeat("</div>", depth)
}

func nestedNavs(depth int) string {
	return "<nav>" + strings.Repeat("<nav>", depth) + "x" + strings.Repeat("</nav>", 2*depth) + "<p>y</p>"
}

// TestMainDeepNesting: deeply nested input comes out right (its work is
// TestMainDeepNestingWork's).
func TestMainDeepNesting(t *testing.T) {
	const depth = 100000
	for _, tag := range mainNestingTags {
		doc := mainNestedDoc(tag, depth)
		got := ExtractMain(doc)
		if !subsequence(strings.Fields(got), strings.Fields(Extract(doc))) {
			t.Errorf("%s: %q not a subsequence of the visible text", tag, got)
		}
		if tag == "nav" && strings.Contains(got, "deep") {
			t.Errorf("nav: %q keeps the text of a nav", got)
		}
	}
	if got := ExtractMain(strayEndTags(depth)); got != "x" {
		t.Errorf("open nesting: got %q", got)
	}
	if got := ExtractMain(nestedNavs(depth)); got != "y" {
		t.Errorf("nested navs: got %q", got)
	}
}

// TestMainDeepNestingWork bounds Main's work on deep nesting and on the
// traps of its stack by its allocations (see linearWork; the speed is
// BenchmarkMainDeepNesting). Measured at depth 20,000: at most 14.8
// bytes per input byte (nav and form, which open a region each; 16.8 at
// depth 400,000), 2.0 to 5.1 for the others, 0.26 for template (hidden)
// and 0.33 for a (each link closes the last); at most 58 objects (84 at
// depth 400,000); x3.2 to x5.6 from depth 5,000.
func TestMainDeepNestingWork(t *testing.T) {
	for _, tag := range mainNestingTags {
		linearWork(t, tag, func(n int) string { return mainNestedDoc(tag, n) }, ExtractMain, 24, 200)
	}
	linearWork(t, "stray end tags", strayEndTags, ExtractMain, 24, 200)
	linearWork(t, "nested navs", nestedNavs, ExtractMain, 24, 200)
}

// BenchmarkMainDeepNesting is Main's speed on deep nesting and on the
// traps, at two depths: linear work shows as equal ns/tag.
func BenchmarkMainDeepNesting(b *testing.B) {
	docs := []struct {
		name string
		doc  func(int) string
		tags int // per level of depth
	}{
		{"div", func(n int) string { return mainNestedDoc("div", n) }, 2},
		{"nav", func(n int) string { return mainNestedDoc("nav", n) }, 2},
		{"a", func(n int) string { return mainNestedDoc("a", n) }, 2},
		{"stray-end-tags", strayEndTags, 4},
		{"nested-navs", nestedNavs, 3},
	}
	for _, d := range docs {
		for _, depth := range []int{100000, 400000} {
			doc := d.doc(depth)
			b.Run(fmt.Sprintf("%s/%d", d.name, depth), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				for b.Loop() {
					sink = ExtractMain(doc)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(d.tags*depth), "ns/tag")
			})
		}
	}
}

func TestMainNeverPanics(t *testing.T) {
	pieces := []string{
		"<", ">", "/", "<p>", "</p>", "<a href=x>", "</a>", "<nav>", "</nav>", "<main>", "</main>",
		"<article>", "</article>", "<header>", "</header>", "<footer>", "</footer>", "<form>", "</form>",
		`<div class="cookie-banner">`, `<div role="main">`, `<div role="navigation">`, "</div>", `<span class="share">`, "</span>",
		"<script>", "</script>", "<template>", "</template>", "<title>", "</title>", "<svg>", "</svg>",
		"<!--", "-->", "&amp;", "text", "more words here", " ", "\n", "\x00", "\xff", "é", "<br/>", "<td>", "<h1>",
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 5000 {
		var b strings.Builder
		for range r.IntN(50) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := b.String()
		out := ExtractMain(s)
		checkOutput(t, s, out)
		if !subsequence(strings.Fields(out), strings.Fields(Extract(s))) {
			t.Fatalf("ExtractMain(%q) = %q: not a subsequence of Extract's %q", s, out, Extract(s))
		}
	}
}

// subsequence reports whether a is a subsequence of b.
func subsequence(a, b []string) bool {
	i := 0
	for _, w := range b {
		if i < len(a) && a[i] == w {
			i++
		}
	}
	return i == len(a)
}

// FuzzExtractMain checks on any input that Main does not panic, that its
// output has Extract's shape (valid UTF-8 from valid input, collapsed
// whitespace), that its words are a subsequence of Extract's (Main only
// drops text, and never splits or glues words), and that on text without
// markup it equals Extract.
func FuzzExtractMain(f *testing.F) {
	for _, s := range []string{"", "a<p>b", newsPage, docsPage, "<nav>x</nav>y", `<div role="main">m</div>o`, "<a>x<a>y"} {
		f.Add(s)
	}
	// The seeds of FuzzExtract are good hostile markup too.
	if ents, err := os.ReadDir("testdata/fuzz/FuzzExtract"); err == nil {
		for _, e := range ents {
			b, err := os.ReadFile("testdata/fuzz/FuzzExtract/" + e.Name())
			if err != nil {
				continue
			}
			if s, ok := corpusString(string(b)); ok {
				f.Add(s)
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := ExtractMain(s)
		checkOutput(t, s, out)
		vis := Extract(s)
		if !subsequence(strings.Fields(out), strings.Fields(vis)) {
			t.Fatalf("ExtractMain(%q) = %q: not a subsequence of the words of Extract's %q", s, out, vis)
		}
		if !strings.ContainsAny(s, "<&") && out != vis {
			t.Fatalf("ExtractMain(%q) = %q, want Extract's %q on plain text", s, out, vis)
		}
		with, without := hiddenTemplate(s)
		if got, want := ExtractMain(with), ExtractMain(without); got != want {
			t.Fatalf("hidden parts changed the main text:\nExtractMain(%q)\n= %q\nExtractMain(%q)\n= %q", with, got, without, want)
		}
	})
}

// corpusString decodes a "go test fuzz v1" file holding one string.
func corpusString(file string) (string, bool) {
	_, rest, ok := strings.Cut(file, "\n")
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	if !strings.HasPrefix(rest, "string(") || !strings.HasSuffix(rest, ")") {
		return "", false
	}
	var s string
	if _, err := fmt.Sscanf(rest[len("string("):len(rest)-1], "%q", &s); err != nil {
		return "", false
	}
	return s, true
}

// readPythonDocs returns the URLs and HTML of the Python docs table, or
// skips the test when the shared corpora are absent (fails under CI).
func readPythonDocs(tb testing.TB) (urls, docs []string) {
	tb.Helper()
	pythonDocs := shareddata.Path(tb, "python-3.11-docs-html.parquet")
	ctx := context.Background()
	cols := crawl.Columns{HTML: "html", URL: "url"}
	splits, err := crawl.Splits(ctx, 0, pythonDocs, cols)
	if err != nil {
		tb.Fatal(err)
	}
	for _, sp := range splits {
		err := crawl.ReadSplit(ctx, sp, cols, func(r crawl.Row) error {
			urls = append(urls, r.URL)
			docs = append(docs, r.Content)
			return nil
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return urls, docs
}

// TestMainOnPythonDocs: on every page of the Python docs, Main keeps the
// page's title and own text (the start and end of the role="main" body)
// and none of the Sphinx template: the navigation bars, the sidebar, the
// search box and the copyright footer, which every page carries. (A few
// pages quote some of these phrases in their body: a phrase may occur in
// the main text as often as in the body.)
func TestMainOnPythonDocs(t *testing.T) {
	urls, docs := readPythonDocs(t)
	if len(docs) != 530 {
		t.Fatalf("%d pages, want 530", len(docs))
	}
	boilerplate := []string{
		"\nNavigation\n", "Previous topic", "Next topic", "This Page", "Report a Bug", "Show Source",
		"Quick search", "Table of Contents\n", "Python Software Foundation License",
		"Copyright 2001-", "Please donate.", "Created using Sphinx", "Last updated on", "3.11.2 Documentation »",
		"modules |",
	}
	var visBytes, mainBytes int
	for i, doc := range docs {
		vis, main := Extract(doc), ExtractMain(doc)
		visBytes += len(vis)
		mainBytes += len(main)
		if len(main) >= len(vis) {
			t.Errorf("%s: main text (%d bytes) not shorter than the visible text (%d)", urls[i], len(main), len(vis))
		}
		if !subsequence(strings.Fields(main), strings.Fields(vis)) {
			t.Errorf("%s: main text is not a subsequence of the visible text", urls[i])
		}
		title, _, _ := strings.Cut(vis, "\n")
		mtitle, body, _ := strings.Cut(main, "\n")
		if mtitle != title || !strings.Contains(title, "3.11.2") {
			t.Errorf("%s: main text starts %q, want the title %q", urls[i], mtitle, title)
		}
		own, ok := mainDivText(doc)
		if !ok {
			t.Errorf("%s: no role=main div", urls[i])
			continue
		}
		words := strings.Fields(own)
		if len(words) < 3 {
			t.Errorf("%s: main div has only %q", urls[i], own)
			continue
		}
		if !strings.HasPrefix(body, words[0]) || !strings.HasSuffix(body, words[len(words)-1]) {
			t.Errorf("%s: main text %.60q...%q, want the main div's %q...%q", urls[i], body, body[max(0, len(body)-60):], words[0], words[len(words)-1])
		}
		for _, p := range boilerplate {
			if n, m := strings.Count(body, p), strings.Count(own, p); n > m {
				t.Errorf("%s: main text has the boilerplate %q %d times, the page's body %d", urls[i], p, n, m)
			}
		}
	}
	t.Logf("%d pages: visible %.1f MB, main %.1f MB", len(docs), float64(visBytes)/1e6, float64(mainBytes)/1e6)
}

// mainDivText returns the visible text of the role="main" div of a Sphinx
// page, found by plain string search (its end is the "clearer" div that
// follows it).
func mainDivText(doc string) (string, bool) {
	const start = `role="main">`
	i := strings.Index(doc, start)
	if i < 0 {
		return "", false
	}
	j := strings.Index(doc[i:], `<div class="clearer">`)
	if j < 0 {
		return "", false
	}
	return Extract(doc[i+len(start) : i+j]), true
}

func BenchmarkPythonDocs(b *testing.B) {
	_, docs := readPythonDocs(b)
	total := 0
	for _, d := range docs {
		total += len(d)
	}
	for _, m := range []Mode{Visible, Main} {
		b.Run(m.String(), func(b *testing.B) {
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range docs {
					sink = ExtractMode(d, m)
				}
			}
		})
	}
}
