package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/neardup/neardup/scripts/gencrawl/synth"
)

// HTMLRow is one page of testdata/html/pages.parquet.
type HTMLRow struct {
	ID   string `parquet:"id"`
	URL  string `parquet:"url"`
	Date string `parquet:"date"`
	HTML string `parquet:"html"`
}

// HTMLTruth is testdata/html/truth.json.
type HTMLTruth struct {
	Seed        uint64   `json:"seed"`
	ShingleSize int      `json:"shingle_size"`
	Tokenizer   string   `json:"tokenizer"`
	VisibleText string   `json:"visible_text"`
	File        string   `json:"file"`
	TotalRows   int      `json:"total_rows"`
	HiddenWords []string `json:"hidden_words"`
	Groups      []Group  `json:"groups"`
	Unrelated   []Member `json:"unrelated"`
}

const visibleTextDoc = "text nodes inside <body> excluding <script>, <style> and comments, entities decoded " +
	"(<title> and attribute values are not visible text); every token boundary in the generated markup has " +
	"whitespace or punctuation, so joining text nodes with or without a separator gives the same tokens; " +
	"no hidden_words token may appear in correctly extracted text"

// HTMLPages is the file name of the html parquet file.
const HTMLPages = "pages.parquet"

// htmlSite holds the visible boilerplate shared by pages of one site.
type htmlSite struct {
	domain string
	name   []string
	nav    [][]string // link texts
	hrefs  []string
	footer []item
}

// markup holds the invisible parts of a page and the rendering style.
type markup struct {
	template    int // 0: semantic html5, 1: div soup
	css, js     string
	tailJS      string
	classes     []string
	comment     string
	amp, copy   string // entity spellings
	nbsp        string
	nbspProb    int // per mille of spaces written as nbsp
	tagProb     int // per mille of words wrapped in an inline tag
	commentProb int // per mille of spaces replaced by an inline comment
	nlProb      int // per mille of spaces written as newlines
}

type htmlDoc struct {
	site  *htmlSite
	title []item
	body  []item
}

// visible returns the visible token sequence of a page: navigation, h1
// title, body paragraphs, footer.
func (d *htmlDoc) visible(body []item) []string {
	var t []string
	for _, l := range d.site.nav {
		t = append(t, l...)
	}
	t = append(t, itemTokens(d.title)...)
	t = append(t, itemTokens(body)...)
	return append(t, itemTokens(d.site.footer)...)
}

type htmlGen struct {
	r *rand.Rand
	g *textGen
	v *Vocab
	u *urlGen
}

func (h *htmlGen) hidden() string { return h.v.HiddenWord(h.r) }

func (h *htmlGen) hiddenPhrase(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = h.hidden()
	}
	return strings.Join(w, " ")
}

func (h *htmlGen) css(rules int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "/* %s */\n", h.hiddenPhrase(4+h.r.IntN(6)))
	props := []string{"color", "margin", "padding", "font-size", "background", "border", "line-height", "display"}
	for i := 0; i < rules; i++ {
		switch h.r.IntN(3) {
		case 0:
			fmt.Fprintf(&b, ".%s-%s", h.hidden(), h.hidden())
		case 1:
			fmt.Fprintf(&b, "#%s .%s", h.hidden(), h.hidden())
		default:
			fmt.Fprintf(&b, "nav a.%s, .%s:hover", h.hidden(), h.hidden())
		}
		b.WriteString(" {\n")
		for j := 0; j < 2+h.r.IntN(4); j++ {
			switch p := props[h.r.IntN(len(props))]; p {
			case "color":
				fmt.Fprintf(&b, "  color: #%06x;\n", h.r.IntN(1<<24))
			case "background":
				fmt.Fprintf(&b, "  background: url(\"/img/%s-%s.png\") no-repeat;\n", h.hidden(), h.hidden())
			case "display":
				b.WriteString("  display: flex;\n")
			default:
				fmt.Fprintf(&b, "  %s: %dpx;\n", p, h.r.IntN(40))
			}
		}
		if h.r.IntN(4) == 0 {
			fmt.Fprintf(&b, "  font-family: \"%s\", sans-serif;\n", capitalize(h.hidden()))
		}
		b.WriteString("}\n")
		if h.r.IntN(8) == 0 {
			fmt.Fprintf(&b, "/* %s */\n", h.hiddenPhrase(3+h.r.IntN(5)))
		}
	}
	return b.String()
}

