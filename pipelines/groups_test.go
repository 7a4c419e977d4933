package pipelines

import (
	"context"
	"testing"
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
		}
	}
}
