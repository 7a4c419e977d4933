package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/neardup/neardup/io/output"
)

// pathRow is a row of a path crawl.
type pathRow struct {
	URL  string `parquet:"url"`
	Text string `parquet:"text"`
}

// writePath writes a path crawl of n pages to file: page i is words
// [i*shift, i*shift+words) of one stream of distinct pseudo-words (with
// accented and Cyrillic letters, as real pages carry), so each page
// overlaps the next by words-shift words and the one after by less: at
// 300 words shifted by 60, neighbours resemble each other about 0.6 and
// pages two apart about 0.4, and the links form one component of n pages
// that is a path, the worst case of chaining.
func writePath(file string, n, words, shift int, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 0x9a7))
	letters := []rune("abcdefghijklmnopqrstuvwxyzéèüöçñжщыд")
	stream := make([]string, (n-1)*shift+words)
	for i := range stream {
		w := make([]rune, 5+rng.IntN(6))
		for k := range w {
			w[k] = letters[rng.IntN(len(letters))]
		}
		stream[i] = string(w)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	pw := parquet.NewGenericWriter[pathRow](f, parquet.Compression(&zstd.Codec{}), parquet.PageBufferSize(1<<20))
	rows := make([]pathRow, 0, 1000)
	for i := range n {
		rows = append(rows, pathRow{URL: fmt.Sprintf("https://path.test/%d", i), Text: strings.Join(stream[i*shift:i*shift+words], " ")})
		if len(rows) == cap(rows) || i == n-1 {
			if _, err := pw.Write(rows); err != nil {
				return err
			}
			rows = rows[:0]
			if err := pw.Flush(); err != nil { // a row group per 1,000 pages
				return err
			}
		}
	}
	if err := pw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// centeredMain is "bench centered": cmd/runner over path crawls of each
// size (writePath), with --clusters=components and with
// --clusters=centered, printing each run's wall time and phase 4's, and
// how centered grows with the size (issue 40: within 1.5x of components at
// 30,000 pages, linear from 10,000 to 100,000).
//
//	go run ./cmd/bench centered [--sizes 10000,30000,100000] [--runner-args "--sketch=min:100 --verify=none"] [--repeat 1]
func centeredMain(args []string) error {
	fs := flag.NewFlagSet("centered", flag.ExitOnError)
	sizes := fs.String("sizes", "10000,30000,100000", "comma-separated page counts")
	runnerArgs := fs.String("runner-args", "--sketch=min:100 --verify=none", "flags of every run")
	repeat := fs.Int("repeat", 1, "keep the fastest of N runs of each")
	fs.Parse(args)
	tmp, bin, err := tempRunner("centered")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Printf("### A path of pages, `%s`\n\n", *runnerArgs)
	fmt.Println("| pages | links | components: wall s (phase 4 s) | centered: wall s (phase 4 s) | centered / components | clusters (centered) | centered s per 10k pages |")
	fmt.Println("|---:|---:|---|---|---:|---:|---:|")
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 2 {
			return fmt.Errorf("--sizes: %q", s)
		}
		in := filepath.Join(tmp, fmt.Sprintf("path-%d.parquet", n))
		if err := writePath(in, n, 300, 60, 1); err != nil {
			return err
		}
		var wall [2]float64
		var phase4 [2]float64
		var man [2]*output.Manifest
		for i, clu := range []string{"components", "centered"} {
			out := filepath.Join(tmp, "out")
			args := append([]string{"--input", in, "--output", out, "--overwrite", "--progress", "never", "--clusters", clu}, strings.Fields(*runnerArgs)...)
			for r := range max(*repeat, 1) {
				fmt.Fprintf(os.Stderr, "bench centered: %d pages, %s, run %d\n", n, clu, r+1)
				u, err := measure(bin, args, filepath.Join(tmp, "runner.log"))
				if err != nil {
					return err
				}
				if r == 0 || u.wall < wall[i] {
					wall[i] = u.wall
					if man[i], err = output.ReadManifest(context.Background(), out); err != nil {
						return err
					}
					phase4[i] = float64(man[i].WallMS["phase4_cluster"]) / 1000
				}
			}
		}
		c := man[1].Counts
		fmt.Printf("| %s | %s | %.1f (%.1f) | %.1f (%.1f) | %.2fx | %s | %.2f |\n", group(int64(n)), group(c["links"]),
			wall[0], phase4[0], wall[1], phase4[1], wall[1]/wall[0], group(c["clusters"]), wall[1]/float64(n)*1e4)
		os.Remove(in)
	}
	return nil
}
