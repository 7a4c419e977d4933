package main

// The benchmark crawl: N synthetic pages in Parquet with FineWeb's columns,
// with the same mix of duplicates at every size, generated in parallel and
// deterministically from a seed.
//
// Every page is a function of (seed, its global index) alone: its kind
// (original or one of the duplicate kinds), its site, its length and its
// words come from a PCG stream seeded with its index, and a duplicate
// regenerates its source page from the source's own stream. So row groups
// can be generated in any order by any number of goroutines and the files
// come out byte for byte the same.
//
// The text comes in two modes. ascii: pseudo-words of ASCII letters with
// ASCII punctuation. unicode (genunicode.go): the same pages, page for page
// and word for word (the same kinds, sources, sites, lengths and word
// ranks), rendered as real pages are: in Latin script with accents and
// typographic punctuation, in Cyrillic, CJK or another script.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/neardup/neardup/scripts/gencrawl/synth"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// genVersion names the generator's output; bump it whenever the crawl a
// seed gives changes, so that reused crawls are regenerated.
const genVersion = 1

// The mix, the same at every size.
const (
	fracExact   = 0.05 // byte-identical copies of an original page
	fracLexical = 0.01 // same words, other case, punctuation and spacing
	fracNear    = 0.05 // word edits at graded resemblance (nearLevels)
	fracExcerpt = 0.01 // 20-40% of a longer page, cut out whole
	fracSite    = 0.15 // pages carrying a site's header and footer

	medianWords = 400 // page body length: log-normal, median 400 words
	sigmaWords  = 0.8
	minWords    = 30
	maxWords    = 5000

	vocabSize    = 50000 // pseudo-words, Zipf-Mandelbrot 1/(rank+2.7)
	zipfShift    = 2.7
	siteMinPages = 5 // pages per site: log-uniform in [5, 200]
	siteMaxPages = 200

	excerptMinSource = 300 // words a page needs to be excerpted
)

// nearLevels are the target w=10 shingle resemblances of near copies.
var nearLevels = [...]float64{0.95, 0.8, 0.6}

// Kinds of page.
const (
	kindOriginal = iota
	kindExact
	kindLexical
	kindNear
	kindExcerpt
	numKinds
)

var kindNames = [numKinds]string{"original", "exact", "lexical", "near", "excerpt"}

// crawlRow is one page, with FineWeb's column names.
type crawlRow struct {
	Text string `parquet:"text"`
	ID   string `parquet:"id"`
	URL  string `parquet:"url"`
	Date string `parquet:"date"`
}

// genConfig is one crawl to generate.
type genConfig struct {
	Docs         int
	Seed         uint64
	Workers      int    // goroutines; 0: GOMAXPROCS
	RowsPerGroup int    // 0: 10,000
	RowsPerFile  int    // 0: 100,000 (about 180 MB of zstd Parquet); at least 4 files
	Text         string // textASCII ("" too) or textUnicode
}

// The text modes.
const (
	textASCII   = "ascii"
	textUnicode = "unicode"
)

func checkTextMode(mode string) error {
	if mode != textASCII && mode != textUnicode {
		return fmt.Errorf("text mode must be %s or %s, not %q", textASCII, textUnicode, mode)
	}
	return nil
}

// textMode is the mode's canonical name: "" is ascii.
func textMode(mode string) string {
	if mode == "" {
		return textASCII
	}
	return mode
}

func (c genConfig) withDefaults() genConfig {
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.RowsPerGroup <= 0 {
		c.RowsPerGroup = 10000
	}
	if c.RowsPerFile <= 0 {
		c.RowsPerFile = 100000
	}
	c.Text = textMode(c.Text)
	return c
}

