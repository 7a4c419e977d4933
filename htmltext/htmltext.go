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
	// skip counts open dropped elements. script, style and the other
	// raw-text ones hold a single text token, but template holds markup
	// and can nest, so a counter (not a flag) is needed.
	skip := 0
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
			if dropped(a) {
				switch {
				case tt == html.EndTagToken:
					skip = max(skip-1, 0)
				case tt == html.StartTagToken || rawText(a):
					// A self-closing <script/> still opens a
					// script in HTML (the slash is ignored on
					// non-void elements), and the tokenizer
					// treats what follows as its raw text.
					skip++
				}
				continue
			}
			if skip == 0 {
				w.separate(separatorOf(a))
			}
		}
	}
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
		i := 0
		for i < len(t) && isSpace(t[i]) {
			i++
		}
		if i > 0 {
			w.separate(space)
			t = t[i:]
		}
		j := 0
		for j < len(t) && !isSpace(t[j]) {
			j++
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
