package pipelines

import (
	"fmt"
	"math"

	"github.com/neardup/neardup/settings"
)

// What one worker holds of a keyed step: a group, the values of one key.
// A cluster runner gives each key's values to one worker, and the Go SDK
// holds them all while the DoFn reads them (docs/cluster.md, "Groups and
// side inputs at any size"). Every keyed step that grows with the crawl
// is keyed by hash partition, so its largest group grows as the crawl's
// text over --partitions; the others are bounded (a file's slices, a
// cluster's members) or are the single union-find, which
// --components=auto leaves from 8 GiB of input.
//
// groupBytesPerTextByte is the largest group of such a step, times the
// partitions, per byte of input text. Measured (BENCHMARKS.md, issue 56):
// on the pair-heavy grown gigabyte (18 million pairs counted), phase 3's
// merge 0.411, the pairs writer 0.18, every other step 0.11 or less; on
// the skewed gigabyte of issue 55, the merge 0.34; on the synthetic crawl
// with real pages' Unicode, 0.068 (phase 2's merge) at 1 GB and at 5 GB.
// Meant to be safe, not tight: a crawl denser in pairs than any measured
// shows it in the manifest's largest_group_bytes.
const groupBytesPerTextByte = 0.5

// unionFindBytesPerTextByte is the single union-find's one group per byte
// of text: its links, 3.6 MB for the grown gigabyte's 1.06 GB (0.0034).
const unionFindBytesPerTextByte = 0.005

// The steps groupEstimate names.
const (
	pairMergeStep = "phase 3's pair merge"
	unionFindStep = "phase 4's single union-find"
)

// groupEstimate is the estimated largest group, in bytes, of a run over
// textBytes of text in the given partitions, and the step it is in
// (pairMergeStep or unionFindStep).
func groupEstimate(textBytes int64, partitions int, components string) (step string, bytes int64) {
	step, bytes = pairMergeStep, int64(math.Ceil(groupBytesPerTextByte*float64(textBytes)/float64(max(partitions, 1))))
	if components == settings.ComponentsSingle {
		if uf := int64(math.Ceil(unionFindBytesPerTextByte * float64(textBytes))); uf > bytes {
			step, bytes = unionFindStep, uf
		}
	}
	return step, bytes
}

// partitionsForGroups is the fewest partitions that keep the estimated
// largest group of a run over textBytes of text within budget bytes.
func partitionsForGroups(textBytes, budget int64) int {
	if budget <= 0 {
		return 1
	}
	return int(min(math.Ceil(groupBytesPerTextByte*float64(textBytes)/float64(budget)), 1<<16))
}

// groupRefusal is the error that refuses a run over textBytes of text in
// the given partitions whose estimated largest group would pass budget
// bytes, the most one worker may hold at once (--max-group-bytes): on a
// cluster such a worker would run out of memory midway, hours in. nil
// when it fits.
func groupRefusal(textBytes int64, partitions int, components string, budget int64) error {
	step, est := groupEstimate(textBytes, partitions, components)
	if budget <= 0 || est <= budget {
		return nil
	}
	what := fmt.Sprintf("set --partitions to at least %d", partitionsForGroups(textBytes, budget))
	if step == unionFindStep {
		what = "set --components=distributed (or auto)"
	}
	return fmt.Errorf("about %s of text in %d partitions: %s's largest group would hold about %s "+
		"(%.3g bytes per byte of text over the partitions), past --max-group-bytes=%s, the most one worker may hold at once; "+
		"%s, or raise --max-group-bytes where the workers have the memory (docs/cluster.md, \"Groups and side inputs at any size\")",
		gb2(textBytes), partitions, step, gb2(est), groupBytesPerTextByte, settings.FormatSize(budget), what)
}