func (h *htmlGen) js(stmts int) string {
	var b strings.Builder
	b.WriteString("(function (w, d) {\n  'use strict';\n")
	for i := 0; i < stmts; i++ {
		switch h.r.IntN(5) {
		case 0:
			fmt.Fprintf(&b, "  var %s = \"%s\";\n", h.hidden(), h.hiddenPhrase(2+h.r.IntN(6)))
		case 1:
			fmt.Fprintf(&b, "  function %s(%s, %s) { return %s + %d * %s; }\n", h.hidden(), h.hidden(), "n", "n", h.r.IntN(100), "n")
		case 2:
			fmt.Fprintf(&b, "  w.%s = { %s: \"%s\", %s: [%d, %d, %d] };\n", h.hidden(), h.hidden(), h.hiddenPhrase(3), h.hidden(), h.r.IntN(9), h.r.IntN(99), h.r.IntN(999))
		case 3:
			fmt.Fprintf(&b, "  d.addEventListener(\"DOMContentLoaded\", function () { console.log(\"%s\"); });\n", h.hiddenPhrase(2+h.r.IntN(4)))
		default:
			fmt.Fprintf(&b, "  // %s\n", h.hiddenPhrase(3+h.r.IntN(6)))
		}
	}
	b.WriteString("})(window, document);\n")
	return b.String()
}

func (h *htmlGen) newMarkup(template, cssRules, jsStmts int) *markup {
	m := &markup{template: template, css: h.css(cssRules), js: h.js(jsStmts), tailJS: h.js(2 + h.r.IntN(3)),
		comment: h.hiddenPhrase(4 + h.r.IntN(8))}
	for i := 0; i < 6; i++ {
		m.classes = append(m.classes, h.hidden()+"-"+h.hidden())
	}
	if template == 0 {
		m.amp, m.copy, m.nbsp = "&amp;", "&copy;", "&nbsp;"
		m.nbspProb, m.tagProb, m.commentProb, m.nlProb = 10, 10, 0, 0
	} else {
		m.amp, m.copy, m.nbsp = "&#38;", "&#169;", "&#160;"
		m.nbspProb, m.tagProb, m.commentProb, m.nlProb = 40, 60, 8, 30
	}
	return m
}

func (h *htmlGen) newSite() *htmlSite {
	s := &htmlSite{name: []string{h.v.Name(h.r), h.v.Name(h.r)}}
	s.domain = "www." + s.name[0] + "-" + s.name[1] + ".com"
	k := 4 + h.r.IntN(4)
	for i := 0; i < k; i++ {
		l := []string{h.v.Rare(h.r)}
		if h.r.IntN(3) == 0 {
			l = append(l, h.v.Rare(h.r))
		}
		s.nav = append(s.nav, l)
		s.hrefs = append(s.hrefs, "/"+strings.Join(l, "-")+"/")
	}
	f := h.g.sentence(6 + h.r.IntN(6))
	f = append(f, item{w: h.v.Rare(h.r), title: true, p: " &"}, item{w: h.v.Rare(h.r), title: true, p: " ©"})
	f = append(f, item{w: "2026", nb: true})
	for _, w := range s.name {
		f = append(f, item{w: w, title: true})
	}
	f[len(f)-1].p = "."
	s.footer = f
	return s
}

// decorate adds a few "&" and "—" marks between body words (visible
// punctuation that must be written as entities).
func (h *htmlGen) decorate(d []item) []item {
	for i := range d {
		if d[i].p == "" && !d[i].br && i < len(d)-1 {
			switch x := h.r.IntN(1000); {
			case x < 12:
				d[i].p = " &"
			case x < 18:
				d[i].p = " —"
			}
		}
	}
	return d
}

func escapeP(p string, m *markup) string {
	p = strings.ReplaceAll(p, "&", m.amp)
	p = strings.ReplaceAll(p, "©", m.copy)
	if m.template == 0 {
		p = strings.ReplaceAll(p, "—", "&mdash;")
	} else {
		p = strings.ReplaceAll(p, "—", "&#8212;")
	}
	return p
}

