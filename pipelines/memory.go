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
)

// The memory the embedded runner needs, per byte of text: its live set,
// what stays when the collector is made to return the rest (issue 26:
// 5.4 GB of real news text peaked at 4.5 GB under GOMEMLIMIT=2.5GiB, 0.83
// bytes per byte), and what the process holds whatever the input.
const (
	liveBytesPerTextByte = 0.85
	baseBytes            = 400 << 20
)

// neededBytes is the embedded runner's estimated need for textBytes of text.
func neededBytes(textBytes int64) int64 {
	return baseBytes + int64(liveBytesPerTextByte*float64(textBytes))
}

// readFooters sums, over files, the rows and the text (or HTML) column's
// size before compression (crawl.Split.ContentBytes) from their footers,
// reading 16 at a time (a cluster's object store answers each in tens of
// ms). Files it cannot read count for nothing: the pipeline reports them.
func readFooters(ctx context.Context, files []string, cols crawl.Columns) (rows, textBytes int64) {
	type sum struct{ rows, text int64 }
	sums := make([]sum, len(files))
	fanout.Each(len(files), 16, func(i int) error {
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
// machine. It returns the input's rows, for the progress line.
func checkFits(ctx context.Context, m *output.Manifest, files []string, cols crawl.Columns) (rows int64) {
	rows, m.InputTextBytes = readFooters(ctx, files, cols)
	if embeddedRunner() {
		fmt.Fprint(progressOut, fitWarning(m.InputTextBytes, memlimit.ReadMachine().Free()))
	}
	return rows
}

// followLiveHeap, on the embedded runner under --memory-limit=auto, keeps
// the soft limit a little above the live heap, from the estimate for
// textBytes of text up (memlimit.Follow); the returned func ends it and
// returns the highest limit set (0 when it did not follow).
func followLiveHeap(textBytes int64) (stop func() int64) {
	if !embeddedRunner() {
		return func() int64 { return 0 }
	}
	return memlimit.Follow(neededBytes(textBytes))
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
	slice := int64(float64(free-baseBytes) / liveBytesPerTextByte)
	return fmt.Sprintf("neardup: this input holds about %s of text; the embedded runner needs about %s for it "+
		"(%.2f bytes per byte of text, and %s), and this machine has %s free.\n"+
		"neardup: it may fail or swap. Run it on a cluster runner (docs/cluster.md), or run over a slice of at most "+
		"about %s of text and add the rest with runner update, a slice at a time (docs/incremental.md).\n",
		gb(textBytes), gb(need), liveBytesPerTextByte, gb(baseBytes), gb(free), gb(max(slice, 0)))
}

func gb(n int64) string { return fmt.Sprintf("%.1f GB", float64(n)/1e9) }
