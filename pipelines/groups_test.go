package pipelines

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/neardup/neardup/settings"
)

// TestLargestGroups: the manifest's largest_group_bytes is each keyed
// step's largest group, measured where the step reads it. With one
// partition a step's one group is all its shuffle carried, which its
// producers count as they emit it (shuffled_*_bytes): the two must agree.
// With more partitions the largest group is a share of it, but for the
// single union-find (--components=auto below 8 GiB), one group whatever
// the partitions.
func TestLargestGroups(t *testing.T) {
	steps := map[string]string{ // step: the shuffle it groups
		"identical":   "shuffled_sketch_keys_bytes",
		"merge_pairs": "shuffled_pairs_bytes",
		"union_find":  "shuffled_links_bytes",
		"write_pairs": "shuffled_pair_rows_bytes",
	}
	for _, parts := range []int{1, 4} {
		cfg := testConfig()
		cfg.Partitions = parts
		m, err := Run(context.Background(), Options{Input: sampleGlob, Output: t.TempDir(), Config: cfg})
		if err != nil {
			t.Fatal(err)
		}
		for step, shuffle := range steps {
			got, all := m.LargestGroupBytes[step], m.Counts[shuffle]
			switch {
			case all == 0:
				t.Errorf("%d partitions: %s is 0", parts, shuffle)
			case (parts == 1 || step == "union_find") && got != all:
				t.Errorf("%d partitions: %s's largest group is %d bytes, its shuffle carried %d (%s)", parts, step, got, all, shuffle)
			case parts > 1 && step != "union_find" && (got <= 0 || got >= all):
				t.Errorf("%d partitions: %s's largest group is %d bytes of %d (%s); want a share", parts, step, got, all, shuffle)
			}
			// All of a step's groups are all its shuffle carried.
			if sum := m.GroupBytes[step]; sum != all {
				t.Errorf("%d partitions: %s's groups hold %d bytes, its shuffle carried %d (%s)", parts, step, sum, all, shuffle)
			}
			// The estimate the launcher sizes partitions by bounds the
			// steps keyed by partition.
			if _, est := groupEstimate(m.InputTextBytes, parts, settings.ComponentsSingle); step != "union_find" && got > est {
				t.Errorf("%d partitions: %s's largest group is %d bytes, past the estimate of %d", parts, step, got, est)
			}
		}
		// The two wave-ordered merges take a side input, empty by
		// construction, and measure it.
		for _, step := range []string{"shingle_merge", "merge_pairs"} {
			if n, ok := m.LargestSideInputBytes[step]; !ok || n != 0 {
				t.Errorf("%d partitions: %s's side input: %d bytes (measured: %v), want 0, measured", parts, step, n, ok)
			}
		}
	}
}

// TestPartitionsForGroups: the partitions --partitions=0 takes to keep
// the estimated largest group (half a byte per byte of text over the
// partitions) within --max-group-bytes, worked by hand.
func TestPartitionsForGroups(t *testing.T) {
	for _, c := range []struct {
		text, budget int64
		want         int
	}{
		{10e12, 1 << 30, 4657}, // 5e12 / 1,073,741,824 = 4,656.6
		{1e12, 1 << 30, 466},   // 465.66
		{1e9, 1 << 30, 1},      // 0.47
		{4 << 30, 1 << 30, 2},  // exactly 2
		{1 << 60, 1, 1 << 16},  // at most 65,536
	} {
		if got := partitionsForGroups(c.text, c.budget); got != c.want {
			t.Errorf("partitionsForGroups(%d, %d) = %d, want %d", c.text, c.budget, got, c.want)
		}
	}
	// 10 TB of text in 4,657 partitions: 1,073,661,155 bytes a group; in
	// 4,656, 1,073,891,753, past 1 GiB.
	if err := groupRefusal(10e12, 4657, settings.ComponentsDistributed, 1<<30); err != nil {
		t.Errorf("4,657 partitions refused: %v", err)
	}
	if err := groupRefusal(10e12, 4656, settings.ComponentsDistributed, 1<<30); err == nil || !strings.Contains(err.Error(), "--partitions to at least 4657") {
		t.Errorf("4,656 partitions: %v, want a refusal naming 4657", err)
	}
	// The single union-find holds all the links: 0.005 byte per byte of
	// text, 50 GB for 10 TB.
	if err := groupRefusal(10e12, 4657, settings.ComponentsSingle, 1<<30); err == nil || !strings.Contains(err.Error(), "--components=distributed") {
		t.Errorf("a single union-find over 10 TB: %v, want a refusal naming --components", err)
	}
}

// TestGroupBudget: a run whose largest group would pass --max-group-bytes
// is refused before it writes anything, and --partitions=0 takes enough
// partitions to stay within it.
func TestGroupBudget(t *testing.T) {
	ctx := context.Background()
	cfg := testConfig()
	cfg.Partitions = 1
	dir := filepath.Join(t.TempDir(), "out")
	// The sample's text, from its footers (TestInputTextBytes checks them).
	files, err := filepath.Glob(sampleGlob)
	if err != nil || len(files) == 0 {
		t.Fatalf("the sample crawl: %v, %d files", err, len(files))
	}
	_, text := readFooters(ctx, files, cfg.Columns)
	budget := int64(0.5 * float64(text) / 5.5) // ceil(5.5) = 6 partitions' worth
	_, err = Run(ctx, Options{Input: sampleGlob, Output: dir, Config: cfg, MaxGroupBytes: budget})
	if err == nil || !strings.Contains(err.Error(), "--partitions to at least 6") {
		t.Fatalf("one partition under a budget of %d bytes: %v, want a refusal naming 6", budget, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the refused run left %s (%v)", dir, err)
	}
	cfg.Partitions = 0
	m, err := Run(ctx, Options{Input: sampleGlob, Output: dir, Config: cfg, MaxGroupBytes: budget})
	if err != nil {
		t.Fatal(err)
	}
	if m.Partitions != 6 {
		t.Errorf("--partitions=0 under a budget of %d bytes took %d partitions, want 6", budget, m.Partitions)
	}
}
