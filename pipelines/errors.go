package pipelines

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/neardup/neardup/io/crawl"
)

// HintedError is a failed run's error and what to try about it: the
// error's message, then on a line of its own the hint.
type HintedError struct {
	Err  error
	Hint string
}

func (e *HintedError) Error() string { return e.Err.Error() + "\n" + e.Hint }

func (e *HintedError) Unwrap() error { return e.Err }

// The input errors of package crawl that have a remedy on the command line.
// The job's errors reach the launcher as text (a worker's error crosses
// the runner as its message), so they are recognised by their wording.
var (
	missingColumn = regexp.MustCompile(`column ("(?:[^"\\]|\\.)*") not found`)
	notText       = regexp.MustCompile(`column ("(?:[^"\\]|\\.)*") has type \S+, want a string`)
	unreadable    = regexp.MustCompile(`not a readable Parquet file|unreadable`)
)

// explain adds to a failed run's error what to try, where the error is
// one of the input's that a flag can fix: a column that the input lacks
// or that holds no text (cols are the run's columns), or a file that is
// not Parquet. Other errors, and nil, are returned as they are.
func explain(err error, cols crawl.Columns) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	hint := ""
	if m := missingColumn.FindStringSubmatch(msg); m != nil {
		hint = missingHint(unquote(m[1]), cols)
	} else if m := notText.FindStringSubmatch(msg); m != nil && unquote(m[1]) == cols.ContentColumn() {
		hint = "the documents must be a string column: name the text with --text-column, or the HTML with --html-column"
	} else if unreadable.MatchString(msg) {
		hint = "--input must name Parquet files; --on-bad-file=skip goes on without the unreadable files and row groups, and lists them in the manifest"
	}
	if hint == "" {
		return err
	}
	return &HintedError{Err: err, Hint: hint}
}

// missingHint is what to try when the input has no column name.
func missingHint(name string, cols crawl.Columns) string {
	switch name {
	case cols.HTML:
		return "name the HTML with --html-column, or leave it out and name the text with --text-column"
	case cols.Text:
		return "name the text with --text-column, or the HTML with --html-column"
	case cols.URL:
		return "name the URL column with --url-column, or give --url-column= for none"
	case cols.ID:
		return "name the ID column with --id-column, or leave --id-column out"
	case cols.Date:
		return "name the date column with --date-column, or leave --date-column out"
	case cols.Score:
		return fmt.Sprintf("--keep ranks by column %q: name a numeric column of the input in --keep max:COLUMN or min:COLUMN", name)
	}
	return ""
}

// unquote undoes the %q of a column name.
func unquote(q string) string {
	if s, err := strconv.Unquote(q); err == nil {
		return s
	}
	return q
}
