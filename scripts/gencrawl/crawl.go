package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/neardup/neardup/scripts/gencrawl/synth"
)

// Row is one page of the synthetic crawl, with the FineWeb schema.
type Row struct {
	Text          string  `parquet:"text"`
	ID            string  `parquet:"id"`
	Dump          string  `parquet:"dump,dict"`
	URL           string  `parquet:"url"`
	Date          string  `parquet:"date"`
	FilePath      string  `parquet:"file_path,dict"`
	Language      string  `parquet:"language,dict"`
	LanguageScore float64 `parquet:"language_score"`
	TokenCount    int64   `parquet:"token_count"`
}

// Dump is the value of the dump column of every crawl row.
const Dump = "CC-MAIN-2026-01"

// Page kinds / group kinds.
const (
	KindExact       = "exact"
	KindLexical     = "lexical"
	KindNear        = "near"
	KindContained   = "contained"
	KindBoilerplate = "boilerplate"
	KindUnrelated   = "unrelated"
	KindEdge        = "edge"
	KindSharedMark  = "shared_markup"
)

// NearLevels are the target 10-shingle resemblances of the near-copy groups.
var NearLevels = []float64{0.95, 0.8, 0.6, 0.3}

// NearTolerance is the maximum allowed |measured - target| for targeted pairs.
const NearTolerance = 0.03

// nearAim is the tolerance the generator actually aims for.
const nearAim = 0.015

// CrawlConfig controls the size of the crawl.
type CrawlConfig struct {
	Pages           int     // total rows
	Files           int     // number of parquet files
	RowsPerGroup    int64   // max rows per row group
	ExactGroups     int     // groups of 2-5 byte-identical texts
	LexicalPairs    int     // pairs with the same tokens
	NearGroups      int     // groups per level
	NearTriples     int     // of which have 3 members
	ContainedPairs  int     // short excerpt + long page
	SiteSizes       []int   // pages per boilerplate site; the first must exceed 1000
	UnrelatedSample int     // unrelated ids listed in the truth
	MedianWords     float64 // median page length
	SigmaWords      float64 // log-normal sigma of page length
}

// DefaultCrawlConfig is the configuration of the committed testdata.
func DefaultCrawlConfig() CrawlConfig {
	return CrawlConfig{
		Pages:           3000,
		Files:           4,
		RowsPerGroup:    250,
		ExactGroups:     60,
		LexicalPairs:    10,
		NearGroups:      25,
		NearTriples:     5,
		ContainedPairs:  25,
		SiteSizes:       []int{1050, 60, 45, 30},
		UnrelatedSample: 50,
		MedianWords:     300,
		SigmaWords:      0.75,
	}
}

// ---- ground truth (JSON)

// Truth is testdata/crawl/truth.json.
type Truth struct {
	Seed            uint64    `json:"seed"`
	ShingleSize     int       `json:"shingle_size"`
	Tokenizer       string    `json:"tokenizer"`
	Totals          Totals    `json:"totals"`
	Groups          []Group   `json:"groups"`
	EdgeRows        []EdgeRow `json:"edge_rows"`
	UnrelatedSample []Member  `json:"unrelated_sample"`
}

// FileTotal counts the rows of one parquet file.
type FileTotal struct {
	File      string `json:"file"`
	Rows      int    `json:"rows"`
	RowGroups int    `json:"row_groups"`
}

// KindCounts counts pages or groups per kind.
type KindCounts struct {
	Exact       int `json:"exact"`
	Lexical     int `json:"lexical"`
	Near        int `json:"near"`
	Contained   int `json:"contained"`
	Boilerplate int `json:"boilerplate"`
	Unrelated   int `json:"unrelated"`
	Edge        int `json:"edge"`
}

func (k *KindCounts) add(kind string, n int) {
	switch kind {
	case KindExact:
		k.Exact += n
	case KindLexical:
		k.Lexical += n
	case KindNear:
		k.Near += n
	case KindContained:
		k.Contained += n
	case KindBoilerplate:
		k.Boilerplate += n
	case KindUnrelated:
		k.Unrelated += n
	case KindEdge:
		k.Edge += n
	}
}

