package crawl

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// jsonlPage is what TestJSONLines writes on each line, and what it
// expects read back.
type jsonlPage struct {
	line string // the JSON object as written
	want Row    // Index aside
}

// jsonlPages makes n rows of every kind a JSON lines crawl has: escapes
// and non-ASCII text, a null or missing text, a number for an id, a
// score, and keys the run does not read.
func jsonlPages(n int) []jsonlPage {
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"alpha", "β-γ", "naïve", "東京", "tab\there", `quote"d`, "back\\slash", "emoji 🙂"}
	var out []jsonlPage
	for i := range n {
		var text []string
		for range 5 + r.IntN(40) {
			text = append(text, words[r.IntN(len(words))])
		}
		t := strings.Join(text, " ")
		url := fmt.Sprintf("https://site%d.example/p/%d", i%7, i)
		p := jsonlPage{want: Row{ID: fmt.Sprint("doc-", i), URL: url, Date: "2024-01-02T03:04:05Z", Content: t, Score: float64(i) / 4, HasScore: true}}
		quoted := func(s string) string { return strings.Trim(fmt.Sprintf("%q", s), "") }
		switch i % 5 {
		case 1: // a null text, keys in another order, a numeric id
			p.want.Content, p.want.Null, p.want.ID = "", true, fmt.Sprint(1000+i)
			p.line = fmt.Sprintf(`{"id": %d, "text": null, "url": %s, "score": %g, "created": %s}`, 1000+i, quoted(url), p.want.Score, quoted(p.want.Date))
		case 2: // no text key, no score
			p.want.Content, p.want.Null, p.want.Score, p.want.HasScore = "", true, 0, false
			p.line = fmt.Sprintf(`{"url":%s,"id":%s,"created":%s,"meta":{"a":[1,2]}}`, quoted(url), quoted(p.want.ID), quoted(p.want.Date))
		default:
			p.want.Null = false
			p.line = fmt.Sprintf(`{"text":%s,"id":%s,"url":%s,"created":%s,"score":%g,"source":"c4"}`, jsonString(t), quoted(p.want.ID), quoted(url), quoted(p.want.Date), p.want.Score)
		}
		out = append(out, p)
	}
	return out
}

