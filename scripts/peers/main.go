// Command peers runs neardup and the Python deduplicators it is measured
// against side by side on one corpus, and prints, for each, the wall
// time, the peak RSS summed over its whole process tree, and same-cluster
// precision and recall against the exact join's clusters (cmd/quality's
// truth, at the same threshold and w = 10).
//
//	go run ./scripts/peers --input ../shared/data/multilingual-docs.parquet
//	go run ./scripts/peers --input '/tmp/bc/grown-1000MB/*.parquet' --tools neardup,datatrove,rensa
//	go run ./scripts/peers --input '/tmp/fam/*.parquet' --tools neardup,datatrove,rensa --families 'family-(\d+)-copy-'
//
// The peers (datatrove 0.10.1, datasketch 2.0.0, text-dedup 0.4.1,
// rensa 0.5.0) come from PyPI, pinned with everything they pull in by
// requirements.txt, into a virtual environment made once per machine under
// ~/.cache/neardup-peers; text-dedup 0.4.1 needs Python 3.12 or later
// (python3.12, python3.13, or pyenv's, or $NEARDUP_PEERS_PYTHON).
//
// What runs: cmd/quality --shards writes the corpus's documents with
// shingles as JSON lines shards (the peers' input; neardup reads the
// corpus itself); each tool runs alone, one after the other, with the
// same number of workers, and writes its clusters (peers.py says how
// each is run); cmd/quality --clusters scores them all against the exact
// join. The exact join and the shards are not in any tool's time.
//
// A tool that fails (a peer killed for memory, say) gets a line saying so,
// with its time and peak RSS until then; the others are scored all the
// same, and the command exits non-zero. Two runs cannot share a --work
// folder: the second stops at once rather than remove the first's outputs.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	input     = flag.String("input", "", "the corpus: a Parquet glob (text column \"text\")")
	toolsFlag = flag.String("tools", "neardup,datatrove,datasketch,rensa,text-dedup", "tools to run, comma-separated")
	threshold = flag.Float64("threshold", 0.5, "resemblance threshold of every tool and of the truth")
	workers   = flag.Int("workers", runtime.NumCPU(), "worker processes of the peers that have them")
	shardN    = flag.Int("shards", 8, "JSON lines files the peers read (datatrove runs one task per file)")
	workFlag  = flag.String("work", "", "working folder, kept (default: a temporary one, removed)")
	families  = flag.String("families", "", "cmd/quality's --families: a regular expression over the input's ids naming planted families, each scored by its most documents in one cluster")
	require   = flag.Float64("require", 0, "fail unless neardup's precision and recall both reach this (CI's check)")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "peers: "+format+"\n", args...)
}

// measured is one tool's run.
type measured struct {
	tool     string
	wall     time.Duration
	peakRSS  int64 // bytes, summed over the process tree at its largest
	clusters string
	err      error // why the tool did not finish; its clusters are not scored
}

