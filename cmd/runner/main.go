// Command runner runs neardup: it finds near-duplicate documents in Parquet
// crawl dumps with Broder et al.'s shingling and clustering, and writes
// Parquet tables of the clusters.
//
//	go run ./cmd/runner --input 'testdata/crawl/*.parquet' --output /tmp/neardup-out
//
// With "recluster" first it redoes only the final phase of an earlier run
// under another policy, from that run's tables:
//
//	go run ./cmd/runner recluster --from /tmp/neardup-out --policy containment:0.8 --output /tmp/contained
//
// With "update" first it deduplicates a new batch of input against a
// finished output, the index, and writes what a full run over both would:
//
//	go run ./cmd/runner update --from /tmp/neardup-out --input 'new/*.parquet' --output /tmp/neardup-out-2
//
// With "lost" first it says where the content of a URL absent from the
// latest sweep lives now:
//
//	go run ./cmd/runner lost --from /tmp/neardup-out-2 --url https://example.com/gone
//
// With "export" first it writes the deduplicated crawl: the rows of a
// finished run's input files that its docs table keeps, every column as
// it was, one file per input (see docs/export.md):
//
//	go run ./cmd/runner export --from /tmp/neardup-out --output /tmp/dedup
//
// With "query" first it answers from a finished output: a URL's cluster
// and the pages like it, or the indexed pages a given page resembles:
//
//	go run ./cmd/runner query --from /tmp/neardup-out --url https://example.com/a
//	go run ./cmd/runner query --from /tmp/neardup-out --text-file page.txt --exact
//
// With "report" first it writes one self-contained HTML page of a
// finished output: its accounting, plots of the cluster sizes and of the
// pairs' resemblance, duplicates per host and the largest clusters:
//
//	go run ./cmd/runner report --from /tmp/neardup-out --output report.html
//
// With "publish" first it finishes the publication of a run whose
// launcher died, or whose moves failed, once its tables were proven:
//
//	go run ./cmd/runner publish --output /tmp/neardup-out
//
// With "serve" first it serves a small web app over a finished output on
// localhost: search, clusters by size, and two pages side by side:
//
//	go run ./cmd/runner serve --from /tmp/neardup-out
//
// It runs on the embedded Prism runner unless Beam's --runner flag says
// otherwise; every Beam flag (--runner, --endpoint, --environment_type, ...)
// passes through.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/clustering/clusters"
	"github.com/neardup/neardup/internal/memlimit"
	"github.com/neardup/neardup/internal/progress"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/transforms"
)

// run is the command line's settings: one flag per declaration of
// package settings, which gives each its name, default, help and the
// commands that take it.
var run settings.Run

// commands are the command words that take the run's flags, as package
// settings names them.
var commands = map[string]int{"recluster": settings.Recluster, "update": settings.Update, "lost": settings.Lost, "export": settings.Export}

// invoked is the command word this invocation began with (recluster,
// update, lost, export), before main takes it out of os.Args; "" for a full run.
var invoked = func() string {
	if _, ok := commands[arg(1)]; ok {
		return arg(1)
	}
	return ""
}()

// commandWord is invoked followed by a space, or "".
func commandWord() string {
	if invoked == "" {
		return ""
	}
	return invoked + " "
}

// command is what this invocation runs: 0 for a full run, or
// settings.Recluster, Update, Lost or Export.
func command() int { return commands[invoked] }

func init() {
	run.Register(flag.CommandLine)
	flag.Usage = func() { printUsage(command()) }
}

// setMemoryLimit sets the Go heap's soft limit of --memory-limit
// (memlimit), before beam.Init: a worker process of a cluster runner
// re-enters main there, without the launcher's flags, so it takes auto
// from its own machine.
func setMemoryLimit() {
	if _, err := memlimit.Apply(run.MemoryLimit); err != nil {
		fmt.Fprintln(os.Stderr, "neardup:", err)
		os.Exit(2)
	}
}

