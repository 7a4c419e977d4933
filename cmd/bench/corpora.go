package main

// The real corpora: Parquet tables that nobody on the project wrote, in
// ../shared/data relative to the module root (see its README). A user's
// clone does not have them, so the bench says in one line that it skipped
// them and goes on.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/io/crawl"
)

// corpusDir is where the real corpora live, relative to the module root.
const corpusDir = "../shared/data"

// corpus is one real table and the content column to read.
type corpus struct {
	name string // the file without .parquet
	html string // the HTML column, or "" for the text column "text"
	path string // set by findCorpora
}

// corpusList holds the corpora the bench knows, in the order it runs them.
// All have the columns id, url and date; all but the HTML one text.
var corpusList = []corpus{
	{name: "multilingual-docs"},
	{name: "cc-main-2019-30-sample"},
	{name: "deb-manpages"},
	{name: "deb-copyright"},
	{name: "python-3.11-docs-html", html: "html"},
}

func corpusNames() []string {
	var names []string
	for _, c := range corpusList {
		names = append(names, c.name)
	}
	return names
}

// columns are the runner's default columns with the corpus's content column.
func (c corpus) columns() crawl.Columns { return columnConfig("text", c.html).Columns }

// findCorpora resolves --corpora: "auto" is every known corpus present under
// root/../shared/data, "none" none, or a comma-separated list of names (with
// or without .parquet). When the folder is absent it returns no corpora and
// a note saying so; a named corpus missing from a present folder is an
// error.
func findCorpora(root, spec string) ([]corpus, string, error) {
	spec = strings.TrimSpace(spec)
	if spec == "none" || spec == "" {
		return nil, "", nil
	}
	var want []corpus
	if spec == "auto" {
		want = corpusList
	} else {
		for _, name := range strings.Split(spec, ",") {
			name = strings.TrimSuffix(strings.TrimSpace(name), ".parquet")
			i := -1
			for k, c := range corpusList {
				if c.name == name {
					i = k
				}
			}
			if i < 0 {
				return nil, "", fmt.Errorf("unknown corpus %q (known: %s)", name, strings.Join(corpusNames(), ", "))
			}
			want = append(want, corpusList[i])
		}
	}
	dir := filepath.Join(root, corpusDir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Sprintf("real corpora skipped: %s (%s relative to the module root) is not there, so only synthetic crawls were measured", dir, corpusDir), nil
	}
	var out []corpus
	var missing []string
	for _, c := range want {
		c.path = filepath.Join(dir, c.name+".parquet")
		if _, err := os.Stat(c.path); err != nil {
			missing = append(missing, c.name)
			continue
		}
		out = append(out, c)
	}
	switch {
	case len(missing) > 0 && spec != "auto":
		return nil, "", fmt.Errorf("not in %s: %s", dir, strings.Join(missing, ", "))
	case len(out) == 0:
		return nil, fmt.Sprintf("real corpora skipped: none of %s is in %s", strings.Join(corpusNames(), ", "), dir), nil
	case len(missing) > 0:
		return out, fmt.Sprintf("real corpora not in %s, skipped: %s", dir, strings.Join(missing, ", ")), nil
	}
	return out, "", nil
}

// inputText reads the files of glob as the runs do (io/crawl, by row group)
// and returns the rows and the bytes of their content column: the text, or
// the HTML with cols.HTML.
func inputText(ctx context.Context, glob string, cols crawl.Columns) (rows, bytes int64, err error) {
	files, err := filepath.Glob(glob)
	if err != nil {
		return 0, 0, err
	}
	if len(files) == 0 {
		return 0, 0, fmt.Errorf("no file matches %s", glob)
	}
	for i, f := range files {
		splits, err := crawl.Splits(ctx, i, f, cols)
		if err != nil {
			return 0, 0, err
		}
		for _, sp := range splits {
			err := crawl.ReadSplit(ctx, sp, cols, func(row crawl.Row) error {
				rows++
				bytes += int64(len(row.Content))
				return nil
			})
			if err != nil {
				return 0, 0, err
			}
		}
	}
	return rows, bytes, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// growCorpus makes, under crawls, a crawl of mb MB of real text grown
// from the corpora with edited copies (scripts/growcorpus: near-duplicates
// and joins of two rows, so that about half survives deduplication), or
// finds the one an earlier bench made, and returns it as a corpus. The
// output of growcorpus is a function of its flags, so a crawl made once
// is the same crawl.
func growCorpus(root, crawls string, mb float64) (corpus, error) {
	data := filepath.Join(root, corpusDir)
	if fi, err := os.Stat(data); err != nil || !fi.IsDir() {
		return corpus{}, fmt.Errorf("%s (%s relative to the module root) is not there: there is no real text to grow", data, corpusDir)
	}
	name := fmt.Sprintf("grown-%gMB", mb)
	dir := filepath.Join(crawls, name)
	c := corpus{name: name, path: filepath.Join(dir, "*.parquet")}
	done := filepath.Join(dir, ".complete")
	if _, err := os.Stat(done); err == nil {
		return c, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return c, err
	}
	fmt.Fprintf(os.Stderr, "bench: growing %g MB of real text into %s\n", mb, dir)
	cmd := exec.Command("go", "run", "./scripts/growcorpus", "-data", data, "-out", dir, "-mb", fmt.Sprint(mb))
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return c, fmt.Errorf("scripts/growcorpus: %w", err)
	}
	return c, os.WriteFile(done, nil, 0o644)
}