// Totals summarizes the crawl.
type Totals struct {
	Files        []FileTotal `json:"files"`
	TotalRows    int         `json:"total_rows"`
	PagesByKind  KindCounts  `json:"pages_by_kind"`
	GroupsByKind KindCounts  `json:"groups_by_kind"`
	// Largest resemblance / containment between two pages that are not in
	// the same exact/lexical/near/contained group (exhaustive over all pairs
	// sharing at least one shingle of document frequency <= 20; pairs sharing
	// only more common shingles are pages of one boilerplate site, see the
	// boilerplate groups' max_pair_* fields).
	MaxUnplantedResemblance float64 `json:"max_unplanted_resemblance"`
	MaxUnplantedContainment float64 `json:"max_unplanted_containment"`
	// Largest number of documents containing one 10-shingle (the header of
	// the big boilerplate site).
	MaxShingleDocFreq int `json:"max_shingle_doc_freq"`
}

// Member is one page of a group.
type Member struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	File   string `json:"file"`
	Row    int    `json:"row"`
	Role   string `json:"role"`
	Tokens int    `json:"tokens"`
}

// Pair holds exact 10-shingle metrics of two members (by id).
type Pair struct {
	A               string  `json:"a"`
	B               string  `json:"b"`
	Resemblance     float64 `json:"resemblance"`
	ContainmentAInB float64 `json:"containment_a_in_b"`
	ContainmentBInA float64 `json:"containment_b_in_a"`
	// Targeted is true for the planted duplicate relations (all pairs of
	// lexical groups, base-variant pairs of near groups, the
	// container-excerpt pair of contained groups) and false for derived
	// pairs (variant-variant in near groups of three).
	Targeted bool `json:"targeted"`
}

// Group is one planted group.
type Group struct {
	Group  string  `json:"group"`
	Kind   string  `json:"kind"`
	Target float64 `json:"target,omitempty"`
	Note   string  `json:"note,omitempty"`
	// boilerplate / shared_markup groups only
	Site                string   `json:"site,omitempty"`
	Header              string   `json:"header,omitempty"`
	Footer              string   `json:"footer,omitempty"`
	HeaderWords         int      `json:"header_words,omitempty"`
	FooterWords         int      `json:"footer_words,omitempty"`
	BoilerplateShingles int      `json:"boilerplate_shingles,omitempty"`
	MaxPairResemblance  *float64 `json:"max_pair_resemblance,omitempty"`
	MaxPairContainment  *float64 `json:"max_pair_containment,omitempty"`

	Members []Member `json:"members"`
	Pairs   []Pair   `json:"pairs,omitempty"`

	idx      []int    // page indices
	targeted [][2]int // member positions of targeted pairs (nil: all pairs)
}

// EdgeRow is a degenerate row.
type EdgeRow struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	File   string `json:"file"`
	Row    int    `json:"row"`
	What   string `json:"what"`
	Text   string `json:"text"`
	Tokens int    `json:"tokens"`
}

const tokenizerDoc = "lowercase the text, split on every rune that is not a letter or digit (strings.FieldsFunc); " +
	"shingles are runs of 10 consecutive tokens; a text with fewer than 10 tokens has no shingles; " +
	"resemblance = |S(A)∩S(B)|/|S(A)∪S(B)|, containment of A in B = |S(A)∩S(B)|/|S(A)|"

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// ---- generation

type page struct {
	text  string
	kind  string
	group int // index into groups, -1 if none
	role  string
	what  string // edge rows
	url   string
	id    string
}

type crawlGen struct {
	cfg    CrawlConfig
	r      *rand.Rand
	g      *textGen
	u      *urlGen
	pages  []page
	groups []*Group
}

func (c *crawlGen) addPage(p page) int {
	c.pages = append(c.pages, p)
	return len(c.pages) - 1
}

func (c *crawlGen) newGroup(name, kind string) (*Group, int) {
	gr := &Group{Group: name, Kind: kind}
	c.groups = append(c.groups, gr)
	return gr, len(c.groups) - 1
}

func (c *crawlGen) member(gi int, text, role, url string) {
	i := c.addPage(page{text: text, kind: c.groups[gi].Kind, group: gi, role: role, url: url})
	c.groups[gi].idx = append(c.groups[gi].idx, i)
}

func (c *crawlGen) pageLen() int {
	return synth.LogNormal(c.r, c.cfg.MedianWords, c.cfg.SigmaWords, 30, 3000)
}

