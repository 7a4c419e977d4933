package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
)

// benchModes are the ways of finding pairs "bench modes" compares, each
// as cmd/runner's flags.
var benchModes = []struct{ name, flags string }{
	{"mod:25 (default)", ""},
	{"min:100", "--sketch=min:100"},
	{"supershingle min:100", "--sketch=min:100 --mode=supershingle --verify=sketch"},
	{"mod:25 --verify=bloom", "--verify=bloom"},
	{"mod:25 --verify=exact", "--verify=exact"},
	{"supershingle --verify=exact", "--sketch=min:100 --mode=supershingle --verify=exact"},
	{"chunks:256 --verify=bloom", "--features=chunks:256 --verify=bloom"},
	{"--mode=exact", "--mode=exact"},
}

// modesMain is "bench modes": cmd/runner over one input with each way of
// finding pairs, the cost of each (wall and CPU time, peak memory, what
// went through the shuffles) and what it found (candidate pairs, links,
// clusters), as a markdown table.
//
//	go run ./cmd/bench modes --input ../shared/data/multilingual-docs.parquet [--repeat 2] [--html-column html]
func modesMain(args []string) error {
	fs := flag.NewFlagSet("modes", flag.ExitOnError)
	input := fs.String("input", "", "input glob")
	htmlCol := fs.String("html-column", "", "column with raw HTML")
	threshold := fs.String("threshold", "0.5", "resemblance threshold of every mode")
	repeat := fs.Int("repeat", 1, "keep the fastest of N runs of each mode")
	only := fs.String("modes", "", "comma-separated names of the modes to run (default all)")
	fs.Parse(args)
	if *input == "" {
		return fmt.Errorf("modes needs --input")
	}
	tmp, bin, err := tempRunner("modes")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Printf("### %s at resemblance %s\n\n", *input, *threshold)
	fmt.Println("| mode | wall s | CPU s | peak RSS MB | shuffled (elements, MB) | candidate pairs | verified · pruned | links | clusters |")
	fmt.Println("|---|---:|---:|---:|---|---:|---:|---:|---:|")
	for _, m := range benchModes {
		if *only != "" && !strings.Contains(","+*only+",", ","+m.name+",") {
			continue
		}
		out := filepath.Join(tmp, "out")
		args := []string{"--input", *input, "--output", out, "--overwrite", "--progress", "never", "--threshold", *threshold, "--sweep-date", "2026-01-01"}
		if *htmlCol != "" {
			args = append(args, "--html-column", *htmlCol)
		}
		args = append(args, strings.Fields(m.flags)...)
		var best usage
		var man *output.Manifest
		for i := range max(*repeat, 1) {
			fmt.Fprintf(os.Stderr, "bench modes: %s, run %d\n", m.name, i+1)
			u, err := measure(bin, args, filepath.Join(tmp, "runner.log"))
			if err != nil {
				return err
			}
			if i == 0 || u.wall < best.wall {
				best = u
				if man, err = output.ReadManifest(context.Background(), out); err != nil {
					return err
				}
			}
		}
		c := man.Counts
		// The links as data: the runner's metrics can come back short.
		pairs, err := tables.ReadTable[tables.Pair](context.Background(), out, tables.PairsTable)
		if err != nil {
			return err
		}
		var links int64
		for _, p := range pairs {
			if p.Linked {
				links++
			}
		}
		var el, by int64
		for k, v := range c {
			if strings.HasPrefix(k, "shuffled_") && strings.HasSuffix(k, "_elements") {
				el += v
			} else if strings.HasPrefix(k, "shuffled_") && strings.HasSuffix(k, "_bytes") {
				by += v
			}
		}
		fmt.Printf("| %s | %.1f | %.1f | %.0f | %s, %s | %s | %s · %s | %s | %s |\n", m.name, best.wall, best.cpu, best.rssMB,
			group(el), mb(by), group(c["pairs"]), group(c["pairs_verified"]), group(c["pairs_verify_pruned"]), group(links), group(c["clusters"]))
	}
	return nil
}

// tempRunner makes a temporary folder for a bench subcommand and builds
// cmd/runner of the module into it, returning both.
func tempRunner(name string) (tmp, bin string, err error) {
	root, err := moduleRoot()
	if err != nil {
		return "", "", err
	}
	if tmp, err = os.MkdirTemp("", "neardup-bench-"+name+"-"); err != nil {
		return "", "", err
	}
	bin = filepath.Join(tmp, "runner")
	if err := buildRunner(root, bin); err != nil {
		os.RemoveAll(tmp)
		return "", "", err
	}
	return tmp, bin, nil
}

// buildRunner builds cmd/runner of the module at root into bin.
func buildRunner(root, bin string) error {
	build := exec.Command("go", "build", "-o", bin, "./cmd/runner")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	return build.Run()
}
