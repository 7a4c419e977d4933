// Command sketchstudy is the offline study of issue 25: how a sketch's
// precision and recall against the exact join behave on short documents,
// and what a floor of k values or the exact verification of the
// uncertain pairs costs and buys. It runs no Beam: it shingles every
// document as cmd/quality's exact side does (canon.Tokens,
// shingle.Fingerprints, the default seed unless -seed, w=10), joins the whole sets exactly
// (simjoin), and simulates the pipeline's phases 1-3 for each sketch:
// the identical-content shortcut, the inverted index with values in more
// than --max-shingle-docs documents dropped (their count kept in the
// sketch sizes), the pairs sharing a value, and the estimate phase 3
// computes from the shared values, their ranks and the sketch sizes.
//
//	go run ./scripts/sketchstudy                      # the shared corpora
//	go run ./scripts/sketchstudy -mode sim            # bias and spread on random sets
//	go run ./scripts/sketchstudy -mode big -big '/tmp/study-1g/*.parquet'
//
// It prints markdown on stdout and progress on stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/similarity/sketch"
)

var (
	modeFlag = flag.String("mode", "accuracy", "accuracy (precision and recall on the corpora), sim (random sets) or big (cost proxies on --big)")
	only     = flag.String("corpora", "", "comma-separated corpus names to run (default: all the standard ones)")
	data     = flag.String("data", "../shared/data", "folder of the shared corpora")
	thresh   = flag.Float64("t", 0.5, "resemblance threshold")
	words    = flag.Int("w", 10, "words per shingle")
	maxDocs  = flag.Int("max-shingle-docs", 1000, "sketch values in more documents than this are dropped, as the pipeline's default")
	zsFlag   = flag.String("z", "1,2,3", "verify the pairs within z standard errors of the threshold, for each z")
	bigGlob  = flag.String("big", "", "big mode: the corpus glob")
	sample   = flag.Float64("sample", 0.05, "big mode: share of documents whose pairs are enumerated")
	trials   = flag.Int("trials", 2000, "sim mode: pairs per cell")
	seed     = flag.Uint64("seed", fingerprint.DefaultSeed, "fingerprint seed (another seed is another random permutation of the shingles)")
)

func main() {
	flag.Parse()
	var err error
	switch *modeFlag {
	case "accuracy":
		err = accuracy(context.Background())
	case "sim":
		simulate()
	case "big":
		err = big(context.Background())
	default:
		err = fmt.Errorf("unknown -mode %q", *modeFlag)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sketchstudy:", err)
		os.Exit(1)
	}
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sketchstudy: "+format+"\n", args...)
}

func standardCorpora() []corpus {
	p := func(n string) string { return filepath.Join(*data, n) }
	return []corpus{
		{name: "crawl", glob: "testdata/crawl/*.parquet"},
		{name: "multilingual-docs", glob: p("multilingual-docs.parquet")},
		{name: "deb-manpages", glob: p("deb-manpages.parquet")},
		{name: "deb-copyright", glob: p("deb-copyright.parquet")},
		{name: "cc-main", glob: p("cc-main-2019-30-sample.parquet")},
		{name: "python-docs (main)", glob: p("python-3.11-docs-html.parquet"), html: true, extract: "main"},
		{name: "python-docs (visible)", glob: p("python-3.11-docs-html.parquet"), html: true, extract: "visible"},
		{name: "clough-stevenson", glob: p("clough-stevenson.parquet")},
	}
}

func studyStrategies() []strategy {
	s := []strategy{modStrategy(25), floorStrategy(25, 0)}
	for _, k := range []int{8, 16, 32, 64, 100} {
		s = append(s, floorStrategy(25, k))
	}
	// A lower rate with a floor: fewer values on long documents, to pay
	// for the floor's on short ones.
	for _, k := range []int{16, 32, 64} {
		s = append(s, floorStrategy(50, k))
	}
	return append(s, minStrategy(100))
}

func parseZs() ([]float64, error) {
	var zs []float64
	for _, f := range strings.Split(*zsFlag, ",") {
		z, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || z <= 0 {
			return nil, fmt.Errorf("bad -z %q", f)
		}
		zs = append(zs, z)
	}
	return zs, nil
}

// summary gathers, per strategy and way of linking, the worst precision
// and recall over the corpora and the verification's total cost.
type summary struct {
	minP, minR           float64
	worstP, worstR       string
	verified, candidates int
	exactAfter           int // dense variants: verified exactly after the dense sample
	docsVerified, reps   int
	values               float64 // sum over corpora of values/doc
	corpora              int
}

