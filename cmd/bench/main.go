// Command bench measures neardup end to end: it generates synthetic crawls
// with a fixed mix of duplicates (gen.go) and takes the real corpora in
// ../shared/data when they are there, runs cmd/runner on each in a
// subprocess (Beam on the embedded Prism runner) and a plain-Go reference
// that does the same work in one process (floor.go), and prints a markdown
// table of time, throughput, CPU time, time per phase, peak memory and
// shuffle volume, then how the pipeline compares with the floor and how
// time grows with the input. BENCHMARKS.md holds a run and what it means.
//
//	go run ./cmd/bench                       # 10k and 100k documents, and the real corpora
//	go run ./cmd/bench --sizes 10000,100000,1000000 --out /tmp/neardup-crawls --repeat 2
//	go run ./cmd/bench --sizes 10000 --text unicode --corpora deb-copyright,multilingual-docs
//	go run ./cmd/bench --sizes none          # the real corpora only
//	go run ./cmd/bench --sizes 300000,1500000 --text unicode --corpora none --out /tmp/bc   # 1 and 5 GB of text
//
// Run it from the module root: it builds ./cmd/runner. Flags:
//
//   - --sizes: comma-separated document counts of the synthetic crawls;
//     "none" or "" for none.
//   - --text ascii|unicode: the synthetic crawls' text. ascii (default):
//     pseudo-words in plain ASCII. unicode: what real pages carry, curly
//     quotes and apostrophes, dashes, no-break spaces, accented Latin
//     words, whole pages in Cyrillic, CJK and other scripts (gen.go), with
//     the same mix of duplicates.
//   - --corpora auto|none|NAME,...: the real corpora (Parquet tables in
//     ../shared/data relative to the module root, see corpusList); auto
//     (default) takes every one that is there, and says so in one line when
//     the folder is absent. A corpus's documents are its rows and its text
//     MB the bytes of the text (or HTML) column the runs read.
//   - --grown MB,...: real text grown from the corpora with edited copies
//     (scripts/growcorpus), measured like a corpus; kept under --out.
//     Mind that its 75 MB of rows are copied, 14 times for a gigabyte,
//     so its candidate pairs grow with the square of the copies.
//   - --runner-args: more flags for every pipeline run ("--tables=docs").
//   - --out (crawls, reused when already generated; default a temporary
//     folder), --floor (run the reference, default true), --keep (keep the
//     temporary folder), --seed, --repeat (keep the fastest of N runs),
//     --profile DIR (CPU profiles of extra, unmeasured runs), --components
//     (the pipeline's way to the components; the summary reports its
//     rounds, the records each shuffled and the most one worker held).
//
// A synthetic size of a million or more runs only if the size before it,
// scaled to 100,000 documents, took under two minutes and the crawl fits
// on disk and in memory.
//
// Hidden subcommands, used by the bench itself and for profiling (the
// column flags default to cmd/runner's):
//
//	bench floor --input GLOB --output DIR [--text-column C] [--html-column C] [--cpuprofile FILE]
//	bench pipeline --input GLOB --output DIR [--from INDEX] [--text-column C] [--html-column C] [--redirect-column C] [--sweep-date D] [--cpuprofile FILE] [--heapprofile FILE]   (pipelines.Run, or Update with --from, in-process)
//	bench gen --docs N --out DIR [--seed S] [--text ascii|unicode] [--cpuprofile FILE]
//	bench inputtext --input GLOB [--text-column C] [--html-column C]   (prints rows and text bytes)
//	bench update --input GLOB [--new-share 0.1] [--repeat 2] [--out DIR]   (runner update against a full run)
//	bench modes --input GLOB [--html-column C] [--threshold T] [--repeat N] [--modes NAME,...]   (each way of finding pairs: cost and finds)
//	bench centered [--sizes 10000,30000,100000] [--runner-args FLAGS] [--repeat N]   (centered clusters against components on a path of pages)
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/neardup/neardup/internal/memlimit"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/pipelines"
	"github.com/neardup/neardup/settings"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "floor":
			exit(floorMain(os.Args[2:]))
		case "pipeline":
			exit(pipelineMain(os.Args[2:]))
		case "gen":
			exit(genMain(os.Args[2:]))
		case "inputtext":
			exit(inputTextMain(os.Args[2:]))
		case "update":
			exit(updateMain(os.Args[2:]))
		case "query":
			exit(queryMain(os.Args[2:]))
		case "serve":
			exit(serveMain(os.Args[2:]))
		case "modes":
			exit(modesMain(os.Args[2:]))
		case "centered":
			exit(centeredMain(os.Args[2:]))
		}
	}
	exit(benchMain(os.Args[1:]))
}

func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// profiled runs fn with a CPU profile written to path, if path is set.
func profiled(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	err = fn()
	pprof.StopCPUProfile()
	return err
}