// BuildCrawl generates the crawl rows (split into files) and its truth.
func BuildCrawl(seed uint64, v *Vocab, cfg CrawlConfig) ([][]Row, *Truth, error) {
	r := rand.New(rand.NewPCG(seed, 0x6372617766)) // "crawl"
	c := &crawlGen{cfg: cfg, r: r, g: &textGen{r: r, v: v}}
	c.u = newURLGen(r, v)

	c.genExact()
	c.genLexical()
	if err := c.genNear(); err != nil {
		return nil, nil, err
	}
	if err := c.genContained(); err != nil {
		return nil, nil, err
	}
	c.genSites()
	c.genEdge()
	for len(c.pages) < cfg.Pages {
		c.addPage(page{text: render(c.g.doc(c.pageLen())), kind: KindUnrelated, group: -1, url: c.u.url(c.u.domain())})
	}
	if len(c.pages) != cfg.Pages {
		return nil, nil, fmt.Errorf("planted %d pages, more than the %d requested", len(c.pages), cfg.Pages)
	}
	seen := make(map[string]bool, len(c.pages))
	for i := range c.pages {
		id := uuid(r)
		for seen[id] {
			id = uuid(r)
		}
		seen[id] = true
		c.pages[i].id = id
	}

	order := c.shuffle()
	return c.finish(seed, order)
}

func (c *crawlGen) genExact() {
	for k := 0; k < c.cfg.ExactGroups; k++ {
		_, gi := c.newGroup(fmt.Sprintf("exact-%03d", k), KindExact)
		n := 2
		switch x := c.r.IntN(100); {
		case x < 45:
			n = 2
		case x < 72:
			n = 3
		case x < 88:
			n = 4
		default:
			n = 5
		}
		text := render(c.g.doc(c.pageLen()))
		first := c.u.url(c.u.domain())
		for j := 0; j < n; j++ {
			u := first
			if j > 0 {
				if c.r.IntN(10) < 4 {
					u = c.u.variantOf(first)
				} else {
					u = c.u.url(c.u.domain())
				}
			}
			c.member(gi, text, "copy", u)
		}
	}
}

func (c *crawlGen) genLexical() {
	for k := 0; k < c.cfg.LexicalPairs; k++ {
		gr, gi := c.newGroup(fmt.Sprintf("lexical-%03d", k), KindLexical)
		gr.Note = "same token sequence; differs only in case, whitespace and punctuation"
		d := c.g.doc(synth.LogNormalAtLeast(c.r, c.cfg.MedianWords, c.cfg.SigmaWords, 60, 3000))
		orig := render(d)
		var variant string
		for {
			variant = renderLexical(c.r, d)
			if variant != orig && slices.Equal(Tokens(variant), Tokens(orig)) {
				break
			}
		}
		c.member(gi, orig, "original", c.u.url(c.u.domain()))
		c.member(gi, variant, "variant", c.u.url(c.u.domain()))
	}
}

func (c *crawlGen) genNear() error {
	for _, level := range NearLevels {
		triples := c.r.Perm(c.cfg.NearGroups)[:c.cfg.NearTriples]
		for k := 0; k < c.cfg.NearGroups; k++ {
			n := 2
			if slices.Contains(triples, k) {
				n = 3
			}
			gr, gi := c.newGroup(fmt.Sprintf("near-%.2f-%03d", level, k), KindNear)
			gr.Target = level
			var base []item
			var variants [][]item
			for tries := 0; ; tries++ {
				if tries > 20 {
					return fmt.Errorf("near copy at level %.2f did not converge", level)
				}
				base = c.g.doc(synth.LogNormalAtLeast(c.r, 400, 0.6, 250, 3000))
				variants = variants[:0]
				for j := 1; j < n; j++ {
					v, _, ok := c.g.makeNear(base, itemTokens, level, nearAim)
					if !ok {
						break
					}
					variants = append(variants, v)
				}
				if len(variants) == n-1 {
					break
				}
			}
			domain := ""
			c.member(gi, render(base), "base", c.u.url(c.u.domain()))
			for _, v := range variants {
				if domain == "" || c.r.IntN(2) == 0 {
					domain = c.u.domain()
				}
				c.member(gi, render(v), "variant", c.u.url(domain))
			}
			for j := 1; j < n; j++ {
				gr.targeted = append(gr.targeted, [2]int{0, j})
			}
		}
	}
	return nil
}