// inline renders items as html text with entities, inline tags and comments.
func (h *htmlGen) inline(d []item, m *markup, capFirst bool) string {
	var b strings.Builder
	capNext := capFirst
	tags := []string{"b", "em", "strong", "i", "span"}
	for i, it := range d {
		w := it.w
		if capNext || it.title {
			w = capitalize(w)
		}
		if h.r.IntN(1000) < m.tagProb {
			t := tags[h.r.IntN(len(tags))]
			if h.r.IntN(4) == 0 {
				fmt.Fprintf(&b, "<a href=\"/%s\" title=\"%s\">%s</a>", h.hidden(), h.hidden(), w)
			} else {
				fmt.Fprintf(&b, "<%s>%s</%s>", t, w, t)
			}
		} else {
			b.WriteString(w)
		}
		b.WriteString(escapeP(it.p, m))
		capNext = endsSentence(it.p)
		if i == len(d)-1 {
			break
		}
		switch x := h.r.IntN(1000); {
		case it.nb || x < m.nbspProb:
			b.WriteString(m.nbsp)
		case x < m.nbspProb+m.commentProb:
			fmt.Fprintf(&b, " <!-- %s --> ", h.hiddenPhrase(2))
		case x < m.nbspProb+m.commentProb+m.nlProb:
			b.WriteString("\n")
		default:
			b.WriteString(" ")
		}
	}
	return b.String()
}

func titleText(t []item) string {
	w := make([]string, len(t))
	for i, it := range t {
		w[i] = capitalize(it.w)
	}
	return strings.Join(w, " ")
}

// renderHTML renders a full page.
func (h *htmlGen) renderHTML(d *htmlDoc, body []item, m *markup) string {
	s := d.site
	var b strings.Builder
	title := titleText(d.title)
	siteName := titleText([]item{{w: s.name[0]}, {w: s.name[1]}})
	paras := paragraphSpans(body)
	if m.template == 0 {
		b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
		b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
		fmt.Fprintf(&b, "<title>%s | %s</title>\n", title, siteName)
		fmt.Fprintf(&b, "<meta name=\"description\" content=\"%s\">\n", h.hiddenPhrase(6))
		fmt.Fprintf(&b, "<style>\n%s</style>\n<script>\n%s</script>\n</head>\n", m.css, m.js)
		fmt.Fprintf(&b, "<body class=\"%s\">\n<header>\n<nav class=\"%s\">\n<ul>\n", m.classes[0], m.classes[1])
		for i, l := range s.nav {
			fmt.Fprintf(&b, "  <li><a href=\"%s\">%s</a></li>\n", s.hrefs[i], titleText(wordsItems(l)))
		}
		b.WriteString("</ul>\n</nav>\n</header>\n")
		fmt.Fprintf(&b, "<!-- %s -->\n", m.comment)
		fmt.Fprintf(&b, "<main>\n<article class=\"%s\">\n<h1>%s</h1>\n", m.classes[2], title)
		for _, p := range paras {
			fmt.Fprintf(&b, "<p>%s</p>\n", h.inline(body[p.s:p.e], m, true))
		}
		b.WriteString("</article>\n</main>\n")
		fmt.Fprintf(&b, "<footer class=\"%s\">\n<p>%s</p>\n</footer>\n", m.classes[3], h.inline(s.footer, m, true))
		fmt.Fprintf(&b, "<script>\n%s</script>\n</body>\n</html>\n", m.tailJS)
		return b.String()
	}
	b.WriteString("<!doctype html>\n<html>\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\">\n")
	fmt.Fprintf(&b, "<title>%s &#8211; %s</title>\n", siteName, title)
	fmt.Fprintf(&b, "<link rel=\"stylesheet\" href=\"/static/%s.css\">\n", m.classes[4])
	fmt.Fprintf(&b, "<script type=\"text/javascript\">\n%s</script>\n", m.js)
	fmt.Fprintf(&b, "<style type=\"text/css\">\n%s</style>\n</head>\n", m.css)
	fmt.Fprintf(&b, "<body>\n<div id=\"wrap\" class=\"%s\">\n<div class=\"topbar\" data-track=\"%s\">", m.classes[0], h.hiddenPhrase(3))
	for i, l := range s.nav {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "<a href=\"%s\" class=\"%s\">%s</a>", s.hrefs[i], m.classes[1], titleText(wordsItems(l)))
	}
	b.WriteString("</div>\n")
	fmt.Fprintf(&b, "<div class=\"content %s\">\n<h2 class=\"headline\"><span>%s</span></h2>\n", m.classes[2], title)
	for i, p := range paras {
		if i == len(paras)/2 {
			fmt.Fprintf(&b, "<!-- %s -->\n", m.comment)
		}
		if h.r.IntN(3) == 0 {
			fmt.Fprintf(&b, "%s<br>\n<br>\n", h.inline(body[p.s:p.e], m, true))
		} else {
			fmt.Fprintf(&b, "<div class=\"%s\">%s</div>\n", m.classes[5], h.inline(body[p.s:p.e], m, true))
		}
	}
	b.WriteString("</div>\n")
	fmt.Fprintf(&b, "<div class=\"foot\"><span>%s</span></div>\n</div>\n", h.inline(s.footer, m, true))
	fmt.Fprintf(&b, "<script type=\"text/javascript\">\n%s</script>\n</body>\n</html>\n", m.tailJS)
	return b.String()
}