// atPeakHeap writes a heap profile to path each time the heap in use is
// a tenth above the most seen so far (checked twice a second), so the
// last one written is taken near the peak, until the function it returns
// is called. Nothing happens if path is empty.
func atPeakHeap(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		var most uint64
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse <= most+most/10 {
				continue
			}
			most = ms.HeapInuse
			if f, err := os.Create(path); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
				fmt.Fprintf(os.Stderr, "bench: heap profile at %.0f MB in use\n", float64(most)/1e6)
			}
		}
	}()
	return func() { close(done); <-finished }
}

func floorMain(args []string) error {
	fs := flag.NewFlagSet("floor", flag.ExitOnError)
	input := fs.String("input", "", "input glob")
	out := fs.String("output", "", "output folder")
	prof := fs.String("cpuprofile", "", "write a CPU profile here")
	textCol := fs.String("text-column", "text", "column with the document text")
	htmlCol := fs.String("html-column", "", "column with raw HTML, used instead of --text-column")
	fs.Parse(args)
	if *input == "" || *out == "" {
		return errors.New("floor needs --input and --output")
	}
	return profiled(*prof, func() error {
		res, err := runFloor(context.Background(), *input, *out, columnConfig(*textCol, *htmlCol), 0)
		if err == nil {
			fmt.Printf("floor: %d docs, %d clusters, %d links, %.1fs\n", res.Counts["docs"], res.Counts["clusters"], res.Counts["links"], res.WallSeconds)
		}
		return err
	})
}

// pipelineMain runs the pipeline in this process, as cmd/runner does with
// its default flags, so that it can be profiled; Beam's flags follow ours.
func pipelineMain(args []string) error {
	fs := flag.NewFlagSet("pipeline", flag.ExitOnError)
	input := fs.String("input", "", "input glob")
	out := fs.String("output", "", "output folder")
	prof := fs.String("cpuprofile", "", "write a CPU profile here")
	textCol := fs.String("text-column", "text", "column with the document text")
	htmlCol := fs.String("html-column", "", "column with raw HTML, used instead of --text-column")
	from := fs.String("from", "", "an index: run an update of it with --input instead of a full run")
	redirect := fs.String("redirect-column", "", "column of the URL a row redirects to (as the runner's flag)")
	sweep := fs.String("sweep-date", "2026-01-01", "the input's sweep, as the runner's flag (bench update's by default)")
	heap := fs.String("heapprofile", "", "write a heap profile here, taken when the heap was largest (checked twice a second)")
	verify := fs.String("verify", string(settings.VerifyNone), "the runner's --verify (auto: the runner's default; none: as the floor)")
	fs.Parse(args)
	if err := flag.CommandLine.Parse(fs.Args()); err != nil {
		return err
	}
	beam.Init()
	if *input == "" || *out == "" {
		return errors.New("pipeline needs --input and --output")
	}
	// As the runner's default --memory-limit=auto: a profile of the heap
	// that the runner would have, under the same limit.
	if _, err := memlimit.Apply("auto"); err != nil {
		return err
	}
	defer atPeakHeap(*heap)()
	return profiled(*prof, func() error {
		opt := pipelines.Options{Input: *input, Output: *out, Config: columnConfig(*textCol, *htmlCol), Flags: map[string]string{}, Overwrite: true}
		opt.Config.Sweep = *sweep
		opt.Config.Verify = settings.Verify(*verify)
		opt.Config.Columns.Redirect, opt.Config.Columns.URLRequired = *redirect, *redirect != ""
		run := pipelines.Run
		if *from != "" {
			run = func(ctx context.Context, opt pipelines.Options) (*output.Manifest, error) {
				return pipelines.Update(ctx, pipelines.UpdateOptions{From: *from, Options: opt})
			}
		}
		m, err := run(context.Background(), opt)
		if err == nil {
			fmt.Printf("pipeline: %d docs, %d clusters, %d links, %.1fs\n", m.Counts["docs"], m.Counts["clusters"], m.Counts["links"], m.WallSeconds)
		}
		return err
	})
}

func genMain(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	n := fs.Int("docs", 10000, "documents")
	out := fs.String("out", "", "root folder of generated crawls")
	seed := fs.Uint64("seed", 1, "generator seed")
	text := fs.String("text", textASCII, "the pages' text: ascii or unicode")
	prof := fs.String("cpuprofile", "", "write a CPU profile here")
	fs.Parse(args)
	if *out == "" {
		return errors.New("gen needs --out")
	}
	if err := checkTextMode(*text); err != nil {
		return err
	}
	return profiled(*prof, func() error {
		info, dir, err := ensureCrawl(*out, genConfig{Docs: *n, Seed: *seed, Text: *text})
		if err == nil {
			fmt.Println(describeCrawl(info, dir))
		}
		return err
	})
}