func (c *crawlGen) genContained() error {
	for k := 0; k < c.cfg.ContainedPairs; k++ {
		gr, gi := c.newGroup(fmt.Sprintf("contained-%03d", k), KindContained)
		var long, short []item
		for tries := 0; ; tries++ {
			if tries > 50 {
				return fmt.Errorf("could not build containment pair")
			}
			long = c.g.doc(synth.LogNormalAtLeast(c.r, 1200, 0.4, 900, 3000))
			ex := c.g.excerpt(long, 60, 200)
			if ex == nil {
				continue
			}
			var pre, post []item
			if c.r.IntN(10) < 6 {
				pre = c.g.sentence(1 + c.r.IntN(4))
				pre[len(pre)-1].p = "."
				pre[len(pre)-1].br = c.r.IntN(2) == 0
			}
			if c.r.IntN(10) < 5 {
				post = c.g.sentence(1 + c.r.IntN(4))
			}
			longSet := ShingleSet(Tokens(render(long)))
			for _, cand := range [][]item{
				slices.Concat(pre, ex, post), slices.Concat(ex, post), slices.Concat(pre, ex), ex,
			} {
				m := Compare(ShingleSet(Tokens(render(cand))), longSet)
				if m.ContAInB >= 0.9 {
					short = cand
					break
				}
			}
			if short != nil {
				break
			}
		}
		gr.Note = "the excerpt is whole consecutive sentences of the container, optionally with a few words added before/after"
		c.member(gi, render(long), "container", c.u.url(c.u.domain()))
		c.member(gi, render(short), "excerpt", c.u.url(c.u.domain()))
	}
	return nil
}

// siteHeader builds a header of 20-40 words: site name, navigation, tagline.
func (c *crawlGen) siteHeader(name []string) []item {
	for {
		var h []item
		for _, w := range name {
			h = append(h, item{w: w, title: true})
		}
		h[len(h)-1].br = true
		k := 5 + c.r.IntN(4)
		for i := 0; i < k; i++ {
			for j := c.r.IntN(2); j >= 0; j-- {
				h = append(h, item{w: c.g.v.Rare(c.r), title: true})
			}
			if i < k-1 {
				h[len(h)-1].p = " |"
			}
		}
		h[len(h)-1].br = true
		tag := c.g.sentence(6 + c.r.IntN(10))
		tag[len(tag)-1].br = true
		h = append(h, tag...)
		if len(h) >= 20 && len(h) <= 40 {
			return h
		}
	}
}

// siteFooter builds a footer of 20-40 words.
func (c *crawlGen) siteFooter(name []string) []item {
	for {
		var f []item
		f = append(f, c.g.sentence(8+c.r.IntN(7))...)
		f[len(f)-1].br = true
		k := 3 + c.r.IntN(3)
		for i := 0; i < k; i++ {
			f = append(f, item{w: c.g.v.Rare(c.r), title: true})
			if i < k-1 {
				f[len(f)-1].p = " |"
			}
		}
		f[len(f)-1].br = true
		f = append(f, c.g.sentence(5+c.r.IntN(6))...)
		f = append(f, item{w: "2026"})
		for _, w := range name {
			f = append(f, item{w: w, title: true})
		}
		f[len(f)-1].p = "."
		if len(f) >= 20 && len(f) <= 40 {
			return f
		}
	}
}

func (c *crawlGen) genSites() {
	for k, n := range c.cfg.SiteSizes {
		gr, gi := c.newGroup(fmt.Sprintf("site-%d", k), KindBoilerplate)
		name := []string{c.g.v.Name(c.r), c.g.v.Name(c.r)}
		domain := "www." + name[0] + name[1] + ".com"
		header := c.siteHeader(name)
		footer := c.siteFooter(name)
		gr.Site = domain
		gr.Header = render(header)
		gr.Footer = render(footer)
		gr.HeaderWords = len(header)
		gr.FooterWords = len(footer)
		gr.Note = "pages share the header and footer but have distinct bodies of >= 120 words; NOT near-duplicates"
		for j := 0; j < n; j++ {
			body := c.g.doc(synth.LogNormalAtLeast(c.r, 250, 0.7, 120, 2500))
			body[len(body)-1].br = true
			d := slices.Concat(header, body, footer)
			c.member(gi, render(d), "page", c.u.url(domain))
		}
	}
}

func (c *crawlGen) genEdge() {
	five := c.g.sentence(5)
	edges := []struct{ what, text string }{
		{"empty", ""},
		{"whitespace_only", " \n\t  \n "},
		{"punctuation_only", "... -- !!! ???\n* * *"},
		{"five_words", render(five)},
	}
	for _, e := range edges {
		c.addPage(page{text: e.text, kind: KindEdge, group: -1, what: e.what, url: c.u.url(c.u.domain())})
	}
}

