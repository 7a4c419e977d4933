package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeBlock is a fenced block of README.md: the runner commands it
// shows (`go run ./cmd/runner ...`, continuation lines joined) and the
// lines of output it quotes (those beginning "neardup:").
type readmeBlock struct {
	line     int // of the opening fence
	commands [][]string
	output   []string
}

// readmeBlocks are README's fenced blocks that show runner commands or
// their output, in order.
func readmeBlocks(t *testing.T, readme string) []readmeBlock {
	t.Helper()
	var blocks []readmeBlock
	var cur *readmeBlock
	pending := ""
	for i, l := range strings.Split(readme, "\n") {
		if strings.HasPrefix(l, "```") {
			if cur == nil {
				cur = &readmeBlock{line: i + 1}
			} else {
				if len(cur.commands) > 0 || len(cur.output) > 0 {
					blocks = append(blocks, *cur)
				}
				cur = nil
			}
			continue
		}
		if cur == nil {
			continue
		}
		if pending != "" || strings.HasPrefix(l, "go run ./cmd/runner") {
			pending += strings.TrimSpace(strings.TrimSuffix(l, "\\")) + " "
			if !strings.HasSuffix(l, "\\") {
				cur.commands = append(cur.commands, shellWords(t, strings.TrimPrefix(pending, "go run ./cmd/runner")))
				pending = ""
			}
			continue
		}
		if strings.HasPrefix(l, "neardup:") {
			cur.output = append(cur.output, l)
		}
	}
	return blocks
}

// shellWords splits a command line as sh does for the README's commands:
// spaces separate words, single and double quotes keep them together.
func shellWords(t *testing.T, s string) []string {
	var words []string
	var w strings.Builder
	in, quote := false, rune(0)
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		t.Fatalf("unclosed quote in README command %q", s)
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// seconds is the run time a summary ends with, which no two runs share.
var seconds = regexp.MustCompile(`\b\d+(\.\d+)?s; tables in `)

// TestReadmeMatchesTheSample runs every runner command README.md shows,
// as written (from the project's root, /tmp/ made a temporary folder),
// and checks the output it quotes: the summary block after the two
// commands line for line (but the run time), the export transcripts line
// for line among what their commands print; and every figure of the
// worked example's notes on the summary is one the summary prints. A
// change that moves the sample's figures fails here until README says
// what the run prints (issue 39).
func TestReadmeMatchesTheSample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sample several times")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	tmp := t.TempDir()
	local := func(s string) string { return strings.ReplaceAll(s, "/tmp/", tmp+"/") }
	blocks := readmeBlocks(t, readme)
	var summary string  // the stdout of the first command, the sample run
	var last []string   // the output lines of the latest commands run
	var stdout []string // the same, stdout only
	checked := 0
	for _, b := range blocks {
		if len(b.commands) > 0 {
			last, stdout = nil, nil
			for _, c := range b.commands {
				args := make([]string, len(c))
				for i, a := range c {
					args[i] = local(a)
				}
				r := runCommand(t, root, args...)
				if r.code != 0 {
					t.Fatalf("README line %d: runner %s: exit %d\n%s", b.line, strings.Join(c, " "), r.code, r.stderr)
				}
				if summary == "" {
					summary = r.stdout
				}
				// Runs print their summary on stdout, exports on stderr.
				last = append(last, lines(r.stdout+"\n"+r.stderr)...)
				stdout = append(stdout, lines(r.stdout)...)
			}
		}
		if len(b.output) == 0 {
			continue
		}
		if last == nil {
			t.Fatalf("README line %d quotes output before any command", b.line)
		}
		got := make([]string, len(last))
		for i, l := range last {
			got[i] = seconds.ReplaceAllString(l, "Ns; tables in ")
		}
		if len(b.commands) == 0 {
			got = got[:0]
			for _, l := range stdout {
				got = append(got, seconds.ReplaceAllString(l, "Ns; tables in "))
			}
		}
		want := make([]string, len(b.output))
		for i, l := range b.output {
			want[i] = seconds.ReplaceAllString(local(l), "Ns; tables in ")
		}
		if len(b.commands) == 0 {
			// The summary block: exactly what the run printed.
			if !slices.Equal(got, want) {
				t.Errorf("README line %d quotes the summary as\n%s\nthe run printed\n%s", b.line, strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		} else if !matchesInOrder(want, got) {
			t.Errorf("README line %d quotes\n%s\nthe commands printed\n%s", b.line, strings.Join(want, "\n"), strings.Join(got, "\n"))
		}
		checked++
	}
	if checked < 3 || summary == "" {
		t.Fatalf("found %d quoted outputs in README (the summary and two exports expected): has its layout changed?", checked)
	}

	// The worked example's notes on the summary: every figure they give
	// is one the summary prints.
	start := strings.Index(readme, "## Worked example")
	end := strings.Index(readme[max(start, 0):], "Every table is a folder")
	if start < 0 || end < 0 {
		t.Fatal("README has no worked example ending before \"Every table is a folder\"")
	}
	printed := map[string]bool{}
	for _, n := range number.FindAllString(summary, -1) {
		printed[n] = true
	}
	notes := readme[start : start+end]
	var figures []string
	for _, l := range strings.Split(notes, "\n") {
		if strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "  ") {
			l = notFigure.ReplaceAllString(strings.ReplaceAll(l, ",", ""), "")
			figures = append(figures, number.FindAllString(l, -1)...)
		}
	}
	if len(figures) < 10 {
		t.Fatalf("the worked example's notes give %d figures: has its layout changed?", len(figures))
	}
	for _, f := range figures {
		if !printed[f] {
			t.Errorf("the worked example says %s; the summary prints no such figure:\n%s", f, summary)
		}
	}
}

// number is a figure in prose: digits not inside a word; notFigure are
// the numbers of the notes that are not the run's figures (the phases'
// numbers, the policy's threshold).
var (
	number    = regexp.MustCompile(`\b\d+\b`)
	notFigure = regexp.MustCompile(`phases? \d+(–\d+)?|\d+\.\d+`)
)

// matchesInOrder reports whether want's lines appear in got in order,
// "..." in a wanted line standing for any text (README shortens the
// export's list of settings so).
func matchesInOrder(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && elided(want[i]).MatchString(g) {
			i++
		}
	}
	return i == len(want)
}

// elided is the pattern of a quoted line whose "..." stand for any text.
func elided(l string) *regexp.Regexp {
	parts := strings.Split(l, "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}
