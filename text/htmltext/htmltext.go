// Package htmltext extracts the visible text of an HTML document: the
// "removing HTML formatting" half of Broder et al.'s canonicalization
// (package canon does the tokens).
//
// It streams the document through golang.org/x/net/html's tokenizer
// rather than building a tree with html.Parse, for two reasons: the
// tree's recursive algorithms put deeply nested (often broken or hostile)
// pages at the mercy of the goroutine stack, and the tree costs memory
// proportional to the page for no benefit, since only the text and the
// block structure matter here. The price is that we do not apply the
// HTML5 tree-construction rules (misnested tags, implied end tags); for
// deciding where words are and which text a reader sees, tag-level
// information is enough.
//
// The rules:
//
//   - The contents of script, style, noscript, template, iframe, noembed
//     and noframes are dropped: they are code, or fallbacks a current
//     browser does not show. The title is kept: users see it, and pages
//     that differ only in body boilerplate often differ in title.
//   - Comments, doctypes and processing instructions are dropped, and so
//     are attribute values (alt text, tooltips).
//   - Block-level elements (p, div, li, tr, h1-h6, section, ...) and br
//     separate text with a newline, and replaced or form elements (img,
//     input, button, select, textarea) and table cells with a space, so
//     the words on either side never glue together. Inline elements (b,
//     i, span, a, ...) insert nothing: "a<b>b</b>c" is the one word "abc",
//     as a browser renders it.
//   - Entities are decoded (the tokenizer does it, as HTML5 specifies),
//     and runs of HTML whitespace collapse to one space or newline, so the
//     result is compact and close to what a reader would copy off the
//     screen.
//
// Extract never panics on malformed input: unclosed tags, stray end tags
// and truncated documents just end or continue the text. Elements hidden
// by CSS or the hidden attribute are kept, since seeing them would need a
// tree and a style engine.
//
// # Main content
//
// ExtractMode(doc, Main) (also ExtractMain) returns the page's main
// content: the visible text above minus the site's template, which makes
// the pages of one site look alike. It only drops text: its words are a
// subsequence of Extract's, never split or glued, and a page with no
// template (none of the elements, roles, names or link-dense blocks
// below) comes out exactly as Extract gives it. The rules, in order:
//
//   - Regions. The contents of these elements are dropped: nav, dialog,
//     search, select; aside unless inside an article or section (there
//     it is the article's own note, as Sphinx's footnotes are); header
//     and footer unless inside an article, aside, main, nav or section
//     (there they are the article's title or byline, per HTML5); form;
//     elements whose role attribute (its first token among these) is
//     navigation, banner, contentinfo, complementary, search, menu,
//     menubar, dialog, alertdialog, toolbar or form; and block-level
//     elements (not html, body, main or article) whose class or id names
//     boilerplate. Names are split into words at non-alphanumeric bytes
//     and lower-to-upper case changes ("cookieBanner" = cookie banner);
//     boilerplate is a word among breadcrumb(s), consent, gdpr,
//     comments, commentlist, disqus, share, sharing, sharedaddy,
//     addtoany, sharethis, navbar, skiplink, cookiebanner, cookienotice,
//     cookieconsent, cookiebar, cookielaw; cookie(s) with banner, notice,
//     bar, popup, policy, message, law, alert, warning, overlay, modal or
//     notification; comment followed by list, area, section, respond,
//     form, thread, container or wrapper; social followed by share,
//     links, icons, buttons, media, follow or bar; skip followed by link,
//     links, to or nav; and, outside article, aside, main, nav and
//     section, footer, masthead, site or global followed by header, or
//     the single word header. (A lone "comment" is not boilerplate: code
//     highlighters use it.) An explicit role replaces the element's own:
//     <aside role="note"> is kept. Forms and name matches are weaker
//     evidence: such a region is kept when it holds more than half of the
//     page's text and contains a main, article or h1 element (an ASP.NET
//     page wraps everything in one form). A word belongs to the region
//     its first byte is in.
//   - Blocks. The text is cut into blocks at block-level tags and table
//     cells (not at br). A block is link-dense when more than half of its
//     remaining text (in bytes, spaces not counted) is inside a elements.
//     A block with less than 50 bytes of text whose nearest non-empty
//     blocks are all link-dense is dropped with them, when the page has
//     at least one kept block of 50 bytes or more (so headings of link
//     lists and one-line copyright notices go; tiny pages stay).
//   - Main region. If the page has a main element or role="main" (else
//     exactly one top-level article, or role="article", outside dropped
//     regions) and its text after the region rules is at least half of
//     the text the block rules keep elsewhere, the result is the title
//     plus that region's text, with its link-dense blocks kept (an index
//     or table of contents is the content of its page). Otherwise the
//     result is every block the block rules keep.
//   - The document title is always kept, as in Extract.
//
// Main keeps an explicit stack of open elements (an end tag closes the
// innermost open element of its name and everything opened after it;
// end tags with no open element, and elements whose names are not HTML
// atoms, such as custom elements, are ignored; a self-closing tag opens
// nothing), so it needs no Go-stack recursion and runs in time linear in
// the document, about two thirds of Extract's speed.
package htmltext

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Extract returns the visible text of an HTML document. script, style,
// noscript, template, head>title is KEPT (title is text users see),
// comments, doctype dropped; block-level elements (p, div, br, li, tr,
// h1-h6, section, article, etc.) separate words with newlines so words on
// either side of a tag never glue together; inline elements (b, i, span,
// a) do not insert separators. Entities decoded. Never panics on malformed
// HTML; deeply nested input must not recurse on the Go stack unboundedly
// (use an iterative tokenizer, html.NewTokenizer, not html.Parse
// recursion).
func Extract(doc string) string {
	z := html.NewTokenizer(strings.NewReader(doc))
	var w writer
	// Visible text is usually a small fraction of the markup.
	w.b.Grow(len(doc) / 4)
	var skip hidden
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			// io.EOF, or a read error that cannot happen on a
			// strings.Reader; the tokenizer has already returned
			// all the text it could.
			return w.b.String()
		case html.TextToken:
			if skip == 0 {
				w.text(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			a := tagAtom(z.Raw())
			if !skip.tag(tt, a) && skip == 0 {
				w.separate(separatorOf(a))
			}
		}
	}
}