// isDup reports whether pages a and b are in the same duplicate group.
func (c *crawlGen) isDup(a, b int) bool {
	pa, pb := c.pages[a], c.pages[b]
	return pa.group >= 0 && pa.group == pb.group && pa.kind != KindBoilerplate
}

// shuffle returns a random order of the pages in which no two members of a
// duplicate group are adjacent.
func (c *crawlGen) shuffle() []int {
	n := len(c.pages)
	order := c.r.Perm(n)
	for changed := true; changed; {
		changed = false
		for i := 0; i+1 < n; i++ {
			if c.isDup(order[i], order[i+1]) {
				j := c.r.IntN(n)
				order[i+1], order[j] = order[j], order[i+1]
				changed = true
			}
		}
	}
	return order
}

func tokenCount(text string) int64 {
	var n int64
	for _, t := range Tokens(text) {
		n += 1 + int64(len(t)-1)/5
	}
	for _, ch := range text {
		if ch > ' ' && !('a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9') {
			n++
		}
	}
	return n
}

func (c *crawlGen) finish(seed uint64, order []int) ([][]Row, *Truth, error) {
	n := len(order)
	per := (n + c.cfg.Files - 1) / c.cfg.Files
	type loc struct {
		file string
		row  int
	}
	locs := make([]loc, n)
	files := make([][]Row, c.cfg.Files)
	warcs := warcPaths(c.r, 40)
	base := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC).Unix()
	tr := &Truth{Seed: seed, ShingleSize: ShingleSize, Tokenizer: tokenizerDoc}
	for pos, pi := range order {
		f := pos / per
		p := c.pages[pi]
		locs[pi] = loc{synth.PartName(f), len(files[f])}
		score := 0.0
		if len(Tokens(p.text)) > 0 {
			score = math.Round((0.65+0.35*c.r.Float64())*1e4) / 1e4
		}
		files[f] = append(files[f], Row{
			Text:          p.text,
			ID:            p.id,
			Dump:          Dump,
			URL:           p.url,
			Date:          time.Unix(base+c.r.Int64N(45*86400), 0).UTC().Format(time.RFC3339),
			FilePath:      warcs[c.r.IntN(len(warcs))],
			Language:      "en",
			LanguageScore: score,
			TokenCount:    tokenCount(p.text),
		})
	}
	for f, rows := range files {
		rg := (len(rows) + int(c.cfg.RowsPerGroup) - 1) / int(c.cfg.RowsPerGroup)
		tr.Totals.Files = append(tr.Totals.Files, FileTotal{File: synth.PartName(f), Rows: len(rows), RowGroups: rg})
	}
	tr.Totals.TotalRows = n

	toks := make([][]string, len(c.pages))
	for i, p := range c.pages {
		toks[i] = Tokens(p.text)
		tr.Totals.PagesByKind.add(p.kind, 1)
	}
	mem := func(i int) Member {
		p := c.pages[i]
		return Member{ID: p.id, URL: p.url, File: locs[i].file, Row: locs[i].row, Role: p.role, Tokens: len(toks[i])}
	}

	for _, gr := range c.groups {
		tr.Totals.GroupsByKind.add(gr.Kind, 1)
		for _, i := range gr.idx {
			gr.Members = append(gr.Members, mem(i))
		}
		if gr.Kind == KindBoilerplate {
			c.boilerplateStats(gr, toks)
			continue
		}
		if gr.Kind == KindExact {
			continue // all pairs are byte-identical: resemblance 1
		}
		sets := make([]map[string]struct{}, len(gr.idx))
		for j, i := range gr.idx {
			sets[j] = ShingleSet(toks[i])
		}
		for a := 0; a < len(gr.idx); a++ {
			for b := a + 1; b < len(gr.idx); b++ {
				m := Compare(sets[a], sets[b])
				targeted := gr.targeted == nil || slices.Contains(gr.targeted, [2]int{a, b})
				gr.Pairs = append(gr.Pairs, Pair{
					A: c.pages[gr.idx[a]].id, B: c.pages[gr.idx[b]].id,
					Resemblance: round6(m.Resemblance), ContainmentAInB: round6(m.ContAInB), ContainmentBInA: round6(m.ContBInA),
					Targeted: targeted,
				})
				if gr.Kind == KindNear && targeted && math.Abs(m.Resemblance-gr.Target) > NearTolerance {
					return nil, nil, fmt.Errorf("%s: resemblance %.4f off target", gr.Group, m.Resemblance)
				}
			}
		}
	}

	// edge rows and unrelated sample, in row order
	var unrelated []int
	for _, pi := range order {
		p := c.pages[pi]
		switch p.kind {
		case KindEdge:
			m := mem(pi)
			tr.EdgeRows = append(tr.EdgeRows, EdgeRow{ID: m.ID, URL: m.URL, File: m.File, Row: m.Row, What: p.what, Text: p.text, Tokens: m.Tokens})
		case KindUnrelated:
			unrelated = append(unrelated, pi)
		}
	}
	pick := c.r.Perm(len(unrelated))[:min(c.cfg.UnrelatedSample, len(unrelated))]
	slices.Sort(pick)
	for _, k := range pick {
		m := mem(unrelated[k])
		m.Role = "unrelated"
		tr.UnrelatedSample = append(tr.UnrelatedSample, m)
	}

	pairs, maxDF := c.backgroundScan(toks)
	var maxR, maxC float64
	for _, p := range pairs {
		if ga := c.pages[p.a].group; ga >= 0 && ga == c.pages[p.b].group {
			// two pages of one boilerplate site that also share a rare
			// shingle (typically a header/body junction)
			gr := c.groups[ga]
			*gr.MaxPairResemblance = max(*gr.MaxPairResemblance, round6(p.res))
			*gr.MaxPairContainment = max(*gr.MaxPairContainment, round6(p.cont))
			continue
		}
		maxR, maxC = max(maxR, p.res), max(maxC, p.cont)
	}
	tr.Totals.MaxUnplantedResemblance = round6(maxR)
	tr.Totals.MaxUnplantedContainment = round6(maxC)
	tr.Totals.MaxShingleDocFreq = maxDF
	for _, gr := range c.groups {
		tr.Groups = append(tr.Groups, *gr)
	}
	return files, tr, nil
}

