package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/views/query"
	"github.com/neardup/neardup/views/report"
	"github.com/neardup/neardup/views/serve"
)

// queryMain is "runner query": Broder's queries against a finished output.
func queryMain(ctx context.Context, args []string, w io.Writer) error {
	fs := flag.NewFlagSet("query", flag.ContinueOnError)
	from := fs.String("from", "", "a finished neardup output folder")
	url := fs.String("url", "", "the document with this URL: its cluster and every member")
	textFile := fs.String("text-file", "", "a page's text: the indexed documents it resembles or is contained in")
	htmlFile := fs.String("html-file", "", "a page's HTML, its text extracted as the run extracted its pages'")
	threshold := fs.Float64("threshold", 0.5, "--text-file, --html-file: list documents whose resemblance, or containment of the page, is at least this")
	limit := fs.Int("limit", 20, "--text-file, --html-file: list at most this many documents (0: all)")
	exact := fs.Bool("exact", false, "also the exact resemblance and containments over the full shingle sets, reading the texts from the input files")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	given := 0
	for _, s := range []string{*url, *textFile, *htmlFile} {
		if s != "" {
			given++
		}
	}
	if *from == "" || given != 1 || fs.NArg() > 0 {
		return usage("query needs --from (a finished output) and one of --url, --text-file or --html-file")
	}
	if *threshold < 0 || *threshold > 1 {
		return usage("--threshold %v: want a value in [0, 1]", *threshold)
	}
	ix, err := query.Open(ctx, *from)
	if err != nil {
		return err
	}
	if ix.Note != "" {
		fmt.Fprintf(os.Stderr, "neardup: %s\n", ix.Note)
	}
	if *url != "" {
		answers, err := ix.URL(ctx, *url, *exact)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(w, answers)
		}
		for _, a := range answers {
			printURLAnswer(w, a, *exact)
		}
		return nil
	}
	page := query.Page{}
	name := *textFile
	if *htmlFile != "" {
		name, page.HTML = *htmlFile, true
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	page.Content = string(b)
	matches, err := ix.Text(ctx, page, *threshold, *limit, *exact)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if *asJSON {
		if matches == nil {
			matches = []query.Match{}
		}
		return printJSON(w, matches)
	}
	fmt.Fprintf(w, "neardup: %d indexed documents resemble %s or contain it at %v or more\n", len(matches), name, *threshold)
	printSimilar(w, len(matches), func(i int) (query.Doc, query.Similarity) { return matches[i].Doc, matches[i].Similarity }, *exact, "page")
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printURLAnswer(w io.Writer, a query.URLAnswer, exact bool) {
	d := a.Doc
	fmt.Fprintf(w, "neardup: doc %d, %s: sweep %s, %s, %d tokens, row %d of %s\n", d.DocID, d.URL, d.Sweep, d.Status, d.Tokens, d.SourceRow, d.SourceFile)
	if len(d.Chain) > 0 {
		fmt.Fprintf(w, "neardup: redirects: %s\n", chainText(d))
	}
	if a.Cluster == nil {
		fmt.Fprintf(w, "neardup: in no cluster")
		if d.Reason != "" {
			fmt.Fprintf(w, ": %s", d.Reason)
		}
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "neardup: cluster %d of %d documents", a.Cluster.ClusterID, a.Cluster.Size)
	if d.JoinedBy != "" {
		fmt.Fprintf(w, ", in it by %s", d.JoinedBy)
	}
	if a.Kept != nil {
		fmt.Fprintf(w, "; kept: doc %d, %s", a.Kept.DocID, a.Kept.URL)
	}
	fmt.Fprintln(w)
	if d.Status == tables.StatusRedirect {
		// Its body, the crawler's stub, is not compared with anything.
		fmt.Fprintf(w, "neardup: the cluster's members (a redirect's body is not compared):\n")
		for _, m := range a.Members {
			kept := ""
			if m.Kept {
				kept = ", kept"
			}
			fmt.Fprintf(w, "  doc %d, by %s%s: %q\n", m.DocID, m.JoinedBy, kept, m.URL)
		}
		return
	}
	printSimilar(w, len(a.Members), func(i int) (query.Doc, query.Similarity) { return a.Members[i].Doc, a.Members[i].Similarity }, exact, "queried document")
}

// chainText is a redirect's chain as one line: each URL with the
// document there, if any, and its status.
func chainText(d query.Doc) string {
	var b strings.Builder
	b.WriteString(d.URL)
	for _, h := range d.Chain {
		fmt.Fprintf(&b, " -> %s", h.URL)
		if h.DocID != nil {
			fmt.Fprintf(&b, " (doc %d, %s)", *h.DocID, h.Status)
		} else {
			b.WriteString(" (no document)")
		}
	}
	return b.String()
}

// printSimilar prints documents and their similarity to the query (what
// "query" names it) as a table.
func printSimilar(w io.Writer, n int, at func(int) (query.Doc, query.Similarity), exact bool, what string) {
	fmt.Fprintf(w, "neardup: contained: the share of the document's shingles in the %s's; contains: the share of the %s's in the document (estimated from the sketches%s)\n",
		what, what, map[bool]string{true: "; exact: over the full shingle sets", false: ""}[exact])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "doc\tkept\tresemblance\tcontained\tcontains\t"
	if exact {
		head += "exact resemblance\texact contained\texact contains\t"
	}
	fmt.Fprintln(tw, head+"  url")
	for i := range n {
		d, s := at(i)
		kept := ""
		if d.Kept {
			kept = "kept"
		}
		res := fmt.Sprintf("%.3f", s.Resemblance)
		if d.Status == tables.StatusRedirect {
			res = "-" // a redirect's body is not compared
		}
		line := fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t", d.DocID, kept, res, optional(s.InQuery), optional(s.OfQuery))
		if exact && s.Exact != nil {
			line += fmt.Sprintf("%.3f\t%.3f\t%.3f\t", s.Exact.Resemblance, s.Exact.InQuery, s.Exact.OfQuery)
		}
		fmt.Fprintln(tw, line+"  "+strconv.Quote(d.URL))
	}
	tw.Flush()
}

func optional(x *float64) string {
	if x == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *x)
}