func describeCrawl(info crawlInfo, dir string) string {
	mb := float64(info.TextBytes) / 1e6
	how := fmt.Sprintf("generated in %.1fs (%.0f MB/s of text; %.1f CPU s, %.0f MB per CPU second)",
		info.GenSeconds, mb/info.GenSeconds, info.GenCPU, mb/info.GenCPU)
	if info.Reused {
		how = "reused"
	}
	return fmt.Sprintf("crawl %d docs (%s text): %.1f MB of text, %d files, %.1f MB of Parquet in %s, %s; kinds %v",
		info.Docs, info.textMode(), mb, len(info.Files), float64(info.FileBytes)/1e6, dir, how, info.Kinds)
}

// The bench does its own heavy work (generating crawls, reading corpora)
// in subprocesses too. Linux charges a child's ru_maxrss with the peak RSS
// of the process that spawned it (Go starts children with CLONE_VM, and
// exec records the shared address space's high-water mark), so a bench
// process that had grown would inflate every measured run's peak RSS.

// ensureCrawlIn is ensureCrawl in a subprocess (this binary's gen
// subcommand); it reads the crawl's description from its crawl.json.
func ensureCrawlIn(self, root string, cfg genConfig, tmp string) (crawlInfo, string, error) {
	dir := crawlDir(root, cfg.Docs, cfg.Seed, cfg.Text)
	logPath := filepath.Join(tmp, fmt.Sprintf("gen-%d-%s.log", cfg.Docs, textMode(cfg.Text)))
	if _, err := measure(self, []string{"gen", "--docs", strconv.Itoa(cfg.Docs), "--out", root, "--seed", strconv.FormatUint(cfg.Seed, 10),
		"--text", textMode(cfg.Text)}, logPath); err != nil {
		return crawlInfo{}, "", err
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		return crawlInfo{}, "", err
	}
	fmt.Fprint(os.Stderr, "bench: ", string(b))
	if b, err = os.ReadFile(filepath.Join(dir, infoFile)); err != nil {
		return crawlInfo{}, "", err
	}
	var info crawlInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return crawlInfo{}, "", fmt.Errorf("%s: %w", filepath.Join(dir, infoFile), err)
	}
	return info, dir, nil
}

// inputTextIn is inputText over a corpus in a subprocess (this binary's
// inputtext subcommand).
func inputTextIn(self string, c corpus, tmp string) (rows, bytes int64, err error) {
	logPath := filepath.Join(tmp, "inputtext-"+c.name+".log")
	args := []string{"inputtext", "--input", c.path}
	if c.html != "" {
		args = append(args, "--html-column", c.html)
	}
	if _, err := measure(self, args, logPath); err != nil {
		return 0, 0, err
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		return 0, 0, err
	}
	if _, err := fmt.Sscan(string(b), &rows, &bytes); err != nil {
		return 0, 0, fmt.Errorf("inputtext %s: %q: %w", c.path, b, err)
	}
	return rows, bytes, nil
}

// inputTextMain prints the rows of the input and the bytes of their text
// (or HTML) column: "ROWS BYTES".
func inputTextMain(args []string) error {
	fs := flag.NewFlagSet("inputtext", flag.ExitOnError)
	input := fs.String("input", "", "input glob")
	textCol := fs.String("text-column", "text", "column with the document text")
	htmlCol := fs.String("html-column", "", "column with raw HTML, used instead of --text-column")
	fs.Parse(args)
	if *input == "" {
		return errors.New("inputtext needs --input")
	}
	rows, bytes, err := inputText(context.Background(), *input, columnConfig(*textCol, *htmlCol).Columns)
	if err == nil {
		fmt.Println(rows, bytes)
	}
	return err
}

// run is one measured run.
type run struct {
	crawl      string // the crawl's label: synthetic-ascii, synthetic-unicode or a corpus's name
	synthetic  bool
	docs       int
	textMB     float64
	runner     string
	wall       float64 // seconds, as the bench saw it from outside
	cpu        float64 // user + system seconds of the process
	rssMB      float64
	phases     string
	shuffled   string
	clusters   int64
	links      int64
	outBytes   int64
	ufBytesPer float64
	textBytes  int64  // the floor's: text bytes it read
	components string // the pipeline's: how phase 4 found the components, and at what cost
}

const (
	runnerBeam  = "beam-prism"
	runnerFloor = "plain-go"
)

