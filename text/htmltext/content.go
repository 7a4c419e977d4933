package htmltext

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Mode selects which text ExtractMode returns.
type Mode uint8

const (
	// Visible is all the visible text: what Extract returns.
	Visible Mode = iota
	// Main is the page's main content: the visible text minus the
	// site's template (navigation, page header and footer, sidebars,
	// forms, cookie banners, comment sections, link lists), by the rules
	// in the package comment.
	Main
)

// String returns "visible" or "main" (or "Mode(N)" for other values).
func (m Mode) String() string {
	switch m {
	case Visible:
		return "visible"
	case Main:
		return "main"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// ExtractMode returns the text of an HTML document in mode m: Visible is
// Extract, Main the main content (see the package comment for the rules);
// other values of m are treated as Visible. Like Extract, it never panics,
// keeps no Go-stack recursion and runs in time linear in the document.
func ExtractMode(doc string, m Mode) string {
	if m != Main {
		return Extract(doc)
	}
	return ExtractMain(doc)
}

// The constants of the Main rules.
const (
	// maxLinkDensity: a block whose link text is more than this fraction
	// of its text is boilerplate (outside a preferred main region).
	maxLinkDensity = 0.5
	// shortBlock: a block with less text than this (bytes) whose
	// non-empty neighbours are all boilerplate is boilerplate too.
	shortBlock = 50
)

// Flags of an open element (entry.fl) and of a block (block.fl), and
// their bit numbers (indices of mainExtractor.depth).
const (
	bLink       = iota // an a element
	bTitle             // the document's title element (not an SVG title)
	bMain              // main or role=main
	bArticle           // a top-level article (or role=article) outside dropped regions
	bSection           // scopes header and footer: article, aside, main, nav, section
	bRegion            // the element opened a dropped region
	bAnyArticle        // an article at any depth
	bArtSec            // scopes aside: article, section, role=article

	flLink       = 1 << bLink
	flTitle      = 1 << bTitle
	flMain       = 1 << bMain
	flArticle    = 1 << bArticle
	flSection    = 1 << bSection
	flRegion     = 1 << bRegion
	flAnyArticle = 1 << bAnyArticle
	flArtSec     = 1 << bArtSec
)

// entry is an open element on the stack.
type entry struct {
	a  atom.Atom
	fl uint8
}

// region is an element whose contents Main drops (nav, aside, ...).
type region struct {
	parent int32 // enclosing region, -1 for none
	weak   bool  // form or id/class keyword: cancelled when it holds most of the page
	body   bool  // it contains a main, article or h1 (set on the innermost region, then propagated)
	drop   bool  // the final decision, set by assemble
	own    int   // bytes of text whose innermost region this is
	total  int   // own plus the nested regions' (computed by assemble)
}

// run is a stretch of the visible text (starting at a word) in one block
// and one region.
type run struct {
	start, end int   // its bytes in mainExtractor.buf
	text, link int   // bytes of text, and of text inside links
	region     int32 // innermost dropped region, -1 for none
	lead       byte  // the separator before it in buf: ' ', '\n' or 0 at the start
	nl         bool  // it contains a '\n' (a br inside the block)
}

// block is a run of text between two block boundaries (the newline
// separators of Extract, and table cells).
type block struct {
	firstRun int32
	fl       uint8 // flTitle, flMain, flArticle at its first word
}

type mainExtractor struct {
	buf     []byte // the visible text: exactly what Extract returns
	pending separator
	inWord  bool // the last bytes written are a word that more text would continue

	stack   []entry
	open    map[atom.Atom]int32 // number of open elements per atom
	depth   [8]int32            // open elements with each flag bit
	cur     int32               // innermost open region, -1 for none
	regions []region
	runs    []run
	blocks  []block

	newBlock    bool // a block boundary since the last word
	topArticles int  // top-level articles outside dropped regions
}

// ExtractMain returns the main content of an HTML document: ExtractMode(doc, Main).
func ExtractMain(doc string) string {
	z := html.NewTokenizer(strings.NewReader(doc))
	e := mainExtractor{cur: -1, open: make(map[atom.Atom]int32), newBlock: true}
	e.buf = make([]byte, 0, len(doc)/4)
	var skip hidden
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return e.assemble()
		case html.TextToken:
			if skip == 0 {
				e.text(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			a := tagAtom(z.Raw())
			if skip.tag(tt, a) || skip != 0 {
				continue
			}
			sep := separatorOf(a)
			e.separate(sep)
			if sep == newline || a == atom.Td || a == atom.Th {
				e.newBlock = true
			}
			switch tt {
			case html.StartTagToken:
				if a != 0 && !void(a) {
					e.push(z, a)
				}
			case html.EndTagToken:
				e.pop(a)
			}
		}
	}
}

// void reports whether a has no end tag (and no contents).
func void(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img,
		atom.Input, atom.Keygen, atom.Link, atom.Meta, atom.Param, atom.Source,
		atom.Track, atom.Wbr, atom.Frame, atom.Image:
		return true
	}
	return false
}

// push opens element a, whose start tag is z's current token.
func (e *mainExtractor) push(z *html.Tokenizer, a atom.Atom) {
	if a == atom.A && e.open[a] > 0 {
		// A new link closes an open one (HTML5 does the same).
		e.pop(a)
	}
	role, boiler := e.attrs(z, a)
	var fl uint8
	switch a {
	case atom.A:
		fl |= flLink
	case atom.Title:
		if e.open[atom.Svg] == 0 && e.open[atom.Math] == 0 {
			fl |= flTitle
		}
	case atom.Main:
		fl |= flMain | flSection
	case atom.Article:
		fl |= flAnyArticle | flSection | flArtSec
	case atom.Section:
		fl |= flSection | flArtSec
	case atom.Aside, atom.Nav:
		fl |= flSection
	}
	strong := false
	switch role {
	case roleMain:
		fl |= flMain | flSection
	case roleArticle:
		fl |= flAnyArticle | flSection | flArtSec
	case roleBoilerplate:
		strong = true
	case roleForm:
		boiler = true
	case roleNone:
		// The element's own (implicit) role, which an explicit
		// one replaces: <aside role="note"> is a note.
		switch a {
		case atom.Nav, atom.Dialog, atom.Search, atom.Select:
			strong = true
		case atom.Aside:
			strong = e.depth[bArtSec] == 0
		case atom.Header, atom.Footer:
			strong = e.depth[bSection] == 0
		case atom.Form:
			boiler = true
		}
	}
	if e.cur >= 0 && (fl&(flMain|flAnyArticle) != 0 || a == atom.H1) {
		e.regions[e.cur].body = true
	}
	if fl&flAnyArticle != 0 && e.depth[bAnyArticle] == 0 && e.cur < 0 && !strong && !boiler {
		fl |= flArticle
		e.topArticles++
	}
	if strong || boiler {
		fl |= flRegion
		e.regions = append(e.regions, region{parent: e.cur, weak: !strong})
		e.cur = int32(len(e.regions) - 1)
	}
	e.stack = append(e.stack, entry{a: a, fl: fl})
	e.open[a]++
	for i := range e.depth {
		if fl&(1<<i) != 0 {
			e.depth[i]++
		}
	}
}

// pop closes the innermost open element a and every element opened
// after it; an end tag with no open element is ignored. Each element is
// pushed and popped once, so the cost is linear overall.
func (e *mainExtractor) pop(a atom.Atom) {
	if a == 0 || e.open[a] == 0 {
		return
	}
	for len(e.stack) > 0 {
		top := e.stack[len(e.stack)-1]
		e.stack = e.stack[:len(e.stack)-1]
		e.open[top.a]--
		for i := range e.depth {
			if top.fl&(1<<i) != 0 {
				e.depth[i]--
			}
		}
		if top.fl&flRegion != 0 {
			e.cur = e.regions[e.cur].parent
		}
		if top.a == a {
			return
		}
	}
}

// Roles that matter, from the role attribute.
const (
	roleNone = iota
	roleMain
	roleArticle
	roleBoilerplate
	roleForm
	roleOther // a role attribute with none of the roles above
)

// attrs reads the attributes of the current start tag of element a: the
// ARIA role that matters, and whether the class or id names boilerplate.
// html, head, body, title and a are never regions (body classes such as
// WordPress's "comments-open" describe the whole page; links are left to
// link density), and main and article only take their role.
func (e *mainExtractor) attrs(z *html.Tokenizer, a atom.Atom) (role int, boiler bool) {
	switch a {
	case atom.Html, atom.Head, atom.Body, atom.Title, atom.A:
		return roleNone, false
	}
	pageLevel := e.depth[bSection] == 0
	// Class and id names only count on block-level elements, the
	// containers of widgets (and most inline elements of a page carry
	// classes for syntax highlighting and styling, not structure).
	names := a != atom.Main && a != atom.Article && separatorOf(a) == newline
	// Tokenizer.TagAttr allocates for every attribute, so look at the
	// raw tag first: most tags have neither a role nor a class or id
	// that could matter.
	raw := z.Raw()
	if !containsFold(raw, "role") && !(names && (containsFold(raw, "class") || containsFold(raw, "id"))) {
		return roleNone, false
	}
	for more := true; more; {
		var key, val []byte
		key, val, more = z.TagAttr()
		switch string(key) {
		case "role":
			if role == roleNone {
				role = roleOf(val)
			}
		case "class", "id":
			if names && !boiler {
				boiler = boilerplateName(val, pageLevel)
			}
		}
	}
	if role == roleMain || role == roleArticle {
		boiler = false
	}
	return role, boiler
}

// containsFold reports whether b contains the lower-case ASCII word w in
// any case.
func containsFold(b []byte, w string) bool {
	for i := 0; i+len(w) <= len(b); i++ {
		j := 0
		for j < len(w) && b[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// roleOf classifies a role attribute: a list of tokens, of which the
// first one a browser knows wins (ARIA's fallback roles); tokens that
// matter to Main are taken as known, others skipped.
func roleOf(v []byte) int {
	v0 := v
	var buf [16]byte
	for len(v) > 0 {
		var tok []byte
		tok, v = nextField(v)
		if len(tok) == 0 || len(tok) > len(buf) {
			continue
		}
		switch string(lowerInto(buf[:0], tok)) {
		case "main":
			return roleMain
		case "article":
			return roleArticle
		case "navigation", "banner", "contentinfo", "complementary", "search",
			"menu", "menubar", "dialog", "alertdialog", "toolbar":
			return roleBoilerplate
		case "form":
			return roleForm
		}
	}
	if len(nextFieldOnly(v0)) > 0 {
		return roleOther
	}
	return roleNone
}

// nextField returns the first run of non-whitespace bytes of v (empty if
// none) and the rest of v after it.
func nextField(v []byte) (field, rest []byte) {
	i := 0
	for i < len(v) && isSpace(v[i]) {
		i++
	}
	j := i
	for j < len(v) && !isSpace(v[j]) {
		j++
	}
	return v[i:j], v[j:]
}

func nextFieldOnly(v []byte) []byte {
	f, _ := nextField(v)
	return f
}

// lowerInto appends the ASCII lower case of s to dst.
func lowerInto(dst, s []byte) []byte {
	for _, c := range s {
		if isUpper(c) {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// maxWords is how many words of a class name or id boilerplateName reads.
const maxWords = 8

// boilerplateName reports whether a class list or an id names
// boilerplate. Each name is split into lower-case words at bytes other
// than ASCII letters and digits and where a lower-case letter is followed
// by an upper-case one ("cookieBanner", "cookie-banner" and
// "cookie_banner" are all the words cookie, banner); only the first
// maxWords words of a name count. See the package comment for the words.
func boilerplateName(v []byte, pageLevel bool) bool {
	var lower [64]byte
	for len(v) > 0 {
		var name []byte
		name, v = nextField(v)
		var words [maxWords][]byte
		n := 0
		start := -1
		buf := lower[:0]
		for i := 0; i <= len(name) && n < maxWords; i++ {
			alnum := i < len(name) && isAlnum(name[i])
			camel := alnum && start >= 0 && isUpper(name[i]) && isLower(name[i-1])
			if start >= 0 && (!alnum || camel) {
				w := name[start:i]
				if len(buf)+len(w) <= cap(buf) {
					k := len(buf)
					buf = lowerInto(buf, w)
					words[n] = buf[k:]
					n++
				}
				start = -1
			}
			if alnum && start < 0 {
				start = i
			}
		}
		if boilerplateWords(words[:n], pageLevel) {
			return true
		}
	}
	return false
}

// boilerplateWords is the keyword rule of boilerplateName on the words
// of one name.
func boilerplateWords(w [][]byte, pageLevel bool) bool {
	for i, x := range w {
		switch string(x) {
		case "breadcrumb", "breadcrumbs", "consent", "gdpr", "cookiebanner",
			"cookienotice", "cookieconsent", "cookiebar", "cookielaw",
			"comments", "commentlist", "disqus", "sharedaddy", "addtoany",
			"sharethis", "share", "sharing", "navbar", "skiplink":
			return true
		case "cookie", "cookies":
			for _, y := range w {
				switch string(y) {
				case "banner", "notice", "bar", "popup", "policy", "message",
					"law", "alert", "warning", "overlay", "modal", "notification":
					return true
				}
			}
		case "footer", "masthead":
			if pageLevel {
				return true
			}
		}
		if i+1 == len(w) {
			break
		}
		next := string(w[i+1])
		switch string(x) {
		case "comment":
			switch next {
			case "list", "area", "section", "respond", "form", "thread", "container", "wrapper":
				return true
			}
		case "social":
			switch next {
			case "share", "links", "icons", "buttons", "media", "follow", "bar":
				return true
			}
		case "skip":
			switch next {
			case "link", "links", "to", "nav":
				return true
			}
		case "site", "global":
			if next == "header" && pageLevel {
				return true
			}
		}
	}
	// "header" alone (not page-header or entry-header, which often hold
	// the page's title).
	return pageLevel && len(w) == 1 && string(w[0]) == "header"
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

// blockRuns returns the range of e.runs that block b holds.
func (e *mainExtractor) blockRuns(b int) (first, end int) {
	end = len(e.runs)
	if b+1 < len(e.blocks) {
		end = int(e.blocks[b+1].firstRun)
	}
	return int(e.blocks[b].firstRun), end
}

func (e *mainExtractor) separate(s separator) {
	e.pending = max(e.pending, s)
	if s != none {
		e.inWord = false
	}
}

// text appends t as Extract's writer does, recording runs and blocks.
func (e *mainExtractor) text(t []byte) {
	for len(t) > 0 {
		i, j := nextWord(t)
		if i > 0 {
			e.separate(space)
			t = t[i:]
		}
		if j == 0 {
			continue
		}
		if !e.inWord || len(e.runs) == 0 {
			e.startWord()
		}
		r := &e.runs[len(e.runs)-1]
		e.buf = append(e.buf, t[:j]...)
		r.end = len(e.buf)
		r.text += j
		if e.depth[bLink] > 0 {
			r.link += j
		}
		if r.region >= 0 {
			e.regions[r.region].own += j
		}
		e.inWord = true
		t = t[j:]
	}
}

// startWord writes the pending separator and starts a new run (and block)
// when the word's block or region differs from the last run's.
func (e *mainExtractor) startWord() {
	var sep byte
	if e.pending != none && len(e.buf) > 0 {
		sep = ' '
		if e.pending == newline {
			sep = '\n'
		}
		e.buf = append(e.buf, sep)
	}
	e.pending = none
	if !e.newBlock && len(e.runs) > 0 && e.runs[len(e.runs)-1].region == e.cur {
		if sep == '\n' {
			e.runs[len(e.runs)-1].nl = true
		}
		return
	}
	if e.newBlock || len(e.blocks) == 0 {
		var fl uint8
		for _, b := range [...]int{bTitle, bMain, bArticle} {
			if e.depth[b] > 0 {
				fl |= 1 << b
			}
		}
		e.blocks = append(e.blocks, block{firstRun: int32(len(e.runs)), fl: fl})
		e.newBlock = false
	}
	e.runs = append(e.runs, run{start: len(e.buf), end: len(e.buf), region: e.cur, lead: sep})
}

// assemble decides which runs to keep and joins them.
func (e *mainExtractor) assemble() string {
	total := 0
	for i := range e.runs {
		total += e.runs[i].text
	}
	// Region sizes: children come after their parents.
	for i := len(e.regions) - 1; i >= 0; i-- {
		r := &e.regions[i]
		r.total += r.own
		if r.parent >= 0 {
			e.regions[r.parent].total += r.total
			e.regions[r.parent].body = e.regions[r.parent].body || r.body
		}
	}
	for i := range e.regions {
		r := &e.regions[i]
		r.drop = !(r.weak && r.body && 2*r.total > total)
		if r.parent >= 0 && e.regions[r.parent].drop {
			r.drop = true
		}
	}
	dropRun := func(r *run) bool { return r.region >= 0 && e.regions[r.region].drop }

	// Per block: text kept by the region rules, its link text, and
	// whether it had any text at all.
	type stat struct{ kept, link, all int }
	stats := make([]stat, len(e.blocks))
	flags := make([]bool, 3*len(e.blocks))
	bad, shortBad, keep := flags[:len(e.blocks)], flags[len(e.blocks):2*len(e.blocks)], flags[2*len(e.blocks):]
	for b := range e.blocks {
		first, end := e.blockRuns(b)
		for i := first; i < end; i++ {
			r := &e.runs[i]
			stats[b].all += r.text
			if !dropRun(r) {
				stats[b].kept += r.text
				stats[b].link += r.link
			}
		}
	}

	// Link density, then short blocks among link-dense ones. Blocks
	// the regions emptied are skipped, as if absent.
	long := false // some good block is not short
	for b, s := range stats {
		bad[b] = s.kept == 0 || float64(s.link) > maxLinkDensity*float64(s.kept)
		long = long || !bad[b] && s.kept >= shortBlock && e.blocks[b].fl&flTitle == 0
	}
	neighbour := func(b int) bool { return e.blocks[b].fl&flTitle == 0 && stats[b].kept > 0 }
	prev := -1 // the previous neighbour
	for b := range e.blocks {
		if !neighbour(b) {
			continue
		}
		if long && !bad[b] && stats[b].kept < shortBlock {
			next := -1
			for n := b + 1; n < len(e.blocks); n++ {
				if neighbour(n) {
					next = n
					break
				}
			}
			if (prev >= 0 || next >= 0) && (prev < 0 || bad[prev]) && (next < 0 || bad[next]) {
				shortBad[b] = true
			}
		}
		prev = b
	}

	// The main region: main or role=main, else the only top-level
	// article, if it holds at least a third of the text kept otherwise.
	mainFlag := uint8(flMain)
	if !e.anyBlock(flMain) && e.topArticles == 1 {
		mainFlag = flArticle
	}
	mainKept, otherKept := 0, 0
	for b := range e.blocks {
		fl := e.blocks[b].fl
		switch {
		case fl&flTitle != 0:
		case fl&mainFlag != 0:
			mainKept += stats[b].kept
		case !bad[b] && !shortBad[b]:
			otherKept += stats[b].kept
		}
	}
	useMain := mainKept > 0 && 2*mainKept >= otherKept

	for b := range e.blocks {
		fl := e.blocks[b].fl
		switch {
		case fl&flTitle != 0:
			keep[b] = true
		case useMain:
			keep[b] = fl&mainFlag != 0
		default:
			keep[b] = !bad[b] && !shortBad[b]
		}
	}

	var out strings.Builder
	out.Grow(len(e.buf))
	gapNL := false
	for b := range e.blocks {
		first, end := e.blockRuns(b)
		for i := first; i < end; i++ {
			r := &e.runs[i]
			if !keep[b] || dropRun(r) {
				gapNL = gapNL || r.lead == '\n' || r.nl
				continue
			}
			if out.Len() > 0 {
				if gapNL || r.lead == '\n' {
					out.WriteByte('\n')
				} else {
					out.WriteByte(' ')
				}
			}
			gapNL = false
			out.Write(e.buf[r.start:r.end])
		}
	}
	return out.String()
}

// anyBlock reports whether some block has flag f.
func (e *mainExtractor) anyBlock(f uint8) bool {
	for _, b := range e.blocks {
		if b.fl&f != 0 {
			return true
		}
	}
	return false
}