func accuracy(ctx context.Context) error {
	zs, err := parseZs()
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	strategies := studyStrategies()
	dense, err := denseVariants()
	if err != nil {
		return err
	}
	sums := map[string]*summary{}
	var order []string
	fmt.Printf("## Precision and recall against the exact join (w=%d, threshold %g, seed %#x)\n\n", *words, *thresh, *seed)
	for _, c := range standardCorpora() {
		if len(want) > 0 && !want[c.name] {
			continue
		}
		start := time.Now()
		docs, rows, err := readDocs(ctx, c, *words, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		g := identical(docs)
		exact, err := exactPairs(docs, *thresh)
		if err != nil {
			return err
		}
		shingles := 0
		for _, d := range docs {
			shingles += len(d.Set)
		}
		progress("%s: %d rows, %d with shingles, %d representatives, %d exact pairs (%.1fs)", c.name, rows, len(docs), len(g.reps), len(exact), time.Since(start).Seconds())
		fmt.Printf("### %s: %d rows, %d with shingles (mean %.0f shingles), %d after identical copies; %d exact pairs\n\n",
			c.name, rows, len(docs), float64(shingles)/float64(max(1, len(docs))), len(g.reps), len(exact))
		fmt.Println("| sketch | values/doc | candidates | verify | verified pairs | of candidates | docs verified | linked | precision | recall | false links: median samples, exact J |")
		fmt.Println("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---|")
		for _, s := range strategies {
			start := time.Now()
			var dv []denseVariant
			if s.floor == (sketch.Floor{M: 25, K: 16}) {
				dv = dense
			}
			res := evaluate(docs, g, exact, s, *thresh, zs, dv, *maxDocs)
			for _, o := range res.outcomes {
				verify, cell := "none", "none"
				if o.dense != "" {
					verify, cell = o.dense, fmt.Sprintf("%s (exact after: %d)", o.dense, o.exactAfter)
				} else if o.z > 0 {
					verify = fmt.Sprintf("z=%g", o.z)
					cell = verify
				}
				falseCell := ""
				if o.z == 0 && !math.IsNaN(o.falseJ) {
					falseCell = fmt.Sprintf("%.0f, %.2f", o.falseSamples, o.falseJ)
				}
				fmt.Printf("| %s | %.1f | %d | %s | %d | %s | %s | %d | %s | %s | %s |\n",
					s.name, res.meanValues, res.candidates, cell, o.verified, pct(o.verified, res.candidates),
					pct(o.docsVerified, len(g.reps)), o.linked, ratio(o.right, o.linked), ratio(o.right, len(exact)), falseCell)
				key := s.name + " | " + verify
				sm := sums[key]
				if sm == nil {
					sm = &summary{minP: 2, minR: 2}
					sums[key] = sm
					order = append(order, key)
				}
				if o.linked > 0 {
					if p := float64(o.right) / float64(o.linked); p < sm.minP {
						sm.minP, sm.worstP = p, c.name
					}
				}
				if len(exact) > 0 {
					if r := float64(o.right) / float64(len(exact)); r < sm.minR {
						sm.minR, sm.worstR = r, c.name
					}
				}
				sm.verified += o.verified
				sm.exactAfter += o.exactAfter
				sm.candidates += res.candidates
				sm.docsVerified += o.docsVerified
				sm.reps += len(g.reps)
				sm.values += res.meanValues
				sm.corpora++
			}
			progress("%s: %s in %.1fs", c.name, s.name, time.Since(start).Seconds())
		}
		fmt.Println()
	}
	fmt.Printf("## Summary over the corpora: worst precision and recall, verification's total\n\n")
	fmt.Println("| sketch | verify | worst precision (corpus) | worst recall (corpus) | verified pairs | of candidates | docs verified | mean values/doc | exact after dense |")
	fmt.Println("|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, key := range order {
		sm := sums[key]
		p, r := "-", "-"
		if sm.minP <= 1 {
			p = fmt.Sprintf("%.3f (%s)", sm.minP, sm.worstP)
		}
		if sm.minR <= 1 {
			r = fmt.Sprintf("%.3f (%s)", sm.minR, sm.worstR)
		}
		fmt.Printf("| %s | %s | %s | %d | %s | %s | %.1f | %d |\n", key, p, r, sm.verified, pct(sm.verified, sm.candidates),
			pct(sm.docsVerified, sm.reps), sm.values/float64(sm.corpora), sm.exactAfter)
	}
	return nil
}