func wordsItems(w []string) []item {
	out := make([]item, len(w))
	for i, x := range w {
		out[i] = item{w: x}
	}
	return out
}

type htmlPage struct {
	html    string
	url     string
	id      string
	group   int
	role    string
	visible []string
}

// BuildHTML generates the html pages, their truth, and the expected visible
// token sequence of every row (for tests).
func BuildHTML(seed uint64, v *Vocab) ([]HTMLRow, *HTMLTruth, [][]string, error) {
	r := rand.New(rand.NewPCG(seed, 0x68746d6c)) // "html"
	h := &htmlGen{r: r, g: &textGen{r: r, v: v}, v: v, u: newURLGen(r, v)}
	var pages []htmlPage
	var groups []*Group
	newGroup := func(name, kind string) int {
		groups = append(groups, &Group{Group: name, Kind: kind})
		return len(groups) - 1
	}
	add := func(gi int, d *htmlDoc, body []item, m *markup, role string) {
		pg := htmlPage{html: h.renderHTML(d, body, m), url: h.u.url(d.site.domain), group: gi, role: role, visible: d.visible(body)}
		pages = append(pages, pg)
		if gi >= 0 {
			groups[gi].idx = append(groups[gi].idx, len(pages)-1)
		}
	}
	newDoc := func(s *htmlSite, lo int) *htmlDoc {
		t := h.g.sentence(3 + h.r.IntN(6))
		return &htmlDoc{site: s, title: t, body: h.decorate(h.g.doc(synth.LogNormalAtLeast(r, 300, 0.6, lo, 1500)))}
	}

	// same visible text, different markup
	for k := 0; k < 5; k++ {
		gi := newGroup(fmt.Sprintf("html-lexical-%03d", k), KindLexical)
		groups[gi].Note = "identical visible text; different markup, scripts, styles, entity spellings, inline tags and comments"
		s := h.newSite()
		d := newDoc(s, 100)
		add(gi, d, d.body, h.newMarkup(0, 10+r.IntN(20), 5+r.IntN(15)), "original")
		add(gi, d, d.body, h.newMarkup(1, 10+r.IntN(20), 5+r.IntN(15)), "variant")
	}
	// near copies at 0.8 (same site and template)
	for k := 0; k < 5; k++ {
		gi := newGroup(fmt.Sprintf("html-near-0.80-%03d", k), KindNear)
		groups[gi].Target = 0.8
		s := h.newSite()
		var d *htmlDoc
		var variant []item
		for {
			d = newDoc(s, 250)
			var ok bool
			variant, _, ok = h.g.makeNear(d.body, d.visible, 0.8, nearAim)
			if ok {
				break
			}
		}
		m := h.newMarkup(r.IntN(2), 10+r.IntN(20), 5+r.IntN(15))
		add(gi, d, d.body, m, "base")
		add(gi, d, variant, m, "variant")
	}
	// shared big script/style, distinct visible text
	{
		gi := newGroup("html-shared-markup", KindSharedMark)
		groups[gi].Note = "pages share a large <script> and <style> block plus nav/footer but have distinct visible text; NOT near-duplicates"
		s := h.newSite()
		m := h.newMarkup(0, 90, 120)
		groups[gi].Site = s.domain
		for j := 0; j < 12; j++ {
			d := newDoc(s, 150)
			add(gi, d, d.body, m, "page")
		}
	}
	// unrelated pages on a few sites
	var sites []*htmlSite
	var marks []*markup
	for k := 0; k < 6; k++ {
		sites = append(sites, h.newSite())
		marks = append(marks, h.newMarkup(k%2, 10+r.IntN(30), 5+r.IntN(25)))
	}
	for len(pages) < 60 {
		k := r.IntN(len(sites))
		d := newDoc(sites[k], 60)
		add(-1, d, d.body, marks[k], "unrelated")
	}

	// ids, order
	seen := map[string]bool{}
	for i := range pages {
		id := uuid(r)
		for seen[id] {
			id = uuid(r)
		}
		seen[id] = true
		pages[i].id = id
	}
	isDup := func(a, b int) bool {
		ga := pages[a].group
		return ga >= 0 && ga == pages[b].group && groups[ga].Kind != KindSharedMark
	}
	order := r.Perm(len(pages))
	for changed := true; changed; {
		changed = false
		for i := 0; i+1 < len(order); i++ {
			if isDup(order[i], order[i+1]) {
				j := r.IntN(len(order))
				order[i+1], order[j] = order[j], order[i+1]
				changed = true
			}
		}
	}
	rowOf := make([]int, len(pages))
	rows := make([]HTMLRow, len(pages))
	visible := make([][]string, len(pages))
	base := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC).Unix()
	for pos, pi := range order {
		rowOf[pi] = pos
		p := pages[pi]
		rows[pos] = HTMLRow{ID: p.id, URL: p.url, Date: time.Unix(base+r.Int64N(45*86400), 0).UTC().Format(time.RFC3339), HTML: p.html}
		visible[pos] = p.visible
	}
	mem := func(i int) Member {
		p := pages[i]
		return Member{ID: p.id, URL: p.url, File: HTMLPages, Row: rowOf[i], Role: p.role, Tokens: len(p.visible)}
	}
	tr := &HTMLTruth{Seed: seed, ShingleSize: ShingleSize, Tokenizer: tokenizerDoc, VisibleText: visibleTextDoc,
		File: HTMLPages, TotalRows: len(rows), HiddenWords: v.Hidden}
	for _, gr := range groups {
		for _, i := range gr.idx {
			gr.Members = append(gr.Members, mem(i))
		}
		var maxR, maxC float64
		for a := 0; a < len(gr.idx); a++ {
			for b := a + 1; b < len(gr.idx); b++ {
				m := Compare(ShingleSet(pages[gr.idx[a]].visible), ShingleSet(pages[gr.idx[b]].visible))
				if gr.Kind == KindSharedMark {
					maxR = max(maxR, m.Resemblance)
					maxC = max(maxC, m.ContAInB, m.ContBInA)
					continue
				}
				if gr.Kind == KindNear && math.Abs(m.Resemblance-gr.Target) > NearTolerance {
					return nil, nil, nil, fmt.Errorf("%s: resemblance %.4f off target", gr.Group, m.Resemblance)
				}
				gr.Pairs = append(gr.Pairs, Pair{A: pages[gr.idx[a]].id, B: pages[gr.idx[b]].id,
					Resemblance: round6(m.Resemblance), ContainmentAInB: round6(m.ContAInB), ContainmentBInA: round6(m.ContBInA), Targeted: true})
			}
		}
		if gr.Kind == KindSharedMark {
			maxR, maxC = round6(maxR), round6(maxC)
			gr.MaxPairResemblance, gr.MaxPairContainment = &maxR, &maxC
		}
		tr.Groups = append(tr.Groups, *gr)
	}
	for _, pi := range order {
		if pages[pi].group < 0 {
			tr.Unrelated = append(tr.Unrelated, mem(pi))
		}
	}
	return rows, tr, visible, nil
}