func benchMain(args []string) error {
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	sizesFlag := fs.String("sizes", "10000,100000", "comma-separated document counts of the synthetic crawls (1000000 allowed); none or '' for none")
	textFlag := fs.String("text", textASCII, "the synthetic crawls' text: ascii (pseudo-words in ASCII) or unicode (what real pages carry: typographic punctuation, accents, Cyrillic, CJK and other scripts)")
	corporaFlag := fs.String("corpora", "auto", "real corpora from ../shared/data: auto (every one there), none, or comma-separated names ("+strings.Join(corpusNames(), ", ")+")")
	outFlag := fs.String("out", "", "folder for the generated crawls, reused across runs (default: a temporary folder)")
	floor := fs.Bool("floor", true, "also run the plain-Go reference")
	keep := fs.Bool("keep", false, "keep the temporary folder (runner binary, outputs, logs, and crawls without --out)")
	seed := fs.Uint64("seed", 1, "generator seed")
	repeat := fs.Int("repeat", 1, "run the pipeline and the floor this many times per size and keep the fastest run")
	compsFlag := fs.String("components", "auto", "the pipeline's --components: auto, single or distributed")
	profDir := fs.String("profile", "", "also write CPU profiles of the floor and of the in-process pipeline for every size into this folder (extra, unmeasured runs)")
	grownFlag := fs.String("grown", "none", "comma-separated MB of real text grown from the corpora with edited copies (scripts/growcorpus; 1000,5000 for the 1 and 5 GB runs), kept under --out; none for none")
	runnerArgs := fs.String("runner-args", "", "more flags for every pipeline run, space-separated (--tables=docs, --memory-limit=off)")
	fs.Parse(args)
	if err := checkTextMode(*textFlag); err != nil {
		return fmt.Errorf("--text: %w", err)
	}
	var sizes []int
	for _, s := range strings.Split(*sizesFlag, ",") {
		if s = strings.TrimSpace(s); s == "" || s == "none" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 2000000 {
			return fmt.Errorf("--sizes: %q is not a document count in 1..2000000", s)
		}
		sizes = append(sizes, n)
	}
	var grown []float64
	for _, s := range strings.Split(*grownFlag, ",") {
		if s = strings.TrimSpace(s); s == "" || s == "none" {
			continue
		}
		mb, err := strconv.ParseFloat(s, 64)
		if err != nil || mb <= 0 {
			return fmt.Errorf("--grown: %q is not a size in MB", s)
		}
		grown = append(grown, mb)
	}
	extra := strings.Fields(*runnerArgs)
	tmp, err := os.MkdirTemp("", "neardup-bench-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintln(os.Stderr, "bench: keeping", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	crawls := *outFlag
	if crawls == "" {
		crawls = filepath.Join(tmp, "crawls")
	}
	if *profDir != "" {
		if err := os.MkdirAll(*profDir, 0o755); err != nil {
			return err
		}
	}

	root, err := moduleRoot()
	if err != nil {
		return err
	}
	corpora, corporaNote, err := findCorpora(root, *corporaFlag)
	if err != nil {
		return fmt.Errorf("--corpora: %w", err)
	}
	if corporaNote != "" {
		fmt.Fprintln(os.Stderr, "bench:", corporaNote)
	}
	for _, mb := range grown {
		c, err := growCorpus(root, crawls, mb)
		if err != nil {
			return fmt.Errorf("--grown: %w", err)
		}
		corpora = append(corpora, c)
	}
	if len(sizes) == 0 && len(corpora) == 0 {
		return errors.New("nothing to run: no --sizes and no corpora")
	}
	runnerBin := filepath.Join(tmp, "runner")
	fmt.Fprintln(os.Stderr, "bench: building ./cmd/runner")
	build := exec.Command("go", "build", "-o", runnerBin, "./cmd/runner")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/runner: %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}

	var runs []run
	var warnings, skipped []string
	if corporaNote != "" {
		skipped = append(skipped, corporaNote)
	}
	// measureTarget runs the pipeline and the floor on t, and CPU
	// profiles with --profile; it returns the pipeline's run and the first
	// pass's seconds, and adds the runs and any warning.
	measureTarget := func(t target) (br run, seconds float64, rss float64, err error) {
		br, first, err := bestOf(*repeat, func(i int) (run, error) { return t.pipeline(runnerBin, *compsFlag, extra, i) })
		if err != nil {
			return br, 0, 0, err
		}
		runs = append(runs, br)
		seconds, rss = first, br.rssMB
		if *floor {
			fl, first, err := bestOf(*repeat, func(i int) (run, error) { return t.floor(self, i) })
			if err != nil {
				return br, 0, 0, err
			}
			runs = append(runs, fl)
			seconds += first
			rss = max(rss, fl.rssMB)
			if fl.clusters != br.clusters || fl.links != br.links {
				w := fmt.Sprintf("WARNING: %s: the floor found %d clusters and %d linked pairs, the pipeline %d and %d: they did not do the same work",
					t.label(), fl.clusters, fl.links, br.clusters, br.links)
				fmt.Fprintln(os.Stderr, "bench:", w)
				warnings = append(warnings, w)
			}
			if fl.textBytes != t.textBytes {
				w := fmt.Sprintf("WARNING: %s: the floor read %d bytes of text, the bench measured %d", t.label(), fl.textBytes, t.textBytes)
				fmt.Fprintln(os.Stderr, "bench:", w)
				warnings = append(warnings, w)
			}
		}
		if *profDir != "" {
			fmt.Fprintf(os.Stderr, "bench: %s: profiling\n", t.label())
			for _, sub := range []string{"floor", "pipeline"} {
				prof := filepath.Join(*profDir, fmt.Sprintf("%s-%s.pprof", sub, t.key))
				out := filepath.Join(tmp, fmt.Sprintf("out-%s-%s-profile", t.key, sub))
				args := append([]string{sub, "--input", t.glob, "--output", out, "--cpuprofile", prof}, t.columnArgs()...)
				if _, err := measure(self, args, filepath.Join(tmp, fmt.Sprintf("%s-%s-profile.log", sub, t.key))); err != nil {
					return br, 0, 0, err
				}
				os.RemoveAll(out)
				fmt.Fprintf(os.Stderr, "bench: wrote %s (go tool pprof -top %s)\n", prof, prof)
			}
		}
		return br, seconds, rss, nil
	}

	synth := "synthetic-" + *textFlag
	var prev *sizeCost
	for _, n := range sizes {
		if prev != nil && n >= 1000000 {
			if why := tooBig(n, *prev, crawls); why != "" {
				msg := fmt.Sprintf("skipped %s documents: %s", group(int64(n)), why)
				fmt.Fprintln(os.Stderr, "bench:", msg)
				skipped = append(skipped, msg)
				continue
			}
		}
		cost := &sizeCost{docs: n}
		info, dir, err := ensureCrawlIn(self, crawls, genConfig{Docs: n, Seed: *seed, Text: *textFlag}, tmp)
		if err != nil {
			return err
		}
		cost.fileBytes, cost.seconds = info.FileBytes, info.GenSeconds
		t := target{crawl: synth, synthetic: true, key: fmt.Sprintf("%s-%d", synth, n), docs: n,
			textBytes: info.TextBytes, glob: crawlGlob(dir), tmp: tmp}
		br, seconds, rss, err := measureTarget(t)
		if err != nil {
			return err
		}
		cost.seconds += seconds
		cost.rssMB, cost.outBytes = rss, br.outBytes
		prev = cost
	}
	for _, c := range corpora {
		docs, text, err := inputTextIn(self, c, tmp)
		if err != nil {
			return fmt.Errorf("corpus %s: %w", c.name, err)
		}
		fmt.Fprintf(os.Stderr, "bench: corpus %s: %d rows, %.1f MB of %s in %.1f MB of Parquet\n",
			c.name, docs, float64(text)/1e6, c.columns().ContentColumn(), float64(fileSize(c.path))/1e6)
		t := target{crawl: c.name, key: c.name, docs: int(docs), textBytes: text, glob: c.path, tmp: tmp, html: c.html}
		if _, _, _, err := measureTarget(t); err != nil {
			return err
		}
	}

	fmt.Println(tableHeader)
	for _, r := range runs {
		fmt.Println(r.row())
	}
	fmt.Println()
	for _, line := range summary(runs) {
		fmt.Println(line)
	}
	for _, w := range append(warnings, skipped...) {
		fmt.Println(w)
	}
	return nil
}