// jsonString is s as a JSON string, with non-ASCII escaped as \uXXXX on
// some runes, as some writers do.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == 'β':
			b.WriteString(`\u03b2`)
		case c == '🙂':
			b.WriteString(`\ud83d\ude42`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeJSONL writes the pages' lines to name in dir, compressed as its
// name says, with a blank line and CRLF endings here and there.
func writeJSONL(t *testing.T, dir, name string, pages []jsonlPage) string {
	t.Helper()
	var b bytes.Buffer
	for i, p := range pages {
		b.WriteString(p.line)
		switch i % 11 {
		case 3:
			b.WriteString("\r\n")
		case 7:
			b.WriteString("\n\n  \n")
		default:
			b.WriteString("\n")
		}
	}
	data := b.Bytes()
	if len(pages)%2 == 1 {
		data = bytes.TrimSuffix(data, []byte("\n")) // no newline at the end
	}
	var out bytes.Buffer
	switch {
	case strings.HasSuffix(name, ".gz"):
		w := gzip.NewWriter(&out)
		// Two gzip members, as concatenated files are.
		half := len(data) / 2
		w.Write(data[:half])
		w.Close()
		w = gzip.NewWriter(&out)
		w.Write(data[half:])
		w.Close()
	case strings.HasSuffix(name, ".zst"):
		w, _ := zstd.NewWriter(&out)
		w.Write(data)
		w.Close()
	default:
		out.Write(data)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var jsonlCols = Columns{Text: "text", URL: "url", ID: "id", Date: "created", Score: "score"}

// TestJSONLines reads the same rows from plain, gzip and zstd JSON lines,
// cut into splits at line boundaries, and checks every row against what
// was written, by split, by ReadRows and by ReadRow.
func TestJSONLines(t *testing.T) {
	defer func(n int64) { jsonlSplitBytes = n }(jsonlSplitBytes)
	jsonlSplitBytes = 4096
	pages := jsonlPages(501)
	dir := t.TempDir()
	ctx := context.Background()
	for _, name := range []string{"a.jsonl", "a.jsonl.gz", "a.json.zst", "a.ndjson"} {
		t.Run(name, func(t *testing.T) {
			path := writeJSONL(t, dir, name, pages)
			splits, err := Splits(ctx, 3, path, jsonlCols)
			if err != nil {
				t.Fatal(err)
			}
			if compressed := !strings.HasSuffix(name, "json") && !strings.HasSuffix(name, "jsonl"); compressed != (len(splits) == 1) {
				t.Fatalf("%d splits; want one exactly when compressed", len(splits))
			}
			var got []Row
			var next int64
			for i, sp := range splits {
				if sp.FileIndex != 3 || sp.RowGroup != i || sp.FirstRow != next || sp.NumRows <= 0 {
					t.Fatalf("split %d: %+v, after %d rows", i, sp, next)
				}
				next += sp.NumRows
				if err := ReadSplit(ctx, sp, jsonlCols, func(r Row) error { got = append(got, r); return nil }); err != nil {
					t.Fatal(err)
				}
			}
			if len(got) != len(pages) {
				t.Fatalf("read %d rows, wrote %d", len(got), len(pages))
			}
			for i, r := range got {
				want := pages[i].want
				want.Index = int64(i)
				if r != want {
					t.Fatalf("row %d: %+v\nwant %+v\n(line %s)", i, r, want, pages[i].line)
				}
			}
			some := []int64{0, 5, 6, 77, 250, 499, 500}
			var i int
			err = ReadRows(ctx, 3, path, Pin{}, some, jsonlCols, func(sp Split, r Row) error {
				if r.Index != some[i] || r.Content != pages[some[i]].want.Content || r.Index < sp.FirstRow || r.Index >= sp.FirstRow+sp.NumRows {
					return fmt.Errorf("ReadRows gave row %d (split from %d, %d rows) for %d", r.Index, sp.FirstRow, sp.NumRows, some[i])
				}
				i++
				return nil
			})
			if err != nil || i != len(some) {
				t.Fatalf("ReadRows: %v after %d rows of %d", err, i, len(some))
			}
			if r, err := ReadRow(ctx, path, 250, jsonlCols); err != nil || r.ID != pages[250].want.ID {
				t.Fatalf("ReadRow 250: %+v, %v", r, err)
			}
			scores, has, err := ReadScores(ctx, path, "score")
			if err != nil || len(scores) != len(pages) || has[2] || !has[3] || scores[3] != 0.75 {
				t.Fatalf("ReadScores: %d scores, %v", len(scores), err)
			}
		})
	}
}

// TestJSONLinesErrors checks that bad JSON lines name the file and line,
// and are bad input (which --on-bad-file=skip may skip), while a file
// whose first row lacks the text key is refused before any row is read.
func TestJSONLinesErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	pages := jsonlPages(20)
	pages[13].line = `{"text": "cut off`
	path := writeJSONL(t, dir, "bad.jsonl.gz", pages)
	splits, err := Splits(ctx, 0, path, jsonlCols)
	if err != nil {
		t.Fatal(err)
	}
	err = ReadSplit(ctx, splits[0], jsonlCols, func(Row) error { return nil })
	// Page 13 is on line 16: two blank lines follow page 7 (writeJSONL).
	if err == nil || !IsBadInput(err) || !strings.Contains(err.Error(), path+": line 16:") {
		t.Errorf("a cut-off object: %v; want bad input at %s: line 16", err, path)
	}
	// The same in an uncompressed file cut into splits: the line is
	// counted from the file's start, not the split's.
	defer func(n int64) { jsonlSplitBytes = n }(jsonlSplitBytes)
	jsonlSplitBytes = 300
	many := jsonlPages(60)
	many[50].line = `{"text": 3, "id": }`
	plainPath := writeJSONL(t, dir, "bad.jsonl", many)
	splits, err = Splits(ctx, 0, plainPath, jsonlCols)
	if err != nil || len(splits) < 5 {
		t.Fatalf("%d splits, %v", len(splits), err)
	}
	err = nil
	for _, sp := range splits {
		if err = ReadSplit(ctx, sp, jsonlCols, func(Row) error { return nil }); err != nil {
			break
		}
	}
	// Page 50 is on line 51 + 2 for each of pages 7, 18, 29, 40.
	if err == nil || !IsBadInput(err) || !strings.Contains(err.Error(), plainPath+": line 59:") {
		t.Errorf("a bad object in a later split: %v; want bad input at %s: line 59", err, plainPath)
	}
	nokey := writeJSONL(t, dir, "nokey.jsonl", []jsonlPage{{line: `{"body": "x", "url": "u"}`}})
	if _, err := Splits(ctx, 0, nokey, jsonlCols); err == nil || !IsBadInput(err) || !strings.Contains(err.Error(), `line 1: column "text" not found (the first row's keys: body, url)`) {
		t.Errorf("no text key: %v", err)
	}
	notgz := filepath.Join(dir, "plain.jsonl.gz")
	os.WriteFile(notgz, []byte(`{"text": "not compressed"}`+"\n"), 0o644)
	if _, err := Splits(ctx, 0, notgz, jsonlCols); err == nil || !IsBadInput(err) || !strings.Contains(err.Error(), "gzip") {
		t.Errorf("a .gz file that is not gzip: %v", err)
	}
}