// printUsage prints the help of command cmd, grouped: on stdout when it
// was asked for (--help), else on stderr after a usage error.
func printUsage(cmd int) {
	if !helpAsked(os.Args[1:]) {
		// After a usage error the flag package has said what was wrong.
		fmt.Fprintf(os.Stderr, "neardup: runner %s--help lists the flags\n", commandWord())
		return
	}
	w := os.Stdout
	fmt.Fprint(w, `usage:
  runner --input GLOBS --output DIR [flags]          a full run
  runner recluster --from DIR --output DIR [flags]   phase 4 again, under another policy
  runner update --from DIR --input GLOBS --output DIR [flags]
                                                     new input deduplicated against an output
  runner lost --from DIR --url URL                   where a URL absent from the latest sweep went
  runner export --from DIR --output DIR [flags]      the deduplicated crawl: the kept rows of the
                                                     run's input (--drop, --add-columns, --sweep; docs/export.md)
  runner query --from DIR (--url URL | --text-file F | --html-file F) [--exact] [--json]
  runner report --from DIR --output report.html
  runner serve --from DIR [--addr 127.0.0.1:8080]
  runner group --input results.parquet --rank-column C --output DIR
  runner publish --output DIR                        finish a publication that stopped midway
(runner COMMAND --help lists a command's flags)
`)
	settings.PrintHelp(w, cmd)
	fmt.Fprintf(w, "\nBeam's flags (--runner, --endpoint, --environment_type, ...) pass through; see docs/cluster.md.\n")
}

// helpAsked reports whether args ask for help.
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "-help", "--help", "--h":
			return true
		}
	}
	return false
}