func run() error {
	if *input == "" {
		return errors.New("give --input")
	}
	tools := strings.Split(*toolsFlag, ",")
	for _, t := range tools {
		if t != "neardup" && !isPeer(t) {
			return fmt.Errorf("unknown tool %q (tools: neardup, %s)", t, strings.Join(peers, ", "))
		}
	}
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	work := *workFlag
	if work == "" {
		if work, err = os.MkdirTemp("", "neardup-peers-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	work, _ = filepath.Abs(work)
	unlock, err := lock(work)
	if err != nil {
		return err
	}
	defer unlock()
	bin := filepath.Join(work, "bin")
	for _, cmd := range []string{"runner", "quality"} {
		if err := command(root, "go", "build", "-o", filepath.Join(bin, cmd), "./cmd/"+cmd).Run(); err != nil {
			return fmt.Errorf("go build ./cmd/%s: %w", cmd, err)
		}
	}
	python := ""
	for _, t := range tools {
		if isPeer(t) {
			if python, err = venv(root); err != nil {
				return err
			}
			break
		}
	}
	quality := filepath.Join(bin, "quality")
	shards := filepath.Join(work, "shards")
	if python != "" {
		if err := command(root, quality, "--input", *input, "--shards", shards, "--shard-count", strconv.Itoa(*shardN)).Run(); err != nil {
			return fmt.Errorf("writing the shards: %w", err)
		}
	}

	var runs []measured
	for _, t := range tools {
		var cmd *exec.Cmd
		m := measured{tool: t}
		if t == "neardup" {
			m.clusters = filepath.Join(work, "neardup")
			os.RemoveAll(m.clusters)
			cmd = command(root, filepath.Join(bin, "runner"), "--input", *input, "--output", m.clusters,
				"--threshold", strconv.FormatFloat(*threshold, 'g', -1, 64))
		} else {
			m.clusters = filepath.Join(work, t+".csv")
			cmd = command(root, python, filepath.Join(root, "scripts/peers/peers.py"), t, "--shards", shards,
				"--work", filepath.Join(work, t), "--out", m.clusters,
				"--threshold", strconv.FormatFloat(*threshold, 'g', -1, 64), "--workers", strconv.Itoa(*workers))
		}
		logPath := filepath.Join(work, t+".log")
		log, err := os.Create(logPath)
		if err != nil {
			return err
		}
		cmd.Stdout, cmd.Stderr = log, log
		progress("running %s (log: %s)", t, logPath)
		m.wall, m.peakRSS, m.err = measure(cmd)
		log.Close()
		if m.err != nil {
			m.err = fmt.Errorf("%w%s (log: %s)", m.err, killedFor(m.err), logPath)
			if tail, _ := os.ReadFile(logPath); len(tail) > 0 {
				os.Stderr.Write(tail[max(0, len(tail)-4000):])
			}
			progress("%s failed after %.1f s, peak RSS %.0f MB: %v", t, m.wall.Seconds(), float64(m.peakRSS)/1e6, m.err)
		} else {
			progress("%s: %.1f s, peak RSS %.0f MB", t, m.wall.Seconds(), float64(m.peakRSS)/1e6)
		}
		runs = append(runs, m)
	}

	scores := filepath.Join(work, "scores.jsonl")
	args := []string{"--input", *input, "--modes", "none", "--thresholds", strconv.FormatFloat(*threshold, 'g', -1, 64), "--scores-out", scores}
	for _, m := range runs {
		if m.err == nil {
			args = append(args, "--clusters", m.tool+"="+m.clusters)
		}
	}
	if *families != "" {
		args = append(args, "--families", *families)
	}
	score := command(root, quality, args...)
	score.Stdout = nil // its table is printed below, with the times
	if err := score.Run(); err != nil {
		return fmt.Errorf("scoring: %w", err)
	}
	rows, err := readScores(scores)
	if err != nil {
		return err
	}
	fmt.Printf("## %s: same-cluster precision and recall against the exact join (threshold %g, w=10), %d workers\n\n", *input, *threshold, *workers)
	byTool := map[string]scoreRow{}
	for _, r := range rows {
		byTool[r.Tool] = r
	}
	fmt.Println("| tool | wall s | peak RSS MB | clusters | largest | same-cluster pairs | precision | recall |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
	if r, ok := byTool["the exact join"]; ok {
		fmt.Printf("| the exact join (truth) | | | %d | %d | %d | | |\n", r.Clusters, r.Largest, r.TruthPairs)
	}
	var failed []string
	for _, m := range runs {
		if m.err != nil {
			fmt.Printf("| %s | failed after %.1f | %.0f | %v | | | | |\n", m.tool, m.wall.Seconds(), float64(m.peakRSS)/1e6, m.err)
			failed = append(failed, m.tool)
			continue
		}
		r, ok := byTool[m.tool]
		if !ok {
			return fmt.Errorf("%s: no score in %s", m.tool, scores)
		}
		fmt.Printf("| %s | %.1f | %.0f | %d | %d | %d | %s | %s |\n", m.tool, m.wall.Seconds(), float64(m.peakRSS)/1e6,
			r.Clusters, r.Largest, r.FoundPairs, ratio(r.BothPairs, r.FoundPairs), ratio(r.BothPairs, r.TruthPairs))
		if m.tool == "neardup" && *require > 0 {
			p, rc := float64(r.BothPairs)/float64(max(r.FoundPairs, 1)), float64(r.BothPairs)/float64(max(r.TruthPairs, 1))
			if p < *require || rc < *require {
				return fmt.Errorf("neardup's precision %.3f or recall %.3f is below --require %g", p, rc, *require)
			}
		}
	}
	if *families != "" {
		fmt.Printf("\n| tool | family | documents | median resemblance | in one cluster | share |\n|---|---|---:|---:|---:|---:|\n")
		for _, r := range rows {
			for _, f := range r.Families {
				fmt.Printf("| %s | %s | %d | %.3f | %d | %.4f |\n", r.Tool, f.Name, f.Size, f.Median, f.Largest, float64(f.Largest)/float64(max(f.Size, 1)))
			}
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s did not finish (the table above scores the others)", strings.Join(failed, ", "))
	}
	return nil
}

// killedFor says which signal ended a process, and that SIGKILL is most
// often the kernel's out-of-memory killer.
func killedFor(err error) string {
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return ""
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	if ws.Signal() == syscall.SIGKILL {
		return " (SIGKILL: most often the out-of-memory killer; see dmesg)"
	}
	return " (" + ws.Signal().String() + ")"
}

// lock takes work for this run, or says that another run holds it: the
// neardup output folder inside is removed before each run, which would
// take a live run's files from under it.
func lock(work string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(work, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s is in use by another scripts/peers run (%v): wait for it or give another --work", work, err)
	}
	return func() { f.Close() }, nil
}

// peers are the tools peers.py runs.
var peers = []string{"datatrove", "datasketch", "rensa", "text-dedup"}

func isPeer(t string) bool { return slices.Contains(peers, t) }

func ratio(num, den int64) string {
	if den == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(num)/float64(den))
}

// scoreRow is a line of cmd/quality --scores-out.
type scoreRow struct {
	Tool       string `json:"tool"`
	TruthPairs int64  `json:"truth_pairs"`
	FoundPairs int64  `json:"found_pairs"`
	BothPairs  int64  `json:"both_pairs"`
	Clusters   int    `json:"clusters"`
	Largest    int    `json:"largest"`
	Families   []struct {
		Name    string  `json:"name"`
		Size    int     `json:"size"`
		Largest int     `json:"largest"`
		Median  float64 `json:"median_resemblance"`
	} `json:"families"`
}

func readScores(path string) ([]scoreRow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rows []scoreRow
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r scoreRow
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// command is name with args, run from dir, its output on stderr.
func command(dir, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	return cmd
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run from inside the neardup module")
	}
	return filepath.Dir(mod), nil
}

// venv returns the Python of the peers' virtual environment, making it
// from requirements.txt when the cache has none for this file's hash.
func venv(root string) (string, error) {
	reqs := filepath.Join(root, "scripts/peers/requirements.txt")
	data, err := os.ReadFile(reqs)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	cache := os.Getenv("NEARDUP_PEERS_CACHE")
	if cache == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		cache = filepath.Join(home, ".cache", "neardup-peers")
	}
	dir := filepath.Join(cache, "venv-"+hex.EncodeToString(sum[:])[:12])
	python := filepath.Join(dir, "bin", "python")
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return python, nil
	}
	base, err := findPython()
	if err != nil {
		return "", err
	}
	progress("making %s with %s from scripts/peers/requirements.txt", dir, base)
	os.RemoveAll(dir)
	if err := command(root, base, "-m", "venv", dir).Run(); err != nil {
		return "", fmt.Errorf("%s -m venv: %w", base, err)
	}
	if err := command(root, python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r", reqs).Run(); err != nil {
		return "", fmt.Errorf("pip install -r %s: %w", reqs, err)
	}
	return python, os.WriteFile(filepath.Join(dir, ".complete"), nil, 0o644)
}

// findPython finds a Python of 3.12 or later: $NEARDUP_PEERS_PYTHON,
// python3.12 or python3.13 on PATH, or one of pyenv's versions.
func findPython() (string, error) {
	candidates := []string{os.Getenv("NEARDUP_PEERS_PYTHON")}
	for _, name := range []string{"python3.13", "python3.12", "python3"} {
		if p, err := exec.LookPath(name); err == nil {
			candidates = append(candidates, p)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		pyenv, _ := filepath.Glob(filepath.Join(home, ".pyenv/versions/3.1[2-9]*/bin/python3"))
		candidates = append(candidates, pyenv...)
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		out, err := exec.Command(c, "-c", "import sys; print(sys.version_info >= (3, 12))").Output()
		if err == nil && strings.TrimSpace(string(out)) == "True" {
			return c, nil
		}
	}
	return "", errors.New("text-dedup 0.4.1 needs Python 3.12 or later, and none was found (set NEARDUP_PEERS_PYTHON)")
}

// measure runs cmd to its end and returns its wall time and the largest
// RSS its process tree held at once, sampled every 50 ms from /proc.
func measure(cmd *exec.Cmd) (time.Duration, int64, error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peak int64
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return time.Since(start), peak, err
		case <-tick.C:
			peak = max(peak, treeRSS(cmd.Process.Pid))
		}
	}
}

// treeRSS is the resident memory of pid and all its descendants, in bytes.
func treeRSS(pid int) int64 {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp := parentOf(p); pp > 0 {
			children[pp] = append(children[pp], p)
		}
	}
	var total int64
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = append(queue[1:], children[p]...)
		total += rssOf(p)
	}
	return total
}

// parentOf reads the parent PID from /proc/PID/stat (the field after the
// parenthesised command name, which may itself hold spaces).
func parentOf(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(data[i+1:]))
	if len(fields) < 2 {
		return 0
	}
	pp, _ := strconv.Atoi(fields[1])
	return pp
}

// rssOf reads VmRSS from /proc/PID/status, in bytes.
func rssOf(pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
