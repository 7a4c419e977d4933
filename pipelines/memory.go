package pipelines

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"

	"github.com/neardup/neardup/internal/fanout"
	"github.com/neardup/neardup/internal/memlimit"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
	"github.com/neardup/neardup/transforms"
)

// The memory the embedded runner needs, per byte of text: its live set,
// what stays when the collector is made to return the rest, with Prism's
// own hold of every shuffle (nearly all of the heap at the peak of a
// pair-heavy run), and what the process holds whatever the input. Meant
// to be safe, not tight: under a cgroup's limit a run that needs more is
// refused (fitRefusal). Measured (BENCHMARKS.md, issue 55) under cgroup
// caps, verification's 0.27 GB beside: the pair-heavy grown gigabyte
// (1.06 GB of text, 102 million triplets) was killed in phase 3 under
// 1.9 GB and completed under 2.33 GB, which 1.5 bytes per byte just
// allows; the 1 GB skewed input (1.16 GB of text, 33 million pairs),
// killed under 1.75 GB, completed under 1.93 GB, so 1.5 refuses it where
// it would have run (at 2.5 GB and below). Real news text, with few pairs,
// peaked at 0.83 bytes per byte (5.4 GB of it, issue 26).
const (
	liveBytesPerTextByte = 1.5
	baseBytes            = 400 << 20
)

// neededBytes is the embedded runner's estimated need for textBytes of text.
func neededBytes(textBytes int64) int64 {
	return baseBytes + int64(liveBytesPerTextByte*float64(textBytes))
}

// followFromBytesPerTextByte is where the soft limit starts, per byte of
// text, when followLiveHeap follows the live heap: below the live set on
// purpose, so that the limit is the live heap's (Headroom above it) for
// most of the run, not the estimate, which is meant to be safe for
// fitting the run to the machine, not tight. Measured (BENCHMARKS.md,
// issue 40, fifth part), from the estimate (0.85) to 0.45: 5 GB of the
// Unicode crawl peaked at 3.27 GB instead of 4.72 (0.64 byte per byte)
// in 117 s against 108; 1 GB at 0.95 GB instead of 1.32 in 21-24 s
// against 21-22; the pair-heavy grown gigabyte, whose live set is above
// both, at 2.46 GB in 107 s, as before.
const followFromBytesPerTextByte = 0.45

// readFooters sums, over files, the rows and the text (or HTML) column's
// size before compression (crawl.Split.ContentBytes) from their footers
// (a JSON lines file's text from its size, its rows uncounted),
// reading 16 at a time (a cluster's object store answers each in tens of
// ms). Files it cannot read count for nothing: the pipeline reports them.
func readFooters(ctx context.Context, files []string, cols crawl.Columns) (rows, textBytes int64) {
	type sum struct{ rows, text int64 }
	sums := make([]sum, len(files))
	fanout.Each(len(files), 16, func(i int) error {
		if crawl.IsJSONLines(files[i]) {
			// No footer counts its rows: reading it through here would
			// read the crawl on the launcher. Its size says enough.
			if size, err := store.Size(ctx, files[i]); err == nil {
				sums[i].text = crawl.JSONLinesTextBytes(files[i], size)
			}
			return nil
		}
		splits, err := crawl.Splits(ctx, i, files[i], cols)
		if err != nil {
			return nil // a file not read here fails the job, or is skipped there
		}
		for _, sp := range splits {
			sums[i].rows += sp.NumRows
			sums[i].text += sp.ContentBytes
		}
		return nil
	})
	for _, s := range sums {
		rows, textBytes = rows+s.rows, textBytes+s.text
	}
	return rows, textBytes
}