func main() {
	views := map[string]func(context.Context, []string) error{
		"query":  func(ctx context.Context, args []string) error { return queryMain(ctx, args, os.Stdout) },
		"report": reportMain,
		"serve":  serveMain,
		"group":  groupMain,
		// publish needs Beam's filesystems (gs://, s3://), which this
		// binary registers (io/beamfs, through pipelines), not Beam.
		"publish": publishMain,
	}
	if view := views[arg(1)]; view != nil {
		if err := view(context.Background(), os.Args[2:]); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return // the help was asked for, and printed
			}
			fmt.Fprintln(os.Stderr, "neardup:", err)
			if errors.Is(err, errUsage) {
				os.Exit(2)
			}
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "lost" {
		os.Args = append(os.Args[:1], os.Args[2:]...)
		flag.Parse()
		setMemoryLimit()
		beam.Init()
		if err := lost(context.Background(), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "neardup:", err)
			if errors.Is(err, errUsage) {
				os.Exit(2)
			}
			os.Exit(1)
		}
		return
	}
	recluster := len(os.Args) > 1 && os.Args[1] == "recluster"
	update := len(os.Args) > 1 && os.Args[1] == "update"
	exporting := len(os.Args) > 1 && os.Args[1] == "export"
	if recluster || update || exporting {
		os.Args = append(os.Args[:1], os.Args[2:]...)
	}
	// Beam's worker mode re-enters main with its own flags: parse, then
	// hand over to beam.Init before anything else happens.
	flag.Parse()
	setMemoryLimit()
	beam.Init()
	logs := quietLogs()

	ctx := context.Background()
	if exporting {
		os.Exit(exportMain(ctx, logs, os.Stderr))
	}
	var m *output.Manifest
	var err error
	if recluster {
		var opt pipelines.ReclusterOptions
		if opt, err = reclusterOptions(); err == nil {
			m, err = pipelines.Recluster(ctx, opt)
		}
	} else {
		var opt pipelines.Options
		if opt, err = options(command()); err == nil {
			if update {
				m, err = pipelines.Update(ctx, pipelines.UpdateOptions{From: run.From, Options: opt})
			} else {
				m, err = pipelines.Run(ctx, opt)
			}
		}
	}
	if errors.Is(err, errUsage) {
		fmt.Fprintln(os.Stderr, "neardup:", err)
		fmt.Fprintf(os.Stderr, "neardup: runner %s--help lists the flags\n", commandWord())
		os.Exit(2)
	}
	if errors.Is(err, pipelines.ErrDryRun) {
		fmt.Fprintln(os.Stderr, "neardup:", err)
		return
	}
	if err != nil {
		// Not log.Fatal: Beam routes package log through its own logger,
		// which would bury the one line users need among INFO records.
		logs.fail(err)
		os.Exit(1)
	}
	c := m.Counts
	fmt.Printf("neardup: %d documents (%d ok, %d too short, %d empty) in %d files, %.1f MB\n",
		c["docs"], c["docs_ok"], c["docs_too_short"], c["docs_empty"], len(m.Inputs), float64(m.InputBytes)/1e6)
	switch {
	case recluster:
		fmt.Printf("neardup: reclustered %s under %s: %d identical copies, %d linked pairs\n",
			m.ReclusterFrom, m.Settings["policy"], c["identical_skipped"], c["links"])
	case update:
		fmt.Printf("neardup: updated %s: %d pairs counted with new documents, %d linked in all\n",
			m.UpdatedFrom, c["pairs"], c["links"])
	default:
		fmt.Printf("neardup: %d identical groups (%d copies skipped), %d pairs counted, %d linked\n",
			c["identical_groups"], c["identical_skipped"], c["pairs"], c["links"])
	}
	if kind, at, _ := settings.VerifiedAt(m.Settings["verify"]); kind != "" && !recluster {
		how := "verified on their documents' whole texts"
		if kind == settings.VerifyDense {
			how = "settled on denser samples of their documents"
		}
		fmt.Printf("neardup: %d pairs too near the threshold to tell %s (%s)\n",
			c["pairs_verified"]+c["pairs_verify_pruned"], how, at)
	}
	fmt.Print(uncertainWarning(c["links_uncertain"], c["links"]))
	fmt.Printf("neardup: %d clusters holding %d documents, largest %d\n", c["clusters"], c["clustered_docs"], c["largest_cluster"])
	if c["redirects"] > 0 {
		fmt.Printf("neardup: %d redirects: %d joined their pages' clusters (%d pages alone until then made one), %d alone: %d to URLs not in the input, %d in cycles, %d longer than 8, %d to empty pages\n",
			c["redirects"], c["redirects_joined"], c["clusters_of_redirects"], c["redirects"]-c["redirects_joined"],
			c["redirects_outside"], c["redirect_cycles"], c["redirects_too_long"], c["redirects_to_empty"])
	}
	// Input rows from the input's Parquet footers, docs rows from the
	// published docs shards' footers: Publish has checked they agree.
	fmt.Printf("neardup: accounting: %d input rows = %d docs rows = %d clustered + %d alone + %d empty or rejected\n",
		c["input_rows"], c["docs_written"], c["docs_in_clusters"], c["docs_alone"], c["docs_empty_or_rejected"])
	for _, b := range m.BadFiles {
		where := "whole file"
		if b.RowGroup >= 0 {
			where = fmt.Sprintf("row group %d, %d rows rejected", b.RowGroup, b.Rows)
		}
		fmt.Printf("neardup: skipped %s (%s): %s\n", b.Path, where, b.Error)
	}
	if step, n := largestGroup(m.LargestGroupBytes); n > 0 && run.Verbose {
		fmt.Printf("neardup: largest group %.1f MB (%s; every keyed step's in the manifest, largest_group_bytes)\n", float64(n)/1e6, step)
	}
	if line := readsLine(m); line != "" && run.Verbose {
		fmt.Println(line)
	}
	fmt.Printf("neardup: %.1fs; tables in %s\n", m.WallSeconds, shown(run.Output))
	sweep := ""
	if update {
		sweep = run.Sweep // the new crawl's rows
	}
	if err := dedupAfter(ctx, os.Stdout, sweep); err != nil {
		logs.fail(err)
		os.Exit(1)
	}
	logs.succeeded()
}