// crawlInfo describes a generated crawl; it is written last, as
// crawl.json, so a folder holding it holds a complete crawl.
type crawlInfo struct {
	Version    int            `json:"version"`
	Docs       int            `json:"docs"`
	Seed       uint64         `json:"seed"`
	Text       string         `json:"text,omitempty"`         // the text mode; absent: ascii
	TextVer    int            `json:"text_version,omitempty"` // unicodeVersion, for unicode crawls
	Files      []fileInfo     `json:"files"`
	TextBytes  int64          `json:"text_bytes"`
	FileBytes  int64          `json:"file_bytes"`
	Kinds      map[string]int `json:"kinds"`
	GenSeconds float64        `json:"gen_seconds"`
	GenCPU     float64        `json:"gen_cpu_seconds"` // user + system seconds of the process while generating
	Reused     bool           `json:"-"`
}

type fileInfo struct {
	Name      string `json:"name"`
	Rows      int    `json:"rows"`
	RowGroups int    `json:"row_groups"`
	Bytes     int64  `json:"bytes"`
}

const infoFile = "crawl.json"

func (info crawlInfo) textMode() string { return textMode(info.Text) }

// textVersion is the version of a text mode's rendering on top of
// genVersion: 0 for ascii.
func textVersion(mode string) int {
	if textMode(mode) == textUnicode {
		return unicodeVersion
	}
	return 0
}

// crawlDir is where a crawl of n docs with seed and text mode lives under
// root. ASCII crawls keep the folder names they always had.
func crawlDir(root string, n int, seed uint64, mode string) string {
	if textMode(mode) == textASCII {
		return filepath.Join(root, fmt.Sprintf("crawl-%d-seed%d-v%d", n, seed, genVersion))
	}
	return filepath.Join(root, fmt.Sprintf("crawl-%d-seed%d-v%d-%s%d", n, seed, genVersion, mode, textVersion(mode)))
}

// crawlGlob is the input glob of the crawl in dir.
func crawlGlob(dir string) string { return filepath.Join(dir, "*.parquet") }