// target is one crawl being measured: a synthetic size or a real corpus.
type target struct {
	crawl     string // label in the table
	synthetic bool
	key       string // in file names
	docs      int
	textBytes int64 // of the text (or HTML) column, as the runs read it
	glob      string
	tmp       string
	html      string // the HTML column, if the content is HTML
}

func (t target) label() string {
	if t.synthetic {
		return fmt.Sprintf("%s %s docs", t.crawl, group(int64(t.docs)))
	}
	return fmt.Sprintf("%s (%s docs)", t.crawl, group(int64(t.docs)))
}

func (t target) textMB() float64 { return float64(t.textBytes) / 1e6 }

// columnArgs are the runner's (and the bench subcommands') column flags
// for the target.
func (t target) columnArgs() []string {
	if t.html != "" {
		return []string{"--html-column", t.html}
	}
	return nil
}

// sizeCost is what measuring one size cost, to judge the next.
type sizeCost struct {
	docs      int
	seconds   float64 // one pass end to end: generation, one pipeline run, one floor run
	fileBytes int64   // the crawl on disk
	outBytes  int64   // the pipeline's output
	rssMB     float64 // the larger peak RSS of pipeline and floor
}

// bestOf runs fn n times and keeps the run with the least wall time: on a
// shared machine, the one least disturbed. It also returns the first run's
// wall time.
func bestOf(n int, fn func(i int) (run, error)) (best run, first float64, err error) {
	for i := range max(n, 1) {
		r, err := fn(i)
		if err != nil {
			return r, 0, err
		}
		if i == 0 {
			first = r.wall
		}
		if i == 0 || r.wall < best.wall {
			best = r
		}
	}
	return best, first, nil
}