// readsLine is the summary of what the run read (the manifest's reads):
// each kind's megabytes, and the whole against the input's bytes, which on
// a cluster is what the object store is paid for.
func readsLine(m *output.Manifest) string {
	var total store.Reads
	var parts []string
	for _, k := range transforms.ReadKinds {
		r, ok := m.Reads[k]
		if !ok {
			continue
		}
		total.Add(r)
		parts = append(parts, fmt.Sprintf("%s %.1f MB", k, float64(r.Bytes)/1e6))
	}
	if total.Requests == 0 || m.InputBytes == 0 {
		return ""
	}
	return fmt.Sprintf("neardup: read %.1f MB in %d requests, %.2fx the input's %.1f MB (%s)",
		float64(total.Bytes)/1e6, total.Requests, float64(total.Bytes)/float64(m.InputBytes), float64(m.InputBytes)/1e6, strings.Join(parts, ", "))
}

// largestGroup is the keyed step with the largest group, and its bytes
// (the first step by name among equals).
func largestGroup(groups map[string]int64) (string, int64) {
	var step string
	var most int64
	for _, s := range slices.Sorted(maps.Keys(groups)) {
		if groups[s] > most {
			step, most = s, groups[s]
		}
	}
	return step, most
}

// errUsage marks an error in what the user asked for.
var errUsage = settings.ErrUsage

// arg is the i-th command-line argument, or "".
func arg(i int) string {
	if i < len(os.Args) {
		return os.Args[i]
	}
	return ""
}

// usage is a usage error (settings.Usagef): main exits 2 and points at
// the help.
var usage = settings.Usagef

// given collects the flags the user set, and records them with neardup's
// own for the manifest.
func given() (set map[string]bool, flags map[string]string) {
	set = map[string]bool{}
	flags = map[string]string{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true; flags[f.Name] = f.Value.String() })
	return set, flags
}

// refuse is the error for a flag the command cmd does not take, if one
// was given.
func refuse(set map[string]bool, cmd int, why string) error {
	for _, s := range settings.Declarations {
		if set[s.Name] && !s.Takes(cmd) {
			if cmd == 0 {
				return usage("a full run does not take --%s (see runner --help)", s.Name)
			}
			return usage("%s does not take --%s%s", invoked, s.Name, why)
		}
	}
	return nil
}

func reclusterOptions() (pipelines.ReclusterOptions, error) {
	var opt pipelines.ReclusterOptions
	set, flags := given()
	if err := refuse(set, settings.Recluster, ": it reuses the sketches and pairs of --from"); err != nil {
		return opt, err
	}
	if run.From == "" || run.Output == "" {
		return opt, usage("recluster needs --from and --output")
	}
	if err := run.Resolve(set); err != nil {
		return opt, err
	}
	if err := checkDedupOutput(context.Background()); err != nil {
		return opt, err
	}
	mode, err := progressMode()
	if err != nil {
		return opt, err
	}
	return pipelines.ReclusterOptions{From: run.From, Output: run.Output, Policy: run.Policy, Flags: flags, Overwrite: run.Overwrite, Progress: mode,
		Components: run.Components, ComponentRounds: run.ComponentRounds, Keep: run.Keep, Centered: run.Centered, Tables: run.Tables, LostMatches: run.LostMatches}, nil
}

// progressMode is --progress for stderr.
func progressMode() (progress.Mode, error) {
	m, err := progress.ParseMode(run.Progress, os.Stderr)
	if err != nil {
		return m, usage("--progress %v", err)
	}
	return m, nil
}

