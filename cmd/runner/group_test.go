package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/io/tables"
)

// wordList is n made-up words of 3 to 9 letters.
func wordList(r *rand.Rand, n int) []string {
	words := make([]string, n)
	for i := range words {
		b := make([]byte, 3+r.IntN(7))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		words[i] = string(b)
	}
	return words
}

// randomText is n words drawn from words.
func randomText(r *rand.Rand, words []string, n int) []string {
	t := make([]string, n)
	for i := range t {
		t[i] = words[r.IntN(len(words))]
	}
	return t
}

// edited is text with edits words replaced, spread over its length.
func edited(r *rand.Rand, words, text []string, edits int) []string {
	t := append([]string(nil), text...)
	for e := range edits {
		i := (e*len(t) + r.IntN(len(t)/edits)) / edits
		t[i] = words[r.IntN(len(words))]
	}
	return t
}

type resultRow struct {
	URL  string `parquet:"url"`
	Text string `parquet:"text"`
	Rank int64  `parquet:"rank"`
}

// runGroup runs groupMain and returns its groups table and summary.
func runGroup(t testing.TB, args ...string) ([]groupRow, string) {
	t.Helper()
	var log bytes.Buffer
	old := groupLog
	defer func() { groupLog = old }()
	groupLog = &log
	out := t.TempDir()
	if err := groupMain(context.Background(), append(args, "--output", out)); err != nil {
		t.Fatal(err)
	}
	rows, err := tables.Read[groupRow](context.Background(), filepath.Join(out, "groups", "part-00000.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".groups-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	return rows, log.String()
}

func TestGroupCommand(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	words := wordList(r, 5000)
	a := randomText(r, words, 300)
	b := randomText(r, words, 400)
	c := randomText(r, words, 250)
	// 3 edits change at most 30 of a's 291 shingles: resemblance at least
	// 0.8 to a, 0.6 between two edits.
	docs := []struct {
		text []string
		rank int64
	}{
		{a, 4},                      // 0
		{edited(r, words, a, 3), 2}, // 1: the a family's best
		{b, 1},                      // 2: the b family's best
		{c, 5},                      // 3: alone
		{edited(r, words, b, 2), 3}, // 4
		{edited(r, words, a, 3), 7}, // 5
		{a[:5], 0},                  // 6: too short for a shingle: alone
		{b, 3},                      // 7: a copy of b
	}
	rows := make([]resultRow, len(docs))
	for i, d := range docs {
		// Case and punctuation do not change the canonical tokens.
		text := strings.Join(d.text, " ")
		if i == 7 {
			text = strings.ToUpper(strings.ReplaceAll(text, " ", ", "))
		}
		rows[i] = resultRow{URL: fmt.Sprintf("https://example.com/%d", i), Text: text, Rank: d.rank}
	}
	in := filepath.Join(t.TempDir(), "results.parquet")
	if err := parquet.WriteFile(in, rows); err != nil {
		t.Fatal(err)
	}

	got, summary := runGroup(t, "--input", in, "--rank-column", "rank")
	t.Log(strings.TrimSpace(summary))
	wantGroup := []int64{1, 1, 2, 3, 2, 1, 6, 2}
	if len(got) != len(docs) {
		t.Fatalf("%d rows for %d docs", len(got), len(docs))
	}
	for i, g := range got {
		if g.Row != int64(i) || g.Group != wantGroup[i] || g.Anchor != (wantGroup[i] == int64(i)) || g.Rank != float64(docs[i].rank) {
			t.Errorf("row %d: %+v, want group %d", i, g, wantGroup[i])
		}
		if g.ID == nil || *g.ID != rows[i].URL {
			t.Errorf("row %d: id %v, want the url column's %s", i, g.ID, rows[i].URL)
		}
		if g.Anchor && (g.Resemblance != 1 || g.Containment != 1) {
			t.Errorf("row %d: an anchor with %+v", i, g)
		}
		if !g.Anchor && (g.Resemblance < 0.5 || g.Resemblance > 1 || g.Containment < g.Resemblance) {
			t.Errorf("row %d: estimates %+v against its anchor", i, g)
		}
	}
	if want := []int32{291, 291, 391, 241, 391, 291, 0, 391}; fmt.Sprint(featureCounts(got)) != fmt.Sprint(want) {
		t.Errorf("features %v, want %v", featureCounts(got), want)
	}
	if got[7].Resemblance != 1 {
		t.Errorf("an identical copy: resemblance %v", got[7].Resemblance)
	}
	if !strings.Contains(summary, "8 docs in 4 groups") {
		t.Errorf("summary %q", summary)
	}

	// A stricter policy splits the edits off; chunks are features too.
	got, _ = runGroup(t, "--input", in, "--rank-column", "rank", "--policy", "resemblance:0.95", "--id-column", "text")
	if fmt.Sprint(groupsOf(got)) != "[0 1 2 3 4 5 6 2]" {
		t.Errorf("resemblance:0.95: groups %v", groupsOf(got))
	}
	if *got[3].ID != rows[3].Text {
		t.Errorf("--id-column text: id %q", *got[3].ID)
	}
	// About 30 chunks a document: edits leave resemblances of 0.55 to
	// 0.7 among the a and b families, and c shares none.
	got, _ = runGroup(t, "--input", in, "--rank-column", "rank", "--features", "chunks:64", "--bloom-bits", "16", "--policy", "resemblance:0.4")
	if fmt.Sprint(groupsOf(got)) != fmt.Sprint(wantGroup) {
		t.Errorf("chunks:64: groups %v", groupsOf(got))
	}
}

func featureCounts(rows []groupRow) []int32 {
	var out []int32
	for _, r := range rows {
		out = append(out, r.Features)
	}
	return out
}

func groupsOf(rows []groupRow) []int64 {
	var out []int64
	for _, r := range rows {
		out = append(out, r.Group)
	}
	return out
}

// TestGroupRankTypes: ranks of any numeric type, and a float rank column
// ordering the anchors.
func TestGroupRankTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	words := wordList(r, 5000)
	a := strings.Join(randomText(r, words, 200), " ")
	dir := t.TempDir()
	floats := filepath.Join(dir, "f.parquet")
	err := parquet.WriteFile(floats, []struct {
		Text string  `parquet:"text"`
		R    float32 `parquet:"score"`
	}{{a, 0.75}, {a, 0.25}, {a, 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := runGroup(t, "--input", floats, "--rank-column", "score")
	if fmt.Sprint(groupsOf(got)) != "[1 1 1]" || got[1].Rank != 0.25 || got[0].ID != nil {
		t.Errorf("float ranks: %+v", got)
	}
	uints := filepath.Join(dir, "u.parquet")
	err = parquet.WriteFile(uints, []struct {
		Text string `parquet:"text"`
		R    uint32 `parquet:"score"`
	}{{a, 4000000000}, {a, 3}, {a, 3}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = runGroup(t, "--input", uints, "--rank-column", "score")
	if fmt.Sprint(groupsOf(got)) != "[1 1 1]" || got[0].Rank != 4e9 {
		t.Errorf("unsigned ranks: %+v", got)
	}
}

// TestGroupErrors: bad input is an error naming the file, row and column.
func TestGroupErrors(t *testing.T) {
	dir := t.TempDir()
	type nullable struct {
		Text string   `parquet:"text"`
		Rank *float64 `parquet:"rank,optional"`
		Name string   `parquet:"name"`
	}
	one, nan := 1.0, math.NaN()
	in := filepath.Join(dir, "results.parquet")
	if err := parquet.WriteFile(in, []nullable{{"a b c", &one, "x"}, {"d e f", nil, "y"}}); err != nil {
		t.Fatal(err)
	}
	nanFile := filepath.Join(dir, "nan.parquet")
	if err := parquet.WriteFile(nanFile, []nullable{{"a b c", &one, "x"}, {"d e f", &one, "y"}, {"g", &nan, "z"}}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, c := range []struct {
		args  []string
		want  []string
		usage bool
	}{
		{[]string{"--input", in}, []string{"--rank-column"}, true},
		{[]string{"--input", in, "--rank-column", "rank", "--policy", "jaccard:0.5"}, []string{"--policy"}, true},
		{[]string{"--input", in, "--rank-column", "rank", "--features", "chunks:100"}, []string{"--features"}, true},
		{[]string{"--input", in, "--rank-column", "rank", "--bloom-bits", "0"}, []string{"--bloom-bits"}, true},
		{[]string{"--input", in, "--rank-column", "rank"}, []string{in, "row 1", `"rank"`, "null"}, false},
		{[]string{"--input", nanFile, "--rank-column", "rank"}, []string{nanFile, "row 2", `"rank"`, "NaN"}, false},
		{[]string{"--input", in, "--rank-column", "position"}, []string{in, `"position"`}, false},
		{[]string{"--input", in, "--rank-column", "rank", "--text-column", "body"}, []string{in, `"body"`}, false},
		{[]string{"--input", in, "--rank-column", "rank", "--id-column", "uid"}, []string{in, `"uid"`}, false},
		{[]string{"--input", in, "--rank-column", "name"}, []string{in, `"name"`, "not a number"}, false},
		{[]string{"--input", filepath.Join(dir, "none.parquet"), "--rank-column", "rank"}, []string{"none.parquet"}, false},
	} {
		err := groupMain(context.Background(), append(c.args, "--output", out))
		if err == nil {
			t.Errorf("%v: no error", c.args)
			continue
		}
		if errors.Is(err, errUsage) != c.usage {
			t.Errorf("%v: %v: usage error %v, want %v", c.args, err, errors.Is(err, errUsage), c.usage)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: %q does not name %s", c.args, err, w)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "groups")); err == nil {
		t.Error("a failed run wrote a groups table")
	}
}

// BenchmarkGroupCommand runs "runner group" over 1,000 results of 200 to
// 500 words in families of near-duplicates, reading and writing Parquet.
func BenchmarkGroupCommand(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	words := wordList(r, 20000)
	var bases [][]string
	rows := make([]resultRow, 1000)
	for i := range rows {
		if len(bases) == 0 || r.IntN(3) == 0 {
			bases = append(bases, randomText(r, words, 200+r.IntN(301)))
		}
		text := edited(r, words, bases[r.IntN(len(bases))], 1+r.IntN(10))
		rows[i] = resultRow{URL: fmt.Sprintf("https://example.com/%d", i), Text: strings.Join(text, " "), Rank: int64(i)}
	}
	in := filepath.Join(b.TempDir(), "results.parquet")
	if err := parquet.WriteFile(in, rows); err != nil {
		b.Fatal(err)
	}
	var summary string
	for b.Loop() {
		_, summary = runGroup(b, "--input", in, "--rank-column", "rank")
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/op")
	b.Log(strings.TrimSpace(summary))
}