// serveMain is "runner serve": the web app over a finished output, until
// interrupted.
func serveMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	from := fs.String("from", "", "a finished neardup output folder")
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (localhost only unless told otherwise)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *from == "" || fs.NArg() > 0 {
		return usage("serve needs --from (a finished output)")
	}
	ix, err := query.Open(ctx, *from)
	if err != nil {
		return err
	}
	if ix.Note != "" {
		fmt.Fprintf(os.Stderr, "neardup: %s\n", ix.Note)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(os.Stderr, "neardup: serving %s on http://%s/ (Ctrl-C stops)\n", *from, *addr)
	return serve.Serve(ctx, *addr, ix)
}

// reportMain is "runner report": one self-contained HTML page of a
// finished output, written whole or not at all.
func reportMain(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	from := fs.String("from", "", "a finished neardup output folder")
	out := fs.String("output", "", "the HTML file to write")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *from == "" || *out == "" || fs.NArg() > 0 {
		return usage("report needs --from (a finished output) and --output (an HTML file)")
	}
	var b bytes.Buffer
	if err := report.Write(ctx, *from, &b); err != nil {
		return err
	}
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		os.Remove(tmp)
		return err
	}
	fmt.Fprintf(os.Stderr, "neardup: report of %s in %s (%d KB)\n", *from, *out, b.Len()>>10)
	return nil
}

// parseFlags parses a view command's flags. --help prints them on stdout
// and returns flag.ErrHelp, which main turns into exit status 0; any
// other error is a usage error.
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(os.Stdout, "usage: runner %s [flags]\n", fs.Name())
		fs.SetOutput(os.Stdout)
		fs.PrintDefaults()
		return err
	}
	if err != nil {
		return usage("%v", err)
	}
	return nil
}

// redirectNow is the document doc of the output dir when it is a
// redirect (--redirect-column), with its chain; ok is false otherwise, or
// when the output cannot be queried.
func redirectNow(ctx context.Context, dir string, doc int64) (query.Doc, bool) {
	if m, err := output.ReadManifest(ctx, dir); err != nil || m.Settings["redirect_column"] == "" {
		return query.Doc{}, false
	}
	ix, err := query.Open(ctx, dir)
	if err != nil {
		return query.Doc{}, false
	}
	d, ok, err := ix.Doc(ctx, doc)
	return d, ok && err == nil && d.Status == tables.StatusRedirect
}