// pipeline runs cmd/runner with its default flags (and the target's
// column flags, and extra) on the crawl.
func (t target) pipeline(runnerBin, comps string, extra []string, i int) (run, error) {
	out := filepath.Join(t.tmp, fmt.Sprintf("out-%s-beam", t.key))
	defer os.RemoveAll(out)
	fmt.Fprintf(os.Stderr, "bench: %s: running the pipeline\n", t.label())
	args := slices.Concat([]string{"--input", t.glob, "--output", out, "--components", comps}, t.columnArgs(), extra)
	u, err := measure(runnerBin, args, filepath.Join(t.tmp, fmt.Sprintf("runner-%s-%d.log", t.key, i)))
	if err != nil {
		return run{}, err
	}
	m, err := output.ReadManifest(context.Background(), out)
	if err != nil {
		return run{}, err
	}
	fmt.Fprintf(os.Stderr, "bench: %s: pipeline %.1fs (%.1f CPU s), peak RSS %.0f MB\n", t.label(), u.wall, u.cpu, u.rssMB)
	if m.Counts["docs"] != int64(t.docs) {
		return run{}, fmt.Errorf("%s: the pipeline read %d docs, the input has %d", t.label(), m.Counts["docs"], t.docs)
	}
	return run{crawl: t.crawl, synthetic: t.synthetic, docs: t.docs, textMB: t.textMB(), runner: runnerBeam, wall: u.wall, cpu: u.cpu, rssMB: u.rssMB,
		phases: pipelinePhases(m), shuffled: shuffled(m.Counts),
		clusters: m.Counts["clusters"], links: m.Counts["links"], outBytes: dirBytes(out), components: componentsCost(m)}, nil
}

// componentsCost is how phase 4 found the components and what it held:
// the way, and for the distributed one the records each round shuffled,
// the residual left to the finishing union-find and the most records one
// worker held in any step (for the single way: every link).
func componentsCost(m *output.Manifest) string {
	c := m.Counts
	s := fmt.Sprintf("%s: %s links, at most %s records on one worker", m.Settings["components"], group(c["links"]), group(c["components_max_worker_records"]))
	if m.Settings["components"] != "distributed" {
		return s
	}
	var rounds []string
	for i := 0; ; i++ {
		n, ok := c[fmt.Sprintf("components_round_%02d_records", i)]
		if !ok {
			break
		}
		rounds = append(rounds, group(n))
	}
	return s + fmt.Sprintf("; %d rounds shuffling %s records; %s residual edges", len(rounds), strings.Join(rounds, " / "), group(c["components_residual_edges"]))
}

// floor runs the plain-Go reference, this binary's floor subcommand.
func (t target) floor(self string, i int) (run, error) {
	out := filepath.Join(t.tmp, fmt.Sprintf("out-%s-floor", t.key))
	defer os.RemoveAll(out)
	fmt.Fprintf(os.Stderr, "bench: %s: running the floor\n", t.label())
	args := append([]string{"floor", "--input", t.glob, "--output", out}, t.columnArgs()...)
	u, err := measure(self, args, filepath.Join(t.tmp, fmt.Sprintf("floor-%s-%d.log", t.key, i)))
	if err != nil {
		return run{}, err
	}
	b, err := os.ReadFile(filepath.Join(out, floorResultFile))
	if err != nil {
		return run{}, err
	}
	var fr floorResult
	if err := json.Unmarshal(b, &fr); err != nil {
		return run{}, err
	}
	fmt.Fprintf(os.Stderr, "bench: %s: floor %.1fs (%.1f CPU s), peak RSS %.0f MB\n", t.label(), u.wall, u.cpu, u.rssMB)
	return run{crawl: t.crawl, synthetic: t.synthetic, docs: t.docs, textMB: t.textMB(), textBytes: fr.TextBytes, runner: runnerFloor, wall: u.wall, cpu: u.cpu, rssMB: u.rssMB,
		phases: floorPhaseString(fr.PhaseMS), shuffled: "—",
		clusters: fr.Counts["clusters"], links: fr.Counts["links"], ufBytesPer: fr.UFBytesPerID}, nil
}

// moduleRoot is the folder of the main module's go.mod.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run the bench inside the neardup module (it builds ./cmd/runner)")
	}
	return filepath.Dir(mod), nil
}