// hidden counts the open elements whose contents are not shown (see
// dropped). script, style and the other raw-text ones hold a single text
// token, but template holds markup and can nest, so a counter (not a
// flag) is needed.
type hidden int

// tag counts a tag token of element a in and reports whether a is one of
// the dropped elements.
func (h *hidden) tag(tt html.TokenType, a atom.Atom) bool {
	if !dropped(a) {
		return false
	}
	switch {
	case tt == html.EndTagToken:
		*h = max(*h-1, 0)
	case tt == html.StartTagToken || rawText(a):
		// A self-closing <script/> still opens a script in HTML (the
		// slash is ignored on non-void elements), and the tokenizer
		// treats what follows as its raw text.
		*h++
	}
	return true
}

// dropped reports whether the contents of element a are not shown.
func dropped(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template,
		atom.Iframe, atom.Noembed, atom.Noframes:
		return true
	}
	return false
}

// rawText reports whether the tokenizer reads a's contents as raw text
// even from a self-closing tag.
func rawText(a atom.Atom) bool {
	return a != atom.Template
}

type separator uint8

const (
	none separator = iota
	space
	newline
)

// separatorOf returns what element a puts between the text before and
// after it (either of its tags).
func separatorOf(a atom.Atom) separator {
	switch a {
	case atom.Address, atom.Article, atom.Aside, atom.Blockquote, atom.Body,
		atom.Br, atom.Caption, atom.Center, atom.Dd, atom.Details, atom.Dialog,
		atom.Dir, atom.Div, atom.Dl, atom.Dt, atom.Fieldset, atom.Figcaption,
		atom.Figure, atom.Footer, atom.Form, atom.Frameset, atom.H1, atom.H2,
		atom.H3, atom.H4, atom.H5, atom.H6, atom.Head, atom.Header, atom.Hgroup,
		atom.Hr, atom.Html, atom.Legend, atom.Li, atom.Listing, atom.Main,
		atom.Menu, atom.Nav, atom.Ol, atom.Optgroup, atom.Option, atom.P,
		atom.Plaintext, atom.Pre, atom.Search, atom.Section, atom.Summary,
		atom.Table, atom.Tbody, atom.Tfoot, atom.Thead, atom.Title, atom.Tr,
		atom.Ul, atom.Xmp, atom.Frame:
		return newline
	case atom.Td, atom.Th, atom.Img, atom.Input, atom.Button, atom.Select,
		atom.Textarea, atom.Video, atom.Audio, atom.Canvas, atom.Embed,
		atom.Object, atom.Svg, atom.Math, atom.Label:
		return space
	}
	return none
}

// writer accumulates text, collapsing whitespace and separators: a
// separator is only written when more text follows, and the strongest one
// requested in between wins, so the output has no leading, trailing or
// repeated separators.
type writer struct {
	b       strings.Builder
	pending separator
}

func (w *writer) separate(s separator) {
	w.pending = max(w.pending, s)
}

// text appends t, turning each run of HTML whitespace into a pending
// space.
func (w *writer) text(t []byte) {
	for len(t) > 0 {
		i, j := nextWord(t)
		if i > 0 {
			w.separate(space)
			t = t[i:]
		}
		if j == 0 {
			continue
		}
		if w.pending != none && w.b.Len() > 0 {
			if w.pending == newline {
				w.b.WriteByte('\n')
			} else {
				w.b.WriteByte(' ')
			}
		}
		w.pending = none
		w.b.Write(t[:j])
		t = t[j:]
	}
}

// nextWord returns the length of the run of HTML whitespace at the start of
// t and of the word that follows it.
func nextWord(t []byte) (spaces, word int) {
	for spaces < len(t) && isSpace(t[spaces]) {
		spaces++
	}
	for spaces+word < len(t) && !isSpace(t[spaces+word]) {
		word++
	}
	return spaces, word
}

// isSpace is HTML's ASCII whitespace. Other Unicode spaces (such as the
// no-break space from &nbsp;) are kept: they are text, and package canon
// separates words at them anyway.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// tagAtom returns the atom of the tag whose raw text is raw ("<DIV a=b>",
// "</p>", "<br/>"), or 0 for names that are not atoms. It exists because
// Tokenizer.TagName allocates a copy of every tag name (to replace NUL
// bytes), which made the allocator the main cost of extraction; the name
// is the same bytes the tokenizer reads: up to whitespace, '/' or '>'.
// Every atom this package cares about is short, so longer names (and
// names with NUL or non-ASCII bytes, which are no known element) need
// not be looked up.
func tagAtom(raw []byte) atom.Atom {
	i := 1 // skip '<'
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	var buf [16]byte
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>' {
			break
		}
		if n == len(buf) {
			return 0
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return atom.Lookup(buf[:n])
}
