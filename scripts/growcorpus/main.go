// Command growcorpus grows the real text corpora in ../shared/data into a
// crawl of a chosen size, for benchmarks that need real text at scale
// (scripts/bench-export.sh). It never writes into the repository.
//
// The tables (id, url, source, date, text) are repeated: copy 0 of a row
// is the row as it is; every later copy gets a new id and URL and either
//
//   - its own text with a few words dropped or replaced at random
//     positions (a near-duplicate; -exact of them byte-identical), or
//   - the tail of its text joined to the head of another row's, cut at
//     line breaks, with the same light edits (a new document, mostly
//     distinct from every other, so that about half the crawl survives
//     deduplication rather than one row in each set of copies).
//
// The rows of all copies are shuffled together, cut when the text
// reaches -mb MB (-mb 0: each row once, as it is), and spread over -files zstd Parquet files with row
// groups of -rowgroup rows; source and date are dictionary-encoded, the
// other columns plain. The output is a function of the flags alone.
//
// -families adds syndicated families on top (issue 55): SIZE:RATE,...
// makes, for each entry, SIZE copies of one long row (the k-th longest
// Latin-script row of deb-manpages and multilingual-docs for the k-th
// family), each with its own site's header and footer of 25 words drawn
// from the corpora and word edits at RATE (deletions, substitutions and
// insertions in equal parts); their ids are family-K-copy-N. An entry's
// options: words=N keeps the article's first N words, bare leaves out
// the sites' headers and footers (SIZE:RATE:words=200:bare).
//
// -template-site N adds N pages of one site (template.example): each is a
// different stretch of 150 words of the corpora between the site's
// header and footer of 80 words each, the same on every page (a template
// site's generated pages, whose shared shingles are boilerplate, not a
// family).
//
// Usage (from the module root):
//
//	go run ./scripts/growcorpus -out /tmp/export-bench/in -mb 1000
package main

import (
	"cmp"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/neardup/neardup/scripts/gencrawl/synth"
)

// doc is one row, with the real tables' column names and nullability.
type doc struct {
	ID     string  `parquet:"id"`
	URL    *string `parquet:"url,optional"`
	Source *string `parquet:"source,optional,dict"`
	Date   *string `parquet:"date,optional,dict"`
	Text   string  `parquet:"text"`
}

// tables are the text tables of ../shared/data (the HTML one has no text).
var tables = []string{"multilingual-docs", "deb-copyright", "deb-manpages", "cc-main-2019-30-sample"}

func main() {
	data := flag.String("data", "../shared/data", "folder of the real corpora")
	out := flag.String("out", "", "output folder (required; created)")
	mb := flag.Float64("mb", 1000, "MB (10^6 bytes) of text to write; 0 writes the corpora's rows once, as they are (beside -families and -template-site)")
	files := flag.Int("files", 10, "output files")
	rowGroup := flag.Int64("rowgroup", 2000, "rows per row group")
	near := flag.Float64("near", 0.5, "fraction of later copies that are near-duplicates (the rest are joins of two rows)")
	exact := flag.Float64("exact", 0.1, "fraction of near-duplicates left byte-identical")
	edits := flag.Int("edits", 4, "most words changed or dropped in each edited copy (at least 1)")
	seed := flag.Uint64("seed", 1, "seed")
	familiesFlag := flag.String("families", "", "SIZE:RATE[:words=N][:bare],...: syndicated families of SIZE edited copies of one row each, added on top")
	templatePages := flag.Int("template-site", 0, "pages of one template site (the same header and footer around different text), added on top")
	flag.Parse()
	if *out == "" || *files < 1 || *rowGroup < 1 || *edits < 1 {
		flag.Usage()
		os.Exit(2)
	}

	var base []doc
	var baseBytes int64
	for _, t := range tables {
		rows, err := parquet.ReadFile[doc](filepath.Join(*data, t+".parquet"))
		if err != nil {
			log.Fatal(err)
		}
		for _, r := range rows {
			baseBytes += int64(len(r.Text))
		}
		base = append(base, rows...)
	}
	if baseBytes == 0 {
		log.Fatal("no text in the corpora")
	}

	all := choose(base, baseBytes, int64(*mb*1e6), *seed)
	n := len(all)
	copies := int(int64(*mb*1e6)/baseBytes) + 1

	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	make1 := func(g int, it item) doc {
		d := base[it.row]
		if it.copy == 0 {
			return d
		}
		r := rand.New(rand.NewPCG(*seed, uint64(g)))
		d.ID = fmt.Sprintf("%s~%d", d.ID, it.copy)
		if d.URL != nil {
			u := fmt.Sprintf("%s?copy=%d", *d.URL, it.copy)
			d.URL = &u
		}
		switch {
		case r.Float64() >= *near:
			d.Text = join(d.Text, base[r.IntN(len(base))].Text, r)
			d.Text = edit(d.Text, 1+r.IntN(*edits), r)
		case r.Float64() >= *exact:
			d.Text = edit(d.Text, 1+r.IntN(*edits), r)
		}
		return d
	}
	fams, err := families(*familiesFlag, base, *seed)
	if err != nil {
		log.Fatal(err)
	}
	site, err := templateSite(*templatePages, base, *seed)
	if err != nil {
		log.Fatal(err)
	}
	fams = append(fams, site...)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	errs := make([]error, *files)
	texts := make([]int64, *files)
	for f := range *files {
		lo, hi := f*n / *files, (f+1)*n / *files
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			rows := make([]doc, 0, hi-lo)
			for g := lo; g < hi; g++ {
				rows = append(rows, make1(g, all[g]))
				texts[f] += int64(len(rows[len(rows)-1].Text))
			}
			for _, d := range fams[f*len(fams) / *files : (f+1)*len(fams) / *files] {
				rows = append(rows, d)
				texts[f] += int64(len(d.Text))
			}
			errs[f] = write(filepath.Join(*out, fmt.Sprintf("part-%05d.parquet", f)), rows, *rowGroup)
		}()
	}
	wg.Wait()
	var total int64
	for f, err := range errs {
		if err != nil {
			log.Fatal(err)
		}
		total += texts[f]
	}
	fmt.Printf("growcorpus: %d rows, %.1f MB of text (%d copies of %d rows, %.1f MB; %d family rows, %d template pages) in %d files under %s\n",
		n+len(fams), float64(total)/1e6, copies, len(base), float64(baseBytes)/1e6, len(fams)-len(site), len(site), *files, *out)
}