// options are a full run's (cmd 0) or an update's (settings.Update).
func options(cmd int) (pipelines.Options, error) {
	var opt pipelines.Options
	set, flags := given()
	if set["from"] && cmd == 0 {
		return opt, usage("--from is for recluster and update: runner recluster --from DIR ... or runner update --from DIR ...")
	}
	if err := refuse(set, cmd, ""); err != nil {
		return opt, err
	}
	if cmd == settings.Update && run.From == "" {
		return opt, usage("update needs --from, the finished output to update")
	}
	if run.Input == "" || run.Output == "" {
		return opt, usage("--input and --output are required")
	}
	if err := run.Resolve(set); err != nil {
		return opt, err
	}
	if err := checkDedupOutput(context.Background()); err != nil {
		return opt, err
	}
	mode, err := progressMode()
	if err != nil {
		return opt, err
	}
	// The manifest records every neardup flag, and Beam's only where set.
	for _, s := range settings.Declarations {
		if s.Takes(cmd) {
			flags[s.Name] = flag.Lookup(s.Name).Value.String()
		}
	}
	return pipelines.Options{
		Input:         run.Input,
		Output:        run.Output,
		Flags:         flags,
		Overwrite:     run.Overwrite,
		Progress:      mode,
		Config:        transforms.Config{Config: run.Config, Plumbing: transforms.Plumbing{Placement: transforms.Placement{Partitions: run.Partitions}}},
		MaxGroupBytes: run.MaxGroupBytes,
	}, nil
}

// lost prints where the content of --url, absent from the latest sweep of
// --from, lives now.
func lost(ctx context.Context, w io.Writer) error {
	if run.From == "" || run.URL == "" {
		return usage("lost needs --from (a finished output) and --url")
	}
	rows, seen, err := pipelines.Lost(ctx, run.From, run.URL)
	if err != nil {
		return err
	}
	if seen == nil {
		return fmt.Errorf("%s was never seen in %s", run.URL, run.From)
	}
	if len(rows) == 0 {
		fmt.Fprintf(w, "neardup: %s is not lost: seen in sweeps %s to %s, last as doc %d\n", seen.URL, seen.FirstSweep, seen.LastSweep, seen.LastDocID)
		if d, ok := redirectNow(ctx, run.From, seen.LastDocID); ok {
			// Its page has moved: Zhu et al.'s third case.
			fmt.Fprintf(w, "neardup: it redirects now: %s\n", chainText(d))
		}
		return nil
	}
	r := rows[0]
	fmt.Fprintf(w, "neardup: %s was last seen in sweep %s (doc %d) and is absent from the latest\n", r.URL, r.LastSweep, r.DocID)
	if r.FoundDocID == nil {
		if r.ClusterID == nil {
			fmt.Fprintf(w, "neardup: its content is in no cluster: not found\n")
		} else {
			fmt.Fprintf(w, "neardup: its cluster %d has no document in the latest sweep: not found\n", *r.ClusterID)
		}
		return nil
	}
	for _, r := range rows {
		if r.Resemblance == nil { // a redirect: its body is not compared
			fmt.Fprintf(w, "neardup: found at %s (doc %d), where its redirects lead\n", *r.FoundURL, *r.FoundDocID)
			continue
		}
		fmt.Fprintf(w, "neardup: found at %s (doc %d), resemblance %.3f\n", *r.FoundURL, *r.FoundDocID, *r.Resemblance)
	}
	return nil
}

// uncertainWarning is the closing summary's warning when more than one
// link in twenty was taken on a sketch estimate within
// clusters.UncertainZ standard errors of the threshold (too few sampled
// shingles to tell), as a line, or "" when there is nothing to warn of.
func uncertainWarning(uncertain, links int64) string {
	if uncertain == 0 || uncertain*20 <= links {
		return ""
	}
	return fmt.Sprintf("neardup: warning: %d of the %d links (%.0f%%) rest on sketch estimates within %.1f standard errors of the threshold, too few samples to tell; --verify=dense (the default under a resemblance policy) settles them on denser samples, --verify=uncertain on the whole texts (docs/sketches.md)\n",
		uncertain, links, 100*float64(uncertain)/float64(links), clusters.UncertainZ)
}