// usage is what a finished subprocess cost.
type usage struct {
	wall, cpu float64 // seconds
	rssMB     float64 // peak resident set size
}

// measure runs a command with its output in logPath and returns its wall
// and CPU time and peak resident set size.
func measure(bin string, args []string, logPath string) (usage, error) {
	log, err := os.Create(logPath)
	if err != nil {
		return usage{}, err
	}
	defer log.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return usage{}, err
	}
	// The child's own peak, VmHWM, read until it exits: wait4's maxrss
	// also counts the pages of this process that the fork copied before
	// the exec (seen: the same 1,591 MB for an update and a full run,
	// the size of the rows bench update holds).
	hwm := make(chan int64)
	stop := make(chan struct{})
	go func() {
		var peak int64
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if kb := vmHWM(cmd.Process.Pid); kb > peak {
				peak = kb
			}
			select {
			case <-stop:
				hwm <- peak
				return
			case <-t.C:
			}
		}
	}()
	err = cmd.Wait()
	close(stop)
	peakKB := <-hwm
	wall := time.Since(start).Seconds()
	if err != nil {
		return usage{}, fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), strings.Join(args, " "), err, tail(logPath, 20))
	}
	u := usage{wall: wall, cpu: (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), rssMB: float64(peakKB) / 1024}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && peakKB == 0 {
		u.rssMB = float64(ru.Maxrss) / 1024 // KB on Linux; no /proc
	}
	return u, nil
}

// vmHWM is the peak resident set of process pid in KB, from
// /proc/PID/status (0 when it cannot be read, as after the process ends).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