// item is one row of the output: copy copy of base row row.
type item struct{ copy, row int }

// choose is every (copy, row) of enough copies of base (whose text is
// baseBytes long) to reach target bytes of text, shuffled, cut when it
// does (estimated by the original texts' lengths); a target of 0 is every
// row once, as it is.
func choose(base []doc, baseBytes, target int64, seed uint64) []item {
	copies := int(target/baseBytes) + 1
	all := make([]item, 0, copies*len(base))
	for c := range copies {
		for r := range base {
			all = append(all, item{c, r})
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x67726f77)) // "grow"
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	if target == 0 {
		return all
	}
	var sum int64
	n := 0
	for n < len(all) && sum < target {
		sum += int64(len(base[all[n].row].Text))
		n++
	}
	return all[:n]
}

// write writes rows to path, zstd-compressed, in row groups of rowGroup rows.
func write(path string, rows []doc, rowGroup int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[doc](f, parquet.Compression(&zstd.Codec{}), parquet.MaxRowsPerRowGroup(rowGroup))
	if _, err := w.Write(rows); err != nil {
		f.Close()
		return err
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// join is a's text from a line break 30-70% of the way in, then b's up to
// one 30-70% of the way in (a's whole text or none of b's when there is no
// line break to cut at).
func join(a, b string, r *rand.Rand) string {
	cut := func(s string) int {
		at := len(s) * (30 + r.IntN(41)) / 100
		if i := strings.IndexByte(s[at:], '\n'); i >= 0 {
			return at + i
		}
		if i := strings.LastIndexByte(s[:at], '\n'); i >= 0 {
			return i
		}
		return -1
	}
	ca, cb := cut(a), cut(b)
	if ca < 0 {
		ca = 0
	}
	if cb < 0 {
		cb = 0
	}
	return a[ca:] + "\n" + b[:cb]
}

// edit drops or replaces n words of s (space-separated runs of at most 40
// bytes) at random positions; in text without such words (CJK), one to
// three characters instead.
func edit(s string, n int, r *rand.Rand) string {
	if len(s) == 0 {
		return s
	}
	word := func() (int, int) {
		for range 16 {
			i := r.IntN(len(s))
			for i < len(s) && !isSpace(s[i]) {
				i++
			}
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			j := i
			for j < len(s) && !isSpace(s[j]) {
				j++
			}
			if j > i && j-i <= 40 {
				return i, j
			}
		}
		i := r.IntN(len(s))
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		j := i
		for k := 0; k < 1+r.IntN(3) && j < len(s); k++ {
			_, size := utf8.DecodeRuneInString(s[j:])
			j += size
		}
		return i, j
	}
	for range n {
		if len(s) == 0 { // a short row can lose its last word
			break
		}
		i, j := word()
		by := ""
		if r.IntN(2) == 0 {
			a, b := word()
			by = s[a:b]
		}
		s = s[:i] + by + s[j:]
	}
	return s
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' }

// families makes the rows of -families: for the k-th SIZE:RATE, SIZE
// copies of the k-th longest row of 300 words or more whose text is
// mostly ASCII letters (a news-like article in Latin script), each
// wrapped in its own 25-word header and footer and edited word by word
// at RATE.
func families(spec string, base []doc, seed uint64) ([]doc, error) {
	if spec == "" {
		return nil, nil
	}
	var articles []doc
	vocab := vocabulary(base)
	for _, d := range base {
		if words := strings.Fields(d.Text); len(words) >= 300 && len(words) <= 3000 && latin(d.Text) {
			articles = append(articles, d)
		}
	}
	slices.SortStableFunc(articles, func(a, b doc) int { return cmp.Or(cmp.Compare(len(b.Text), len(a.Text)), cmp.Compare(a.ID, b.ID)) })
	var out []doc
	for k, entry := range strings.Split(spec, ",") {
		fields := strings.Split(entry, ":")
		var n int
		var e float64
		var err1, err2 error
		if len(fields) >= 2 {
			n, err1 = strconv.Atoi(fields[0])
			e, err2 = strconv.ParseFloat(fields[1], 64)
		}
		if len(fields) < 2 || err1 != nil || err2 != nil || n < 1 || e < 0 || e >= 1 {
			return nil, fmt.Errorf("-families %q: want SIZE:RATE[:words=N][:bare] with SIZE at least 1 and RATE in [0, 1)", entry)
		}
		site, most := true, 0
		for _, opt := range fields[2:] {
			switch w, ok := strings.CutPrefix(opt, "words="); {
			case opt == "bare":
				site = false
			case ok:
				if most, err1 = strconv.Atoi(w); err1 != nil || most < 1 {
					return nil, fmt.Errorf("-families %q: words=%s is not a count of words", entry, w)
				}
			default:
				return nil, fmt.Errorf("-families %q: unknown option %q (want words=N or bare)", entry, opt)
			}
		}
		if k >= len(articles) {
			return nil, fmt.Errorf("-families: only %d rows can start a family", len(articles))
		}
		words := strings.Fields(articles[k].Text)
		if most > 0 && len(words) > most {
			words = words[:most]
		}
		pick := func(r *rand.Rand) string { return vocab[r.IntN(len(vocab))] }
		for c := range n {
			r := rand.New(rand.NewPCG(seed^0x66616d, uint64(k)<<32|uint64(c)))
			text := synth.FamilyCopy(r, words, e, site, pick)
			url := fmt.Sprintf("https://site-%d.example/family-%d", c, k)
			out = append(out, doc{ID: fmt.Sprintf("family-%d-copy-%d", k, c), URL: &url, Text: text})
		}
	}
	return out, nil
}

// vocabulary is the words of the corpora's first rows, about 200,000 of
// them with repeats, which family copies and template sites draw from.
func vocabulary(base []doc) []string {
	var vocab []string
	for _, d := range base {
		if len(vocab) >= 200000 {
			break
		}
		vocab = append(vocab, strings.Fields(d.Text)...)
	}
	return vocab
}

// templateSite makes the pages of -template-site: n pages of
// template.example, each a stretch of 150 words of a row of 150 words
// or more, drawn at random, between the site's header and footer of 80
// words each, drawn once from the vocabulary.
func templateSite(n int, base []doc, seed uint64) ([]doc, error) {
	const body, frame = 150, 80
	if n == 0 {
		return nil, nil
	}
	vocab := vocabulary(base)
	var long []int
	for i, d := range base {
		if len(strings.Fields(d.Text)) >= body {
			long = append(long, i)
		}
	}
	if len(long) == 0 {
		return nil, fmt.Errorf("-template-site: no row of %d words", body)
	}
	r := rand.New(rand.NewPCG(seed^0x74706c, 1<<40))
	draw := func() string {
		w := make([]string, frame)
		for i := range w {
			w[i] = vocab[r.IntN(len(vocab))]
		}
		return strings.Join(w, " ")
	}
	header, footer := draw(), draw()
	out := make([]doc, n)
	for i := range out {
		r := rand.New(rand.NewPCG(seed^0x74706c, uint64(i)))
		words := strings.Fields(base[long[r.IntN(len(long))]].Text)
		at := r.IntN(len(words) - body + 1)
		url := fmt.Sprintf("https://template.example/page-%d", i)
		out[i] = doc{ID: fmt.Sprintf("template-page-%d", i), URL: &url, Text: header + "\n" + strings.Join(words[at:at+body], " ") + "\n" + footer}
	}
	return out, nil
}

// latin reports whether most of s's bytes are ASCII letters or spaces.
func latin(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; (c >= 'a' && c <= 'z') || s[i] == ' ' {
			n++
		}
	}
	return n*10 >= len(s)*8
}
