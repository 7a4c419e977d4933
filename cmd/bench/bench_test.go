package main

import (
	"bytes"
	"cmp"
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/neardup/neardup/canon"
	"github.com/neardup/neardup/fingerprint"
	"github.com/neardup/neardup/internal/beamtest"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/sketch"
)

func TestMain(m *testing.M) { beamtest.Main(m) }

// The same crawl comes out byte for byte whatever the number of goroutines,
// in the layout asked for.
func TestGenerateDeterministic(t *testing.T) {
	cfg := genConfig{Docs: 3000, Seed: 7, RowsPerGroup: 300, RowsPerFile: 1000}
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
	// A second ensureCrawl reuses the crawl.
	root := t.TempDir()
	cfg = genConfig{Docs: 200, Seed: 7}
	if _, _, err := ensureCrawl(root, cfg); err != nil {
		t.Fatal(err)
	}
	info, _, err := ensureCrawl(root, cfg)
	if err != nil || !info.Reused {
		t.Errorf("second ensureCrawl: reused %v, err %v", info.Reused, err)
	}
}

func shingles(text string) []uint64 {
	return shingle.Fingerprints(nil, fingerprint.New(fingerprint.DefaultSeed), canon.Tokens(text), 10)
}

// The mix is what gen.go promises: the share of each kind, exact copies
// byte-identical, lexical variants with the same tokens and other bytes,
// near copies at their resemblance, excerpts contained in their source.
func TestDuplicateMix(t *testing.T) {
	const n = 4000
	g := newGenerator(n, 3)
	d := g.newDocGen()
	src := g.newDocGen()
	var kinds [numKinds]int
	var near [len(nearLevels)][]float64
	var onSite, originals int
	var lengths []int
	for i := range n {
		doc := d.doc(i)
		kinds[doc.kind]++
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
			near[doc.level] = append(near[doc.level], sketch.Jaccard(shingles(a), shingles(b)))
		case kindExcerpt:
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
	sort.Ints(lengths)
	if med := lengths[len(lengths)/2]; med < 350 || med > 450 || lengths[0] < minWords || lengths[len(lengths)-1] > maxWords {
		t.Errorf("body lengths: median %d, range %d..%d", med, lengths[0], lengths[len(lengths)-1])
	}
}

// The floor does the pipeline's work: the same counts and the same
// clusters on the same crawl.
func TestFloorMatchesPipeline(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := generate(dir, genConfig{Docs: 2000, Seed: 5, RowsPerGroup: 250}); err != nil {
		t.Fatal(err)
	}
	beamOut, floorOut := t.TempDir(), t.TempDir()
	m, err := pipelines.Run(ctx, pipelines.Options{Input: crawlGlob(dir), Output: beamOut, Config: defaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := runFloor(ctx, crawlGlob(dir), floorOut, defaultConfig(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pipeline: %d clusters, %d links, %d pairs, %d identical groups", m.Counts["clusters"], m.Counts["links"], m.Counts["pairs"], m.Counts["identical_groups"])
	if m.Counts["links"] == 0 || m.Counts["clusters"] == 0 || m.Counts["identical_groups"] == 0 {
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
			*a.RepresentativeURL != *b.RepresentativeURL {
			t.Errorf("cluster %d: pipeline %+v, floor %+v", i, a, b)
		}
	}
	docs, err := tables.ReadTable[tables.Doc](ctx, floorOut, tables.DocsTable)
	if err != nil || len(docs) != 2000 {
		t.Errorf("floor docs table: %d rows, %v", len(docs), err)
	}
}