func dirBytes(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// tooBig says why a crawl of n docs should not be run, judging from the
// last size measured, or "" if it can be: one pass over it (generation,
// pipeline, floor), scaled to 100,000 documents, must have taken under two
// minutes; the crawl and the pipeline's output, scaled linearly, must fit
// in half the free disk, and the peak RSS in 3/4 of the memory.
func tooBig(n int, prev sizeCost, dir string) string {
	scale := float64(n) / float64(prev.docs)
	if per := prev.seconds * 100000 / float64(prev.docs); per > 120 {
		return fmt.Sprintf("one pass over %s documents took %.0fs end to end, %.0fs per 100,000 (over 2 minutes), so %s would take about %.0f minutes",
			group(int64(prev.docs)), prev.seconds, per, group(int64(n)), prev.seconds*scale/60)
	}
	var st syscall.Statfs_t
	for d := dir; ; d = filepath.Dir(d) {
		if syscall.Statfs(d, &st) == nil || d == filepath.Dir(d) {
			break
		}
	}
	free := float64(st.Bavail) * float64(st.Bsize)
	if need := float64(prev.fileBytes+prev.outBytes) * scale; need > free/2 {
		return fmt.Sprintf("the crawl and outputs need about %.1f GB, more than half the %.1f GB free", need/1e9, free/1e9)
	}
	if mem := memTotalMB(); mem > 0 && prev.rssMB*scale > 0.75*mem {
		return fmt.Sprintf("peak RSS scaled from %s documents (%.0f MB) would be about %.1f GB, over 3/4 of the %.1f GB of memory",
			group(int64(prev.docs)), prev.rssMB, prev.rssMB*scale/1e3, mem/1e3)
	}
	return ""
}

func memTotalMB() float64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// The pipeline's phases as the manifest names them, with short labels.
var pipelinePhaseNames = [][2]string{
	{"phase1_sketch", "sketch"},
	{"identical", "ident"},
	{"phase2_shingle_merge", "merge"},
	{"phase3_pair_count", "pairs"},
	{"phase4_cluster", "cluster"},
	{"output", "out"},
}

// pipelinePhases is "sketch 3.1/5.9 · ident 0.2 · ...": each phase's
// wall-clock window in seconds and, where it differs by 10% or more, the
// time its DoFns were busy, summed over workers.
func pipelinePhases(m *output.Manifest) string {
	var parts []string
	for _, p := range pipelinePhaseNames {
		wall, busy := float64(m.WallMS[p[0]])/1000, float64(m.BusyMS[p[0]])/1000
		s := fmt.Sprintf("%s %.1f", p[1], wall)
		if b := fmt.Sprintf("%.1f", busy); b != fmt.Sprintf("%.1f", wall) && math.Abs(busy-wall) >= 0.1*wall {
			s += "/" + b
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

func floorPhaseString(ms map[string]int64) string {
	var parts []string
	for _, p := range floorPhases {
		parts = append(parts, fmt.Sprintf("%s %.1f", p, float64(ms[p])/1000))
	}
	return strings.Join(parts, " · ")
}

// shuffled sums the manifest's shuffled_<stream>_elements and _bytes and
// names the biggest stream by bytes.
func shuffled(counts map[string]int64) string {
	var elements, bytes int64
	type stream struct {
		name            string
		elements, bytes int64
	}
	var streams []stream
	for k, v := range counts {
		name, ok := strings.CutPrefix(k, "shuffled_")
		if !ok {
			continue
		}
		if name, ok = strings.CutSuffix(name, "_elements"); ok {
			elements += v
			streams = append(streams, stream{name, v, counts["shuffled_"+name+"_bytes"]})
		} else if _, ok := strings.CutSuffix(name, "_bytes"); ok {
			bytes += v
		}
	}
	if len(streams) == 0 {
		return "—"
	}
	sort.Slice(streams, func(i, j int) bool { return streams[i].bytes > streams[j].bytes })
	big := streams[0]
	return fmt.Sprintf("%s el, %s · max %s %s el, %s", group(elements), mb(bytes), big.name, group(big.elements), mb(big.bytes))
}

func mb(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }

// group writes n with thousands separators.
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

const tableHeader = "| crawl | documents | text MB | runner | wall s | MB/s | CPU s | time per phase, s (wall/busy) | peak RSS MB | RSS per text byte | elements shuffled (total · biggest stream) | clusters · linked pairs |\n" +
	"|---|---:|---:|---|---:|---:|---:|---|---:|---:|---|---:|"

func (r run) row() string {
	return fmt.Sprintf("| %s | %s | %.1f | %s | %.1f | %.1f | %.1f | %s | %.0f | %.2f | %s | %s · %s |",
		r.crawl, group(int64(r.docs)), r.textMB, r.runner, r.wall, r.textMB/r.wall, r.cpu, r.phases, r.rssMB, r.rssMB/r.textMB, r.shuffled, group(r.clusters), group(r.links))
}

// summary compares the pipeline with the floor on each crawl, and each
// synthetic size with the one before and with the one a tenth its size (the
// "10x documents costs at most 11x the time" target).
func summary(runs []run) []string {
	by := map[string][]run{}
	floorOf := map[string]run{}
	for _, r := range runs {
		if r.synthetic {
			by[r.runner] = append(by[r.runner], r)
		}
		if r.runner == runnerFloor {
			floorOf[r.name()] = r
		}
	}
	var lines []string
	var parts []string
	for _, b := range runs {
		if fl, ok := floorOf[b.name()]; ok && b.runner == runnerBeam {
			parts = append(parts, fmt.Sprintf("%s %.2fx (CPU %.2fx, RSS %.1fx; %.2f against %.2f bytes of RSS per byte of text)",
				b.name(), b.wall/fl.wall, b.cpu/fl.cpu, b.rssMB/fl.rssMB, b.rssMB/b.textMB, fl.rssMB/fl.textMB))
		}
	}
	if len(parts) > 0 {
		lines = append(lines, "pipeline/floor wall time: "+strings.Join(parts, "; "))
	}
	for _, name := range []string{runnerBeam, runnerFloor} {
		rs := by[name]
		var parts []string
		for j := 1; j < len(rs); j++ {
			for i := range j {
				a, b := rs[i], rs[j]
				tenfold := b.docs == 10*a.docs
				if i != j-1 && !tenfold {
					continue
				}
				part := fmt.Sprintf("%s→%s docs: %.1fx docs, %.1fx wall time, %.1fx CPU time, %.1fx RSS",
					group(int64(a.docs)), group(int64(b.docs)), float64(b.docs)/float64(a.docs), b.wall/a.wall, b.cpu/a.cpu, b.rssMB/a.rssMB)
				if tenfold {
					verdict := "meets"
					if b.wall/a.wall > 11 {
						verdict = "misses"
					}
					part += fmt.Sprintf(" (%s the 11x target in wall time)", verdict)
				}
				parts = append(parts, part)
			}
		}
		if len(parts) > 0 {
			lines = append(lines, fmt.Sprintf("growth, %s, %s: %s", name, rs[0].crawl, strings.Join(parts, "; ")))
		}
	}
	for _, r := range runs {
		if r.components != "" {
			lines = append(lines, fmt.Sprintf("components, %s: %s", r.name(), r.components))
		}
	}
	for _, r := range runs {
		if r.runner == runnerFloor {
			lines = append(lines, fmt.Sprintf("union-find, %s: %.1f bytes per linked document (unionfind.UF.BytesPerID, same sizing as the pipeline)", r.name(), r.ufBytesPer))
		}
	}
	return lines
}

// name is the run's crawl in the summary: "synthetic-ascii 10,000 docs" or
// the corpus's name.
func (r run) name() string {
	if r.synthetic {
		return fmt.Sprintf("%s %s docs", r.crawl, group(int64(r.docs)))
	}
	return r.crawl
}