// checkFits reads the input's footers, records its text bytes in m and,
// on the embedded runner, says before the run when it will not fit this
// machine, and refuses it (fitRefusal) when what it would pass is its
// cgroup's hard limit. It returns the input's rows, for the progress line.
func checkFits(ctx context.Context, m *output.Manifest, files []string, cols crawl.Columns) (rows int64, err error) {
	rows, m.InputTextBytes = readFooters(ctx, files, cols)
	if embeddedRunner() {
		machine := memlimit.ReadMachine()
		if err := fitRefusal(m.InputTextBytes, machine, memlimit.Applied().Auto()); err != nil {
			return rows, err
		}
		fmt.Fprint(progressOut, fitWarning(m.InputTextBytes, machine.Free()))
	}
	return rows, nil
}

// fitRefusal is the error that refuses an embedded run over textBytes of
// text that would not fit machine m when m's free memory is its cgroup's
// limit and --memory-limit=auto took it (auto): past a cgroup's limit the
// kernel kills the run midway, where on a machine's free memory it swaps
// or slows, so a run that cannot finish does not start. A limit set by
// hand (--memory-limit=SIZE, GOMEMLIMIT) runs it all the same, with
// fitWarning's warning. nil when it fits or nothing is known.
func fitRefusal(textBytes int64, m memlimit.Machine, auto bool) error {
	need, free := neededBytes(textBytes), m.Free()
	if !auto || !m.Capped() || free <= 0 || need <= free {
		return nil
	}
	return fmt.Errorf("this input holds about %s of text; the embedded runner needs about %s for it "+
		"(%.2f bytes per byte of text, and %s), and this process's cgroup leaves it %s (a limit of %s), past which the kernel would kill the run midway: "+
		"run it on a cluster runner (docs/cluster.md), or over a slice of at most about %s of text and add the rest with runner update, a slice at a time (docs/incremental.md), "+
		"or set --memory-limit to a size of your own to run it all the same",
		gb2(textBytes), gb2(need), liveBytesPerTextByte, gb(baseBytes), gb2(free), gb2(m.CgroupLimit), gb2(fittingSlice(free)))
}

// fittingSlice is the most text an embedded run fits in free bytes.
func fittingSlice(free int64) int64 {
	return max(int64(float64(free-baseBytes)/liveBytesPerTextByte), 0)
}

// followLiveHeap, on the embedded runner under --memory-limit=auto, keeps
// the soft limit a little above the live heap, never under a floor for
// textBytes of text (followFromBytesPerTextByte; memlimit.Follow); the
// returned func ends it and returns the highest limit set (0 when it did
// not follow).
func followLiveHeap(textBytes int64) (stop func() int64) {
	if !embeddedRunner() {
		return func() int64 { return 0 }
	}
	return memlimit.Follow(baseBytes + int64(followFromBytesPerTextByte*float64(textBytes)))
}

// embeddedRunner reports whether the pipeline runs on the embedded Prism
// runner, which holds every shuffle in this process.
func embeddedRunner() bool {
	env := strings.ToLower(*jobopts.EnvironmentType)
	switch strings.ToLower(*runners.Runner) {
	case "", "prism", "prismrunner", "direct":
		return env == "" || env == "loopback"
	}
	return false
}

// fitWarning is what the launcher says before an embedded run over
// textBytes of text on a machine with free bytes free (0: unknown) when
// the run will not fit: the figures, and what to do instead. "" when it
// fits, or when nothing is known of the machine.
func fitWarning(textBytes, free int64) string {
	need := neededBytes(textBytes)
	if free <= 0 || need <= free {
		return ""
	}
	return fmt.Sprintf("neardup: this input holds about %s of text; the embedded runner needs about %s for it "+
		"(%.2f bytes per byte of text, and %s), and this machine has %s free.\n"+
		"neardup: it may fail or swap. Run it on a cluster runner (docs/cluster.md), or run over a slice of at most "+
		"about %s of text and add the rest with runner update, a slice at a time (docs/incremental.md).\n",
		gb(textBytes), gb(need), liveBytesPerTextByte, gb(baseBytes), gb(free), gb(fittingSlice(free)))
}

func gb(n int64) string { return fmt.Sprintf("%.1f GB", float64(n)/1e9) }

// gb2 is gb to the hundredth, for figures near each other.
func gb2(n int64) string { return fmt.Sprintf("%.2f GB", float64(n)/1e9) }

