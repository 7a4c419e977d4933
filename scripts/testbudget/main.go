// Command testbudget reads go test's output and holds each test package
// to a time budget: it prints every package's time, slowest first, and
// exits 1 naming each package over the budget, or any that failed or
// whose line it cannot read. CI pipes the README's test command through
// it, so a package that grows slow is seen in the commit that made it
// slow, not when go test's own 10-minute limit kills it.
//
//	go test ./... 2>&1 | tee test.log
//	go run ./scripts/testbudget -budget 150s < test.log
//
// It reads the lines go test prints for each package ("ok  \tPKG\t12.3s",
// "FAIL\tPKG\t600.2s", "?   \tPKG\t[no test files]"), so the time is
// the test binary's own, without compiling.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// result is one package's closing line.
type result struct {
	pkg     string
	ok      bool
	elapsed time.Duration
}

// parse reads go test's package lines from r, ignoring everything else
// (test output, -v lines, build errors before a FAIL line).
func parse(r io.Reader) ([]result, error) {
	var out []result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		status := strings.TrimSpace(f[0])
		if status != "ok" && status != "FAIL" || len(f) < 2 {
			continue
		}
		// "FAIL\tPKG [build failed]": no tab before the bracket.
		if pkg, ok := strings.CutSuffix(f[1], " [build failed]"); ok && status == "FAIL" {
			out = append(out, result{pkg: pkg})
			continue
		}
		if pkg, ok := strings.CutSuffix(f[1], " [setup failed]"); ok && status == "FAIL" {
			out = append(out, result{pkg: pkg})
			continue
		}
		if len(f) < 3 {
			continue
		}
		pkg, when := strings.TrimSpace(f[1]), strings.TrimSpace(f[2])
		// "0.5s", or "(cached)" when go test reused a result.
		d, err := time.ParseDuration(strings.Fields(when)[0])
		if err != nil {
			if strings.HasPrefix(when, "(cached)") {
				d = 0
			} else {
				return nil, fmt.Errorf("cannot read the time of %q: %v", sc.Text(), err)
			}
		}
		out = append(out, result{pkg: pkg, ok: status == "ok", elapsed: d})
	}
	return out, sc.Err()
}

// over returns the messages for the packages that failed or ran past
// budget.
func over(rs []result, budget time.Duration) []string {
	var msgs []string
	for _, r := range rs {
		switch {
		case !r.ok:
			msgs = append(msgs, fmt.Sprintf("%s failed (%.1fs)", r.pkg, r.elapsed.Seconds()))
		case r.elapsed > budget:
			msgs = append(msgs, fmt.Sprintf("%s took %.1fs, over its budget of %.0fs on 2 cores: make its tests cheaper or split the package (docs/development.md)", r.pkg, r.elapsed.Seconds(), budget.Seconds()))
		}
	}
	return msgs
}

func main() {
	budget := flag.Duration("budget", 150*time.Second, "the most a test package may take")
	flag.Parse()
	rs, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbudget:", err)
		os.Exit(2)
	}
	if len(rs) == 0 {
		fmt.Fprintln(os.Stderr, "testbudget: no package lines in go test's output")
		os.Exit(2)
	}
	sorted := slices.Clone(rs)
	slices.SortStableFunc(sorted, func(a, b result) int { return int(b.elapsed - a.elapsed) })
	var sum time.Duration
	fmt.Printf("test package times (budget %.0fs each):\n", budget.Seconds())
	for _, r := range sorted {
		sum += r.elapsed
		fmt.Printf("%8.1fs  %s\n", r.elapsed.Seconds(), r.pkg)
	}
	fmt.Printf("%8.1fs  in all, %d packages\n", sum.Seconds(), len(rs))
	if msgs := over(rs, *budget); len(msgs) > 0 {
		for _, m := range msgs {
			fmt.Println("testbudget:", m)
		}
		os.Exit(1)
	}
}
