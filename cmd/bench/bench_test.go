package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/neardup/neardup/features/shingle"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/text/canon"
	"github.com/neardup/neardup/transforms"
)

func TestMain(m *testing.M) { beamtest.Main(m) }

// The same crawl comes out byte for byte whatever the number of goroutines,
// in the layout asked for, in both text modes.
func TestGenerateDeterministic(t *testing.T) {
	for _, mode := range []string{textASCII, textUnicode} {
		t.Run(mode, func(t *testing.T) { testGenerateDeterministic(t, mode) })
	}
	// ensureCrawl keeps the modes apart and reuses each.
	root := t.TempDir()
	dirs := map[string]bool{}
	for _, mode := range []string{textASCII, textUnicode, textASCII, textUnicode} {
		cfg := genConfig{Docs: 200, Seed: 7, Text: mode}
		info, dir, err := ensureCrawl(root, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if info.Reused != dirs[dir] || info.textMode() != mode {
			t.Errorf("%s: reused %v (want %v), mode %s", mode, info.Reused, dirs[dir], info.textMode())
		}
		dirs[dir] = true
	}
	if len(dirs) != 2 {
		t.Errorf("crawl folders %v, want one per mode", dirs)
	}
}

func testGenerateDeterministic(t *testing.T, mode string) {
	cfg := genConfig{Docs: 3000, Seed: 7, RowsPerGroup: 300, RowsPerFile: 1000, Text: mode}
	dirs := []string{t.TempDir(), t.TempDir()}
	var infos []crawlInfo
	for i, workers := range []int{1, 4} {
		cfg.Workers = workers
		info, err := generate(dirs[i], cfg)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
	}
	if len(infos[0].Files) != 4 {
		t.Fatalf("%d files, want 4", len(infos[0].Files))
	}
	rows := 0
	for i, f := range infos[0].Files {
		a, err := os.ReadFile(filepath.Join(dirs[0], f.Name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dirs[1], f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between 1 and 4 workers", f.Name)
		}
		splits, err := crawl.Splits(context.Background(), i, filepath.Join(dirs[0], f.Name), defaultConfig().Columns)
		if err != nil {
			t.Fatal(err)
		}
		if len(splits) != 3 {
			t.Errorf("%s: %d row groups, want 3", f.Name, len(splits))
		}
		for _, sp := range splits {
			rows += int(sp.NumRows)
		}
	}
	if rows != cfg.Docs {
		t.Errorf("%d rows, want %d", rows, cfg.Docs)
	}
	if infos[0].TextBytes != infos[1].TextBytes {
		t.Errorf("text bytes %d and %d", infos[0].TextBytes, infos[1].TextBytes)
	}
}

// The ascii mode gives the crawl it gave before the unicode mode existed:
// the pages of seed 3, hashed with the generator of commit f1b75d3.
func TestASCIIUnchanged(t *testing.T) {
	const n = 3000
	g := newGenerator(n, 3, textASCII)
	d := g.newDocGen()
	h := sha256.New()
	for i := range n {
		doc := d.doc(i)
		fmt.Fprintf(h, "%d %d %q %q %q %q\n", doc.kind, doc.source, doc.row.Text, doc.row.ID, doc.row.URL, doc.row.Date)
	}
	if got, want := fmt.Sprintf("%x", h.Sum(nil)), "3b58712c2c48b6404a49b6fbcca82d22fb73ffbe47a954f89fa63ebf24ba1ebf"; got != want {
		t.Errorf("the ascii crawl changed: sha256 %s, want %s", got, want)
	}
}

func shingles(text string) []uint64 {
	return shingle.Fingerprints(nil, fingerprint.New(fingerprint.DefaultSeed), canon.Tokens(text), 10)
}

// The mix is what gen.go promises, in both text modes: the share of each
// kind, exact copies byte-identical, lexical variants with the same tokens
// and other bytes, near copies at their resemblance, excerpts contained in
// their source. In unicode mode, CJK pages (no spaces, so a token is a
// clause) are left out of the resemblance and containment checks, most
// pages hold non-ASCII text, and the scripts have their shares.
func TestDuplicateMix(t *testing.T) {
	for _, mode := range []string{textASCII, textUnicode} {
		t.Run(mode, func(t *testing.T) { testDuplicateMix(t, mode) })
	}
}

func testDuplicateMix(t *testing.T, mode string) {
	const n = 4000
	g := newGenerator(n, 3, mode)
	d := g.newDocGen()
	src := g.newDocGen()
	var kinds [numKinds]int
	var near [len(nearLevels)][]float64
	var onSite, originals, nonASCII int
	var cjkNear []float64 // resemblance of CJK near copies, all levels
	var scriptPages [numScripts]int
	var lengths []int
	for i := range n {
		doc := d.doc(i)
		kinds[doc.kind]++
		if mode == textUnicode {
			scriptPages[doc.style.script]++
			if !isASCII(doc.row.Text) {
				nonASCII++
			}
			if want := scriptRunes[doc.style.script]; want != nil && !strings.ContainsFunc(doc.row.Text, func(r rune) bool { return unicode.Is(want, r) }) {
				t.Errorf("doc %d: a %s page without %s letters", i, scriptNames[doc.style.script], scriptNames[doc.style.script])
			}
		}
		if doc.kind == kindOriginal {
			originals++
			p := g.planOf(d.rI, d.pcgI, i)
			lengths = append(lengths, p.words)
			if p.site >= 0 {
				onSite++
			}
			continue
		}
		s := src.doc(doc.source)
		if s.kind != kindOriginal {
			t.Fatalf("doc %d: source %d is not an original", i, doc.source)
		}
		a, b := doc.row.Text, s.row.Text
		if s.style != doc.style {
			t.Fatalf("doc %d: style %+v, its source's %+v", i, doc.style, s.style)
		}
		cjk := mode == textUnicode && doc.style.script == scriptCJK
		switch doc.kind {
		case kindExact:
			if a != b {
				t.Errorf("doc %d: exact copy differs from its source", i)
			}
		case kindLexical:
			if a == b || !slices.Equal(canon.Tokens(a), canon.Tokens(b)) {
				t.Errorf("doc %d: lexical variant: same bytes %v, same tokens %v", i, a == b, slices.Equal(canon.Tokens(a), canon.Tokens(b)))
			}
		case kindNear:
			r := sketch.Jaccard(shingles(a), shingles(b))
			if cjk {
				cjkNear = append(cjkNear, r)
				continue
			}
			near[doc.level] = append(near[doc.level], r)
		case kindExcerpt:
			if cjk {
				continue
			}
			sa, sb := shingles(a), shingles(b)
			shared := sketch.IntersectCount(sa, sb)
			if c := float64(shared) / float64(len(sa)); c != 1 {
				t.Errorf("doc %d: excerpt contained %.2f in its source, want 1", i, c)
			}
			if r := sketch.Jaccard(sa, sb); r > 0.5 {
				t.Errorf("doc %d: excerpt resembles its source %.2f", i, r)
			}
		}
	}
	want := [numKinds]float64{1 - fracExact - fracLexical - fracNear - fracExcerpt, fracExact, fracLexical, fracNear, fracExcerpt}
	for k := range numKinds {
		got := float64(kinds[k]) / n
		if sd := math.Sqrt(want[k] * (1 - want[k]) / n); math.Abs(got-want[k]) > 4*sd {
			t.Errorf("%s: %.3f of the docs, want %.3f", kindNames[k], got, want[k])
		}
	}
	for l, rs := range near {
		var sum float64
		for _, r := range rs {
			sum += r
		}
		mean := sum / float64(len(rs))
		t.Logf("near copies at %.2f: mean resemblance %.3f over %d", nearLevels[l], mean, len(rs))
		if math.Abs(mean-nearLevels[l]) > 0.05 {
			t.Errorf("near copies at %.2f: mean resemblance %.3f over %d", nearLevels[l], mean, len(rs))
		}
	}
	if share := float64(onSite) / float64(originals); math.Abs(share-fracSite) > 0.03 {
		t.Errorf("%.3f of the originals on a site, want %.2f", share, fracSite)
	}
	if mode == textUnicode {
		share := float64(nonASCII) / n
		t.Logf("%.3f of the pages hold non-ASCII text; pages by script %v; CJK near copies' resemblance %.2f", share, scriptPages, cjkNear)
		if share < 0.75 {
			t.Errorf("only %.3f of the pages hold non-ASCII text", share)
		}
		// Sites share a script, so the shares vary more than a binomial's.
		for sc, want := range map[int]float64{scriptCyrillic: 0.08, scriptCJK: 0.07} {
			if got := float64(scriptPages[sc]) / n; math.Abs(got-want) > 0.04 {
				t.Errorf("%s: %.3f of the pages, want about %.2f", scriptNames[sc], got, want)
			}
		}
		latin := float64(scriptPages[scriptEnglish]+scriptPages[scriptLatin]) / n
		other := float64(scriptPages[scriptGreek]+scriptPages[scriptArabic]+scriptPages[scriptHebrew]+scriptPages[scriptDevanagari]) / n
		if math.Abs(latin-0.80) > 0.06 || other < 0.02 || other > 0.09 {
			t.Errorf("%.3f of the pages in Latin script (want about 0.80), %.3f in other scripts (want about 0.05)", latin, other)
		}
	}
	sort.Ints(lengths)
	if med := lengths[len(lengths)/2]; med < 350 || med > 450 || lengths[0] < minWords || lengths[len(lengths)-1] > maxWords {
		t.Errorf("body lengths: median %d, range %d..%d", med, lengths[0], lengths[len(lengths)-1])
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// scriptRunes are the letters every page of a script holds.
var scriptRunes = [numScripts]*unicode.RangeTable{
	scriptCyrillic: unicode.Cyrillic, scriptCJK: unicode.Han, scriptGreek: unicode.Greek,
	scriptArabic: unicode.Arabic, scriptHebrew: unicode.Hebrew, scriptDevanagari: unicode.Devanagari,
}

// The floor does the pipeline's work: the same counts and the same
// clusters on the same crawl.
// On the real corpora too, where they are (HTML included), and on the
// unicode crawl.
func TestFloorMatchesPipeline(t *testing.T) {
	for _, mode := range []struct {
		text string
		docs int
	}{{textASCII, 2000}, {textUnicode, 1000}} {
		t.Run(mode.text, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := generate(dir, genConfig{Docs: mode.docs, Seed: 5, RowsPerGroup: 250, Text: mode.text}); err != nil {
				t.Fatal(err)
			}
			compareFloor(t, crawlGlob(dir), defaultConfig(), mode.docs)
		})
	}
	for _, name := range []string{"deb-copyright", "python-3.11-docs-html"} {
		t.Run(name, func(t *testing.T) {
			shareddata.Path(t, name+".parquet") // skips, or fails in CI, without it
			cs, note, err := findCorpora("../..", name)
			if err != nil || len(cs) == 0 {
				t.Fatalf("corpus %s: %v %s", name, err, note)
			}
			c := cs[0]
			rows, _, err := inputText(context.Background(), c.path, c.columns())
			if err != nil {
				t.Fatal(err)
			}
			cfg := defaultConfig()
			cfg.Columns = c.columns()
			// All visible text: the main content of the Python docs
			// leaves no cluster to compare.
			cfg.Extract = settings.ExtractVisible
			compareFloor(t, c.path, cfg, int(rows))
		})
	}
}

// Without ../shared/data the corpora are skipped, with a note.
func TestCorporaAbsent(t *testing.T) {
	cs, note, err := findCorpora(t.TempDir(), "auto")
	if err != nil || len(cs) != 0 || !strings.Contains(note, "skipped") {
		t.Errorf("findCorpora without the folder: %d corpora, note %q, err %v", len(cs), note, err)
	}
	if _, _, err := findCorpora(t.TempDir(), "no-such-corpus"); err == nil {
		t.Error("an unknown corpus name is not an error")
	}
}

func compareFloor(t *testing.T, glob string, cfg transforms.Config, wantDocs int) {
	ctx := context.Background()
	beamOut, floorOut := t.TempDir(), t.TempDir()
	m, err := pipelines.Run(ctx, pipelines.Options{Input: glob, Output: beamOut, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := runFloor(ctx, glob, floorOut, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pipeline: %d clusters, %d links, %d pairs, %d identical groups", m.Counts["clusters"], m.Counts["links"], m.Counts["pairs"], m.Counts["identical_groups"])
	if m.Counts["clusters"] == 0 {
		t.Fatalf("nothing to compare: %v", m.Counts)
	}
	for _, c := range []string{"docs", "docs_ok", "identical_groups", "identical_skipped", "representatives",
		"distinct_shingles", "shared_shingles", "pair_triplets", "pairs", "links", "pairs_reported", "clusters",
		"clustered_docs", "largest_cluster", "docs_in_clusters", "docs_alone", "pairs_written", "contained_written"} {
		if m.Counts[c] != fr.Counts[c] {
			t.Errorf("%s: pipeline %d, floor %d", c, m.Counts[c], fr.Counts[c])
		}
	}
	for _, p := range floorPhases {
		if _, ok := fr.PhaseMS[p]; !ok {
			t.Errorf("floor: no time for phase %s", p)
		}
	}
	read := func(out string) []tables.Cluster {
		cs, err := tables.ReadTable[tables.Cluster](ctx, out, tables.ClustersTable)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(cs, func(a, b tables.Cluster) int { return cmp.Compare(a.ClusterID, b.ClusterID) })
		return cs
	}
	bc, fc := read(beamOut), read(floorOut)
	if len(bc) != len(fc) {
		t.Fatalf("clusters: pipeline %d rows, floor %d", len(bc), len(fc))
	}
	for i := range bc {
		a, b := bc[i], fc[i]
		if a.ClusterID != b.ClusterID || a.Size != b.Size || a.IdenticalCopies != b.IdenticalCopies || a.LinkedPairs != b.LinkedPairs ||
			deref(a.RepresentativeURL) != deref(b.RepresentativeURL) {
			t.Errorf("cluster %d: pipeline %+v, floor %+v", i, a, b)
		}
	}
	docs, err := tables.ReadTable[tables.Doc](ctx, floorOut, tables.DocsTable)
	if err != nil || len(docs) != wantDocs {
		t.Errorf("floor docs table: %d rows, %v", len(docs), err)
	}
}