// ensureCrawl returns the crawl of cfg under root, generating it unless a
// complete one is already there.
func ensureCrawl(root string, cfg genConfig) (crawlInfo, string, error) {
	dir := crawlDir(root, cfg.Docs, cfg.Seed, cfg.Text)
	if b, err := os.ReadFile(filepath.Join(dir, infoFile)); err == nil {
		var info crawlInfo
		if json.Unmarshal(b, &info) == nil && info.Version == genVersion && info.Docs == cfg.Docs && info.Seed == cfg.Seed &&
			info.textMode() == textMode(cfg.Text) && info.TextVer == textVersion(cfg.Text) {
			info.Reused = true
			return info, dir, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return crawlInfo{}, "", err
	}
	info, err := generate(dir, cfg)
	return info, dir, err
}

// generate writes the crawl of cfg into dir, replacing what is there.
func generate(dir string, cfg genConfig) (crawlInfo, error) {
	cfg = cfg.withDefaults()
	start, startCPU := time.Now(), cpuSeconds()
	if err := os.RemoveAll(dir); err != nil {
		return crawlInfo{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return crawlInfo{}, err
	}
	g := newGenerator(cfg.Docs, cfg.Seed, cfg.Text)
	lay := newLayout(cfg)

	// One writer per file; each row group is generated by whichever worker
	// takes it and written when its file's previous row group has been.
	// Jobs go out round-robin over the files so every file's writer has
	// work, and in order within a file, so waiting never deadlocks.
	type fileState struct {
		f    *os.File
		w    *parquet.GenericWriter[crawlRow]
		mu   sync.Mutex
		cond *sync.Cond
		next int // the next row group to write
	}
	files := make([]*fileState, len(lay.files))
	createdBy := "synthetic"
	if cfg.Text != textASCII {
		createdBy = fmt.Sprintf("synthetic-%s%d", cfg.Text, textVersion(cfg.Text))
	}
	for i, fl := range lay.files {
		f, err := os.Create(filepath.Join(dir, fl.name))
		if err != nil {
			return crawlInfo{}, err
		}
		// The fastest zstd level: about as small as the default on this
		// text, at a fraction of the time.
		st := &fileState{f: f, w: synth.NewWriter[crawlRow](f, zstd.SpeedFastest, int64(cfg.RowsPerGroup),
			"neardup-bench", fmt.Sprint(genVersion), createdBy)}
		st.cond = sync.NewCond(&st.mu)
		files[i] = st
	}
	type job struct{ file, group int }
	var jobs []job
	for k := 0; ; k++ {
		more := false
		for f, fl := range lay.files {
			if k < len(fl.groups) {
				jobs = append(jobs, job{f, k})
				more = true
			}
		}
		if !more {
			break
		}
	}
	ch := make(chan job)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		text     int64
		kinds    [numKinds]int
	)
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := g.newDocGen()
			var rows []crawlRow
			for j := range ch {
				fl := lay.files[j.file]
				grp := fl.groups[j.group]
				rows = rows[:0]
				var bytes int64
				var kc [numKinds]int
				for row := grp.first; row < grp.first+grp.rows; row++ {
					doc := d.doc(fl.firstDoc + row)
					rows = append(rows, doc.row)
					bytes += int64(len(doc.row.Text))
					kc[doc.kind]++
				}
				st := files[j.file]
				st.mu.Lock()
				for st.next != j.group {
					st.cond.Wait()
				}
				var err error
				const batch = 1000 // parquet-go cuts a page per Write: never one row per call
				for i := 0; i < len(rows) && err == nil; i += batch {
					_, err = st.w.Write(rows[i:min(i+batch, len(rows))])
				}
				if err == nil {
					err = st.w.Flush() // one row group
				}
				st.next++
				st.cond.Broadcast()
				st.mu.Unlock()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("%s: %w", fl.name, err)
				}
				text += bytes
				for k, n := range kc {
					kinds[k] += n
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	info := crawlInfo{Version: genVersion, Docs: cfg.Docs, Seed: cfg.Seed, TextBytes: text, Kinds: map[string]int{}}
	if cfg.Text != textASCII {
		info.Text, info.TextVer = cfg.Text, textVersion(cfg.Text)
	}
	for i, st := range files {
		err := st.w.Close()
		if cerr := st.f.Close(); err == nil {
			err = cerr
		}
		if err != nil && firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", lay.files[i].name, err)
		}
		fi, err := os.Stat(filepath.Join(dir, lay.files[i].name))
		if err != nil && firstErr == nil {
			firstErr = err
		}
		var size int64
		if fi != nil {
			size = fi.Size()
		}
		info.Files = append(info.Files, fileInfo{Name: lay.files[i].name, Rows: lay.files[i].rows, RowGroups: len(lay.files[i].groups), Bytes: size})
		info.FileBytes += size
	}
	if firstErr != nil {
		return crawlInfo{}, firstErr
	}
	for k, n := range kinds {
		info.Kinds[kindNames[k]] = n
	}
	info.GenSeconds, info.GenCPU = time.Since(start).Seconds(), cpuSeconds()-startCPU
	return info, synth.WriteJSON(filepath.Join(dir, infoFile), info)
}

// cpuSeconds is the user and system time this process has used.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// layout cuts the crawl into files and row groups: at least 4 files, at
// most RowsPerFile rows each, row groups of at most RowsPerGroup rows,
// evenly sized.
type layout struct{ files []layoutFile }

type layoutFile struct {
	name     string
	firstDoc int // global index of the file's first row
	rows     int
	groups   []layoutGroup
}

type layoutGroup struct{ first, rows int }

func newLayout(cfg genConfig) layout {
	n := cfg.Docs
	nf := max(4, (n+cfg.RowsPerFile-1)/cfg.RowsPerFile)
	nf = max(1, min(nf, n))
	var l layout
	for f := range nf {
		lo, hi := f*n/nf, (f+1)*n/nf
		fl := layoutFile{name: synth.PartName(f), firstDoc: lo, rows: hi - lo}
		ng := max(1, (fl.rows+cfg.RowsPerGroup-1)/cfg.RowsPerGroup)
		for k := range ng {
			a, b := k*fl.rows/ng, (k+1)*fl.rows/ng
			fl.groups = append(fl.groups, layoutGroup{first: a, rows: b - a})
		}
		l.files = append(l.files, fl)
	}
	return l
}

// generator holds what every page shares: the vocabulary, its Zipf
// sampler and the sites.
type generator struct {
	n      int
	seed   uint64
	words  []string
	spaced [][16]byte // " word", padded: appended with one 16-byte store
	alias  aliasTable
	sites  []site
	ends   []uint64     // ends[i]: cumulative pages of sites 0..i (site slots)
	uni    *unicodeText // the unicode mode's scripts and site boilerplate; nil in ascii mode
}

// site is a web site whose pages share a header and a footer.
type site struct {
	domain         string
	header, footer string
}

// Stream salts: each page has a few independent PCG streams.
const (
	saltLayout = 0x6c61796f7574 // sentence and paragraph breaks
	saltMeta   = 0x6d657461     // id, url, date
	saltSites  = 0x7369746573   // the sites
	saltVocab  = 0x766f636162   // the vocabulary
)

func newGenerator(n int, seed uint64, mode string) *generator {
	g := &generator{n: n, seed: seed}
	g.words = synth.ASCII.Words(rand.New(rand.NewPCG(seed, saltVocab)), vocabSize, oneToFour)
	synth.ByLength(g.words)
	g.spaced = make([][16]byte, len(g.words))
	for i, w := range g.words {
		copy(g.spaced[i][1:], w)
		g.spaced[i][0] = ' '
	}
	w := make([]float64, vocabSize)
	for i := range w {
		w[i] = 1 / (float64(i) + zipfShift)
	}
	g.alias = newAlias(w)
	r := rand.New(rand.NewPCG(seed, saltSites))
	want := uint64(math.Ceil(fracSite * float64(n)))
	var total uint64
	for total < want || len(g.sites) == 0 {
		size := uint64(math.Round(siteMinPages * math.Pow(siteMaxPages/siteMinPages, r.Float64())))
		total += size
		g.ends = append(g.ends, total)
		g.sites = append(g.sites, g.newSite(r))
	}
	if textMode(mode) == textUnicode {
		g.uni = newUnicodeText(g)
	}
	return g
}

var tlds = []string{"com", "com", "com", "org", "net", "info", "de", "co.uk", "fr", "io"}

// oneToFour draws a pseudo-word's number of syllables: 1 to 4, as likely.
func oneToFour(r *rand.Rand) int { return 1 + r.IntN(4) }

// aliasTable samples from a discrete distribution in O(1) (Vose's alias
// method) with one 64-bit random number.
type aliasTable struct {
	prob  []uint32 // threshold on the low 32 bits, scaled by 2^32
	alias []int32
}

func newAlias(w []float64) aliasTable {
	n := len(w)
	var sum float64
	for _, x := range w {
		sum += x
	}
	p := make([]float64, n)
	var small, large []int
	for i, x := range w {
		p[i] = x * float64(n) / sum
		if p[i] < 1 {
			small = append(small, i)
		} else {
			large = append(large, i)
		}
	}
	t := aliasTable{prob: make([]uint32, n), alias: make([]int32, n)}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.prob[s] = uint32(p[s] * (1 << 32))
		t.alias[s] = int32(l)
		p[l] -= 1 - p[s]
		if p[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range append(small, large...) {
		t.prob[i] = math.MaxUint32
		t.alias[i] = int32(i)
	}
	return t
}

func (t aliasTable) sample(x uint64) int32 {
	i := int32((x >> 32) * uint64(len(t.prob)) >> 32)
	if uint32(x) < t.prob[i] {
		return i
	}
	return t.alias[i]
}

func (g *generator) word(r *rand.Rand) int32 { return g.alias.sample(r.Uint64()) }

// rareWord is a word from the less frequent half of the vocabulary (names).
func (g *generator) rareWord(r *rand.Rand) string { return synth.Rare(r, g.words) }

func (g *generator) newSite(r *rand.Rand) site {
	name := g.rareWord(r) + g.rareWord(r)
	s := site{domain: name + "." + tlds[r.IntN(len(tlds))]}
	var b []byte
	b = appendTitle(b, g.rareWord(r))
	b = append(b, ' ')
	b = appendTitle(b, g.rareWord(r))
	for i, n := 0, 6+r.IntN(12); i < n; i++ {
		b = append(b, " | "...)
		b = appendTitle(b, g.words[r.IntN(5000)])
	}
	s.header = string(b)
	b = b[:0]
	n := 10 + r.IntN(50)
	words := make([]int32, n)
	for i := range words {
		words[i] = g.word(r)
	}
	b = g.render(b, words, r)
	b = append(b, " www."...)
	b = append(b, s.domain...)
	s.footer = string(b)
	return s
}

func appendTitle(b []byte, w string) []byte {
	b = append(b, w...)
	b[len(b)-len(w)] -= 'a' - 'A'
	return b
}

// render writes words as sentences of 6 to 24 words, capitalized, with the
// odd comma, in paragraphs of 2 to 7 sentences; r decides where the breaks
// go, so the same r and words give the same text.
func (g *generator) render(b []byte, words []int32, r *rand.Rand) []byte {
	sentence, paragraph := 0, 0
	for i, w := range words {
		if sentence == 0 {
			if i > 0 {
				if paragraph == 0 {
					b = append(b, "\n\n"...)
				} else {
					b = append(b, ' ')
				}
			}
			if paragraph == 0 {
				paragraph = 2 + r.IntN(6)
			}
			sentence = 6 + r.IntN(19)
			b = appendTitle(b, g.words[w])
		} else {
			// append(b, ' ', word...) as one 16-byte store: words are at
			// most 14 letters
			n := len(b)
			b = slices.Grow(b, 16)
			*(*[16]byte)(b[n : n+16]) = g.spaced[w]
			b = b[:n+1+len(g.words[w])]
		}
		sentence--
		switch x := r.Uint32(); {
		case sentence == 0 || i == len(words)-1:
			sentence = 0
			paragraph--
			if x%16 == 0 {
				b = append(b, '?')
			} else {
				b = append(b, '.')
			}
		case x%12 == 0:
			b = append(b, ',')
		}
	}
	return b
}

// plan is what a page's first draws decide.
type plan struct {
	kind  int
	site  int // -1: none
	words int // body length
	level int // near copies: index into nearLevels
}

// planOf draws page i's plan from r, seeded for i; the body's words follow
// on the same stream.
func (g *generator) planOf(r *rand.Rand, pcg *rand.PCG, i int) plan {
	pcg.Seed(g.seed, uint64(i))
	var p plan
	switch u := r.Float64(); {
	case u < fracExact:
		p.kind = kindExact
	case u < fracExact+fracLexical:
		p.kind = kindLexical
	case u < fracExact+fracLexical+fracNear:
		p.kind = kindNear
	case u < fracExact+fracLexical+fracNear+fracExcerpt:
		p.kind = kindExcerpt
	default:
		p.kind = kindOriginal
	}
	onSite, slot := r.Float64(), r.Uint64N(g.ends[len(g.ends)-1])
	p.site = -1
	if onSite < fracSite {
		p.site = sort.Search(len(g.ends), func(k int) bool { return g.ends[k] > slot })
	}
	p.words = synth.LogNormal(r, medianWords, sigmaWords, minWords, maxWords)
	p.level = r.IntN(len(nearLevels))
	return p
}

// docGen generates pages; one per goroutine.
type docGen struct {
	g                *generator
	pcgI, pcgJ, pcgL *rand.PCG
	rI, rJ, rL       *rand.Rand // the page, its source, layout and metadata
	body, edited     []int32
	text, meta       []byte
}

func (g *generator) newDocGen() *docGen {
	d := &docGen{g: g, pcgI: rand.NewPCG(0, 0), pcgJ: rand.NewPCG(0, 0), pcgL: rand.NewPCG(0, 0)}
	d.rI, d.rJ, d.rL = rand.New(d.pcgI), rand.New(d.pcgJ), rand.New(d.pcgL)
	return d
}

// genDoc is one generated page and how it was made.
type genDoc struct {
	row    crawlRow
	kind   int
	source int   // the original a duplicate was made from, -1 for originals
	level  int   // near copies: index into nearLevels
	style  style // the unicode mode's script and punctuation; zero in ascii mode
}

// doc generates page i.
func (d *docGen) doc(i int) genDoc {
	g := d.g
	p := g.planOf(d.rI, d.pcgI, i)
	out := genDoc{kind: p.kind, source: -1, level: p.level}
	if p.kind != kindOriginal {
		j, pj, ok := d.source(p.kind)
		if !ok { // no original to copy (tiny crawls): make one
			p = g.planOf(d.rI, d.pcgI, i) // back to where the body starts
			p.kind, out.kind = kindOriginal, kindOriginal
		} else {
			out.source = j
			d.body = g.bodyOf(d.rJ, pj, d.body)
			st := g.styleOf(j, pj) // a copy is in its source's language
			out.style = st
			switch p.kind {
			case kindExact:
				d.text = g.page(d.text[:0], d.body, pj.site, d.layout(j), st)
			case kindLexical:
				d.text = g.page(d.text[:0], d.body, pj.site, d.layout(j), st)
				if g.uni != nil {
					d.text = lexicalVariantUnicode(d.text, d.rI)
				} else {
					d.text = lexicalVariant(d.text, d.rI)
				}
			case kindNear:
				d.edited = g.edit(d.edited[:0], d.body, nearRate(nearLevels[p.level]), d.rI)
				d.text = g.page(d.text[:0], d.edited, pj.site, d.layout(j), st)
			case kindExcerpt:
				n := len(d.body)
				k := max(minWords, int(float64(n)*(0.2+0.2*d.rI.Float64())))
				s := d.rI.IntN(n - k + 1)
				d.text = g.page(d.text[:0], d.body[s:s+k], -1, d.layout(i), st)
			}
		}
	}
	if p.kind == kindOriginal {
		d.body = g.bodyOf(d.rI, p, d.body)
		out.style = g.styleOf(i, p)
		d.text = g.page(d.text[:0], d.body, p.site, d.layout(i), out.style)
	}
	site := p.site
	if out.source >= 0 {
		site = -1 // copies live elsewhere: a mirror's URL
	}
	out.row = d.metadata(i, site)
	out.row.Text = string(d.text)
	return out
}

// source picks the original a duplicate of the given kind copies: a page
// drawn uniformly, redrawn until it is an original (and, for an excerpt,
// long enough). It leaves rJ where the source's body starts.
func (d *docGen) source(kind int) (int, plan, bool) {
	for range 1000 {
		j := d.rI.IntN(d.g.n)
		pj := d.g.planOf(d.rJ, d.pcgJ, j)
		if pj.kind == kindOriginal && (kind != kindExcerpt || pj.words >= excerptMinSource) {
			return j, pj, true
		}
	}
	return 0, plan{}, false
}

// bodyOf draws a page's body words; r continues the page's plan stream.
func (g *generator) bodyOf(r *rand.Rand, p plan, dst []int32) []int32 {
	dst = slices.Grow(dst[:0], p.words)[:p.words]
	for k := range dst {
		dst[k] = g.word(r)
	}
	return dst
}

// layout seeds and returns the layout stream of page i.
func (d *docGen) layout(i int) *rand.Rand {
	d.pcgL.Seed(d.g.seed^saltLayout, uint64(i))
	return d.rL
}

// page renders a page: the site's header and footer around the body. In
// unicode mode st says how (genunicode.go); ascii mode ignores it.
func (g *generator) page(b []byte, body []int32, s int, r *rand.Rand, st style) []byte {
	if g.uni != nil {
		return g.pageUnicode(b, body, s, r, st)
	}
	if s >= 0 {
		b = append(b, g.sites[s].header...)
		b = append(b, "\n\n"...)
	}
	b = g.render(b, body, r)
	if s >= 0 {
		b = append(b, "\n\n"...)
		b = append(b, g.sites[s].footer...)
	}
	return b
}

// nearRate is the chance per word of an edit that gives w=10 shingle
// resemblance j: an edit breaks about 10 shingles, so a share f =
// (1-j)/(1+j) of them must break, and a shingle survives when none of its
// 10 words is edited.
func nearRate(j float64) float64 {
	f := (1 - j) / (1 + j)
	return 1 - math.Pow(1-f, 0.1)
}

// edit copies words into dst, substituting, inserting or deleting a word at
// each position with probability rate, at least once.
func (g *generator) edit(dst, words []int32, rate float64, r *rand.Rand) []int32 {
	edits := 0
	for _, w := range words {
		if r.Float64() >= rate {
			dst = append(dst, w)
			continue
		}
		edits++
		switch r.IntN(3) {
		case 0: // substitute
			dst = append(dst, g.otherWord(w, r))
		case 1: // insert
			dst = append(dst, g.word(r), w)
		case 2: // delete
		}
	}
	if len(dst) == 0 {
		dst = append(dst, g.word(r))
	} else if edits == 0 {
		k := r.IntN(len(dst))
		dst[k] = g.otherWord(dst[k], r)
	}
	return dst
}

func (g *generator) otherWord(w int32, r *rand.Rand) int32 {
	for {
		if x := g.word(r); x != w {
			return x
		}
	}
}

// lexicalVariant changes case, punctuation and spacing but no word: the
// same canonical tokens, other bytes. The first word is always upper-cased,
// so the text always changes.
func lexicalVariant(b []byte, r *rand.Rand) []byte {
	out := make([]byte, 0, len(b)+len(b)/16)
	wordStart := true
	upper := true
	for i := 0; i < len(b); i++ {
		c := b[i]
		isLetter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if isLetter && wordStart {
			wordStart = false
			upper = upper || r.IntN(8) == 0
		}
		switch {
		case isLetter && upper && c >= 'a':
			c -= 'a' - 'A'
		case c == '.' && r.IntN(3) == 0:
			c = '!'
		case c == ' ' && r.IntN(20) == 0:
			out = append(out, ' ')
		}
		if !isLetter && !wordStart {
			wordStart, upper = true, false
		}
		out = append(out, c)
	}
	return out
}

// metadata draws page i's id, url and date.
func (d *docGen) metadata(i, s int) crawlRow {
	d.pcgL.Seed(d.g.seed^saltMeta, uint64(i))
	r := d.rL
	b := d.meta[:0]
	b = synth.AppendUUID(b, r)
	id := string(b)
	b = append(b[:0], "https://"...)
	if s >= 0 {
		b = append(b, "www."...)
		b = append(b, d.g.sites[s].domain...)
	} else {
		b = append(b, d.g.rareWord(r)...)
		b = append(b, d.g.rareWord(r)...)
		b = append(b, '.')
		b = append(b, tlds[r.IntN(len(tlds))]...)
	}
	b = append(b, '/')
	b = append(b, d.g.words[r.IntN(5000)]...)
	b = append(b, '/')
	b = append(b, d.g.rareWord(r)...)
	b = append(b, '-')
	b = append(b, d.g.rareWord(r)...)
	b = fmt.Appendf(b, "-%d.html", i)
	url := string(b)
	t := time.Date(2013, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(12*365*24*3600)) * time.Second)
	b = t.AppendFormat(b[:0], "2006-01-02T15:04:05Z")
	d.meta = b
	return crawlRow{ID: id, URL: url, Date: string(b)}
}