// boilerplateStats fills the boilerplate fields of a site group. All pages of
// a site share exactly the header and footer shingles, so the largest pair
// metrics are attained by the smallest pages; they are computed exactly over
// all pairs of the 12 smallest members.
func (c *crawlGen) boilerplateStats(gr *Group, toks [][]string) {
	var common map[uint64]struct{}
	for _, i := range gr.idx {
		h := hashShingles(toks[i])
		if common == nil {
			common = h
			continue
		}
		for k := range common {
			if _, ok := h[k]; !ok {
				delete(common, k)
			}
		}
	}
	gr.BoilerplateShingles = len(common)
	small := slices.Clone(gr.idx)
	slices.SortStableFunc(small, func(a, b int) int { return len(toks[a]) - len(toks[b]) })
	small = small[:min(12, len(small))]
	var maxR, maxC float64
	for a := 0; a < len(small); a++ {
		for b := a + 1; b < len(small); b++ {
			m := Compare(ShingleSet(toks[small[a]]), ShingleSet(toks[small[b]]))
			maxR = max(maxR, m.Resemblance)
			maxC = max(maxC, m.ContAInB, m.ContBInA)
		}
	}
	maxR, maxC = round6(maxR), round6(maxC)
	gr.MaxPairResemblance = &maxR
	gr.MaxPairContainment = &maxC
}

type scanPair struct {
	a, b      int
	res, cont float64
}

