package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/settings"
)

// layoutRow is a row of the corpus rewritten in another layout.
type layoutRow struct {
	ID   string  `parquet:"id"`
	URL  string  `parquet:"url"`
	Date *string `parquet:"date,optional"`
	Text string  `parquet:"text"`
}

// writeRows writes rows into n Parquet files dir/prefix-NNN.parquet, in
// order, with row groups of 16 rows.
func writeRows(t testing.TB, dir, prefix string, rows []layoutRow, n int) {
	t.Helper()
	per := (len(rows) + n - 1) / n
	for i := 0; i*per < len(rows); i++ {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%03d.parquet", prefix, i)))
		if err != nil {
			t.Fatal(err)
		}
		w := parquet.NewGenericWriter[layoutRow](f, parquet.MaxRowsPerRowGroup(16))
		if _, err := w.Write(rows[i*per : min(len(rows), (i+1)*per)]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// linkedByName runs the defaults over input and returns the linked pairs
// between documents of the corpus (their id column in names), as pairs
// of ids, sorted; and how many of its pairs were settled on dense samples.
func linkedByName(t testing.TB, input string, names map[string]bool) ([][2]string, int) {
	return linkedVerified(t, input, names, settings.VerifyAuto)
}

// linkedVerified is linkedByName under --verify=verify.
func linkedVerified(t testing.TB, input string, names map[string]bool, verify settings.Verify) ([][2]string, int) {
	t.Helper()
	cfg := baseConfig(corpus{glob: input})
	cfg.Verify = verify
	res, err := runPipeline(context.Background(), input, cfg, "defaults")
	if err != nil {
		t.Fatal(err)
	}
	// The docs table carries each row's id column: no second reading of
	// the input to name the documents.
	name := map[uint64]string{}
	for _, d := range res.docs {
		if d.ID != nil && names[*d.ID] {
			name[uint64(d.DocID)] = *d.ID
		}
	}
	var out [][2]string
	for k := range foundPairs(res.docs, res.pairs) {
		a, okA := name[k[0]]
		b, okB := name[k[1]]
		if okA && okB {
			out = append(out, [2]string{min(a, b), max(a, b)})
		}
	}
	slices.SortFunc(out, comparePairs)
	dense := 0
	for _, p := range res.pairs {
		if p.DenseResemblance != nil {
			dense++
		}
	}
	return out, dense
}

// comparePairs orders pairs of ids by their first id, then their second.
func comparePairs(x, y [2]string) int {
	return cmp.Or(cmp.Compare(x[0], y[0]), cmp.Compare(x[1], y[1]))
}

// TestSameDecisionInEveryLayout is issue 39's check that cannot drift:
// with the defaults, a corpus's linked pairs are the same when it runs
// alone, split into many small files, and inside a larger input (other
// corpora and the sample crawl before it, so its documents have other
// IDs and share the run with many more). deb-copyright has the most
// pairs too near the threshold for their sketches to tell (about 9% of
// its candidates), so a decision that depended on the layout or the
// input's size would show there.
func TestSameDecisionInEveryLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the pipeline three times")
	}
	corpusPath := shareddata.Path(t, "deb-copyright.parquet")
	ctx := context.Background()
	docs, err := readCorpus(ctx, corpusPath, columns(corpus{glob: corpusPath}), "")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	rows := make([]layoutRow, len(docs))
	for i, d := range docs {
		names[d.Name] = true
		rows[i] = layoutRow{ID: d.Name, URL: d.Source, Text: d.Text}
	}
	alone, dense := linkedByName(t, corpusPath, names)
	if len(alone) < 1000 || dense < 100 {
		t.Fatalf("alone: %d linked pairs, %d settled on dense samples; want the corpus's 1,400 and hundreds", len(alone), dense)
	}

	split := t.TempDir()
	writeRows(t, split, "b-copyright", rows, 40)
	got, _ := linkedByName(t, filepath.Join(split, "*.parquet"), names)
	if !slices.Equal(got, alone) {
		t.Errorf("split into 40 files: %d linked pairs, alone %d; first differences: %v", len(got), len(alone), firstDifferences(got, alone))
	}

	inside := t.TempDir()
	writeRows(t, inside, "b-copyright", rows, 40)
	var filler []string
	for _, name := range []string{"multilingual-docs.parquet", "deb-manpages.parquet", "cc-main-2019-30-sample.parquet"} {
		filler = append(filler, shareddata.Path(t, name))
	}
	crawl, _ := filepath.Glob("../../testdata/crawl/*.parquet")
	for i, f := range append(filler, crawl...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(inside, fmt.Sprintf("a-filler-%02d.parquet", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = linkedByName(t, filepath.Join(inside, "*.parquet"), names)
	if !slices.Equal(got, alone) {
		t.Errorf("inside a larger input: %d linked pairs, alone %d; first differences: %v", len(got), len(alone), firstDifferences(got, alone))
	}
}

// firstDifferences lists a few pairs in one of a and b but not the other.
func firstDifferences(a, b [][2]string) []string {
	in := func(xs [][2]string, x [2]string) bool {
		_, ok := slices.BinarySearchFunc(xs, x, comparePairs)
		return ok
	}
	var out []string
	for _, x := range a {
		if !in(b, x) && len(out) < 5 {
			out = append(out, fmt.Sprintf("+%v", x))
		}
	}
	for _, x := range b {
		if !in(a, x) && len(out) < 10 {
			out = append(out, fmt.Sprintf("-%v", x))
		}
	}
	return out
}