// featuresPerTextByte bounds a page's features per byte of its text: its
// distinct 4-word shingles number 0.12-0.17 per byte on the shared
// corpora (0.17 on multilingual-docs, whose CJK pages have short tokens).
const featuresPerTextByte = 0.25

// verifyCost is what verifying a run costs beyond it: the features phase
// 1 writes to the temporary folder for Verify, and the most that one
// verifying thread holds of them (two input slices' features, read and
// decoded).
type verifyCost struct {
	written, held int64
}

// verifyCostOf estimates the verification cfg asks for, over textBytes
// of text in rows rows, from the average page; nothing when it verifies
// nothing.
func verifyCostOf(cfg settings.Config, textBytes, rows int64) verifyCost {
	kind := cfg.Verification()
	if kind == "" || rows <= 0 {
		return verifyCost{}
	}
	features := featuresPerTextByte * float64(textBytes) / float64(rows)
	var page float64 // a page's record
	switch kind {
	case settings.VerifyDense:
		page = 4 * min(features, float64(sketch.DefaultDense.K))
	case settings.VerifyBloom:
		page = features * float64(cfg.BloomBitsPerFeature()) / 8
	default:
		page = 8 * features
	}
	page += packed.FeaturesHeader
	held := 2 * float64(min(rows, transforms.VerifySliceRows)) * page * 2
	return verifyCost{written: int64(float64(rows) * page), held: int64(held)}
}

// checkVerifyFits says before the run what its verification will write
// and hold, and on the embedded runner refuses a verification that would
// not fit this machine's free memory beside the run it verifies.
func checkVerifyFits(cfg transforms.Config, textBytes, rows int64) error {
	cost := verifyCostOf(cfg.Config, textBytes, rows)
	if cost == (verifyCost{}) {
		return nil
	}
	kind := cfg.VerifySetting() // the manifest's name for it
	fmt.Fprint(progressOut, verifyStatement(kind, cost, cfg.Lanes))
	if !embeddedRunner() {
		return nil
	}
	return verifyRefusal(kind, cost, cfg.Lanes, textBytes, memlimit.ReadMachine().Free())
}

// verifyStatement is the line that says a run's verification's cost up
// front.
func verifyStatement(kind string, cost verifyCost, lanes int) string {
	return fmt.Sprintf("neardup: verification (%s) writes about %s of features to the temporary folder; each of the %d verifying threads holds at most about %s of them.\n",
		kind, approx(cost.written), max(lanes, 1), approx(cost.held))
}

// approx is n bytes for a person: in GB from a gigabyte up, in MB below
// (at least 1), so that a sample's figures do not read as nothing.
func approx(n int64) string {
	if n >= 1e9 {
		return gb(n)
	}
	return fmt.Sprintf("%d MB", max((n+999_999)/1_000_000, 1))
}

// verifyRefusal is nil when a run over textBytes of text and its
// verification fit in free bytes (0: unknown) on the embedded runner, or
// when the run alone does not (fitWarning says so, and what to do);
// otherwise the error that refuses the run, with the figures and what to
// do.
func verifyRefusal(kind string, cost verifyCost, lanes int, textBytes, free int64) error {
	run, verify := neededBytes(textBytes), int64(max(lanes, 1))*cost.held
	if free <= 0 || run > free || run+verify <= free {
		return nil
	}
	instead := "--verify=dense, whose samples are at most 2 KB a page, or --lanes=1"
	if strings.HasPrefix(kind, string(settings.VerifyDense)) {
		instead = "--lanes=1, or --verify=none" // dense already
	}
	return fmt.Errorf("verification (%s) would hold about %s (%d threads, %s each: two input slices of %d rows' features) beside the run's %s, "+
		"and this machine has %s free: run with %s, or on a cluster runner (docs/cluster.md)",
		kind, gb(verify), max(lanes, 1), gb(cost.held), transforms.VerifySliceRows, gb(run), gb(free), instead)
}