// backgroundScan finds every pair of pages sharing a shingle of document
// frequency <= 20 that is not a planted duplicate pair and returns their
// resemblance and largest containment, plus the maximum shingle document
// frequency.
func (c *crawlGen) backgroundScan(toks [][]string) ([]scanPair, int) {
	type occ struct {
		h   uint64
		doc int32
	}
	sets := make([][]uint64, len(toks))
	var all []occ
	for i, t := range toks {
		hs := hashShingles(t)
		s := make([]uint64, 0, len(hs))
		for k := range hs {
			s = append(s, k)
		}
		slices.Sort(s)
		sets[i] = s
		for _, k := range s {
			all = append(all, occ{k, int32(i)})
		}
	}
	slices.SortFunc(all, func(a, b occ) int {
		if a.h != b.h {
			if a.h < b.h {
				return -1
			}
			return 1
		}
		return int(a.doc - b.doc)
	})
	var cands []uint64
	maxDF := 0
	for s := 0; s < len(all); {
		e := s
		for e < len(all) && all[e].h == all[s].h {
			e++
		}
		maxDF = max(maxDF, e-s)
		if e-s >= 2 && e-s <= 20 {
			for a := s; a < e; a++ {
				for b := a + 1; b < e; b++ {
					cands = append(cands, uint64(all[a].doc)<<32|uint64(all[b].doc))
				}
			}
		}
		s = e
	}
	slices.Sort(cands)
	cands = slices.Compact(cands)
	var out []scanPair
	for _, pr := range cands {
		a, b := int(pr>>32), int(pr&0xffffffff)
		if c.isDup(a, b) {
			continue
		}
		inter := 0
		x, y := sets[a], sets[b]
		for i, j := 0, 0; i < len(x) && j < len(y); {
			switch {
			case x[i] == y[j]:
				inter++
				i++
				j++
			case x[i] < y[j]:
				i++
			default:
				j++
			}
		}
		out = append(out, scanPair{a, b, float64(inter) / float64(len(x)+len(y)-inter),
			max(float64(inter)/float64(len(x)), float64(inter)/float64(len(y)))})
	}
	return out, maxDF
}

// ---- ids, urls, paths

func uuid(r *rand.Rand) string { return string(synth.AppendUUID(nil, r)) }

type urlGen struct {
	r    *rand.Rand
	v    *Vocab
	used map[string]bool
}

func newURLGen(r *rand.Rand, v *Vocab) *urlGen {
	return &urlGen{r: r, v: v, used: map[string]bool{}}
}

var tlds = []string{"com", "com", "com", "com", "org", "net", "net", "info", "co.uk", "io", "blog", "de", "ca", "us"}

func (u *urlGen) domain() string {
	d := u.v.Name(u.r)
	if u.r.IntN(2) == 0 {
		d += u.v.Name(u.r)
	}
	if u.r.IntN(3) == 0 {
		d = "www." + d
	}
	return d + "." + tlds[u.r.IntN(len(tlds))]
}

func (u *urlGen) slug() string {
	n := 2 + u.r.IntN(5)
	w := make([]string, n)
	for i := range w {
		w[i] = u.v.Zipf(u.r)
	}
	return strings.Join(w, "-")
}

func (u *urlGen) path() string {
	switch u.r.IntN(6) {
	case 0:
		return "/" + u.slug() + ".html"
	case 1:
		return fmt.Sprintf("/%d/%02d/%s/", 2016+u.r.IntN(10), 1+u.r.IntN(12), u.slug())
	case 2:
		return "/blog/" + u.slug()
	case 3:
		return "/news/" + u.slug() + "-" + strconv.Itoa(10000+u.r.IntN(90000))
	case 4:
		return "/" + u.v.Rare(u.r) + "/" + u.slug()
	default:
		return "/p/" + strconv.Itoa(u.r.IntN(1000000))
	}
}

func (u *urlGen) claim(s string) bool {
	if u.used[s] {
		return false
	}
	u.used[s] = true
	return true
}

// url returns a new unique url on domain.
func (u *urlGen) url(domain string) string {
	for {
		s := "https://" + domain + u.path()
		if u.claim(s) {
			return s
		}
	}
}

// variantOf returns a new unique url that is a trivial variant of s (same
// page reached through another url).
func (u *urlGen) variantOf(s string) string {
	for {
		var v string
		switch u.r.IntN(4) {
		case 0:
			v = "http://" + strings.TrimPrefix(s, "https://")
		case 1:
			v = s + "?utm_source=" + u.v.Rare(u.r)
		case 2:
			v = s + "?amp=1&ref=" + strconv.Itoa(u.r.IntN(1000))
		default:
			v = s + "#" + u.v.Zipf(u.r)
		}
		if u.claim(v) {
			return v
		}
	}
}

func warcPaths(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		seg := fmt.Sprintf("1767%09d.%02d", r.IntN(1000000000), r.IntN(100))
		day := 1 + r.IntN(14)
		hh := r.IntN(22)
		out[i] = fmt.Sprintf("s3://commoncrawl/crawl-data/%s/segments/%s/warc/CC-MAIN-202601%02d%02d%04d-202601%02d%02d%04d-%05d.warc.gz",
			Dump, seg, day, hh, r.IntN(6000), day, hh+1, r.IntN(6000), r.IntN(100000))
	}
	return out
}
