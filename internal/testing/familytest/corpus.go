// Package familytest is what the end-to-end tests of families over
// --max-shingle-docs share (pipelines/e2e/families and familyruns): a
// crawl of the sample beside two syndicated families and a boilerplate
// template, written once per test binary (Main), and the measures the
// tests score runs by against the exact join.
package familytest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/testing/pipelinetest"
	"github.com/neardup/neardup/scripts/gencrawl/synth"
)

// CapDocs is the tests' --max-shingle-docs: a tenth of the default, so
// that families of a few hundred pages stand for families of thousands
// against the default cap of 1,000, and the runs stay small.
const CapDocs = 100

// Family is a syndicated family of the corpus: size copies of one
// article, edited at rate, framed by their own sites' headers and
// footers when site is set (synth.FamilyCopy).
type Family struct {
	Name  string
	Size  int
	rate  float64
	site  bool
	words int // the article's length
}

// Families are the corpus's families.
var Families = []Family{
	{"wire", 600, 0.008, true, 600},    // six times the cap
	{"mirror", 250, 0.005, false, 300}, // two and a half times the cap, no site frames
}

// Copies are the texts of each family's copies, by its name.
var Copies map[string][]string

// The corpus's template: boilerplatePages unrelated pages
// of pageWords words each end with the same boilerplateWords words (a
// site's footer), in more documents than the cap. They share shingles
// over the cap, as a family does, yet are not near-duplicates: their
// resemblance is about 0.15.
const boilerplatePages, boilerplateWords, pageWords = 300, 60, 250

// quoting is how many pages quote each family's article whole inside
// four times as much other text, in a file whose rows come before all
// others (quotesFile: its name sorts first, and doc IDs follow the
// files' order): a family's lists start with them, yet they resemble
// its copies too little (about 0.2) to anchor them.
const quoting = 6

// HeldOut is how many copies of the first family (the last ones made) go
// in a file of their own, HeldFile, after the others: the new crawl of
// an update whose index holds the rest of the family (indexedFile and
// the sample's files).
const (
	HeldOut     = 100
	quotesFile  = "part-00000-quotes.parquet"
	indexedFile = "part-00004.parquet"
	HeldFile    = "part-00005.parquet"
)

// WriteCorpus writes the sample crawl's files and two more of the
// families and the boilerplate pages, shuffled together so that the
// lowest doc IDs of a family (the anchors) are copies like any other,
// into dir and returns the glob of the crawl.
func WriteCorpus(dir string) (string, error) {
	sample, err := filepath.Glob(pipelinetest.Testdata("crawl/part-*.parquet"))
	if err != nil || len(sample) == 0 {
		return "", fmt.Errorf("the sample crawl: %v (%d files)", err, len(sample))
	}
	for _, f := range sample {
		if err := copyFile(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			return "", err
		}
	}
	r := rand.New(rand.NewPCG(55, 1))
	vocab := synth.ASCII.Words(r, 20000, func(r *rand.Rand) int { return 1 + r.IntN(3) })
	pick := func(r *rand.Rand) string { return vocab[r.IntN(len(vocab))] }
	draw := func(n int) []string {
		w := make([]string, n)
		for i := range w {
			w[i] = pick(r)
		}
		return w
	}
	var rows, quotes []pipelinetest.DatedPage
	Copies = map[string][]string{}
	for _, f := range Families {
		article := draw(f.words)
		for q := range quoting {
			quotes = append(quotes, pipelinetest.DatedPage{
				ID:   fmt.Sprintf("quote-%s-%d", f.Name, q),
				URL:  fmt.Sprintf("https://quotes.example/%s/%d", f.Name, q),
				Date: "2026-10-01",
				Text: strings.Join(draw(2*f.words), " ") + " " + strings.Join(article, " ") + " " + strings.Join(draw(2*f.words), " "),
			})
		}
		for c := range f.Size {
			rows = append(rows, pipelinetest.DatedPage{
				ID:   fmt.Sprintf("%s-%d", f.Name, c),
				URL:  fmt.Sprintf("https://site-%d.example/%s", c, f.Name),
				Date: "2026-10-01",
				Text: synth.FamilyCopy(r, article, f.rate, f.site, pick),
			})
			Copies[f.Name] = append(Copies[f.Name], rows[len(rows)-1].Text)
		}
	}
	footer := strings.Join(draw(boilerplateWords), " ")
	for i := range boilerplatePages {
		rows = append(rows, pipelinetest.DatedPage{
			ID:   fmt.Sprintf("page-%d", i),
			URL:  fmt.Sprintf("https://template.example/page-%d", i),
			Date: "2026-10-01",
			Text: strings.Join(draw(pageWords), " ") + " " + footer,
		})
	}
	r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	var indexed, held []pipelinetest.DatedPage
	for _, row := range rows {
		name, n, _ := strings.Cut(row.ID, "-")
		if c, err := strconv.Atoi(n); name == Families[0].Name && err == nil && c >= Families[0].Size-HeldOut {
			held = append(held, row)
		} else {
			indexed = append(indexed, row)
		}
	}
	if len(held) != HeldOut {
		return "", fmt.Errorf("%d copies held out, want %d", len(held), HeldOut)
	}
	for name, rows := range map[string][]pipelinetest.DatedPage{quotesFile: quotes, indexedFile: indexed, HeldFile: held} {
		if err := parquet.WriteFile(filepath.Join(dir, name), rows, parquet.MaxRowsPerRowGroup(250)); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "*.parquet"), nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
