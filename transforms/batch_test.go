package transforms

import "testing"

// TestMaxBufferedBounded: a batcher's budget grows by 128 KiB per
// partition from 1 MiB, and stops at 64 MiB whatever the partitions.
func TestMaxBufferedBounded(t *testing.T) {
	for _, c := range []struct{ parts, want int }{
		{4, 1 << 20}, {8, 1 << 20}, {100, 100 * 128 << 10}, {512, 64 << 20}, {1691, 64 << 20}, {65536, 64 << 20},
	} {
		if got := maxBuffered(c.parts); got != c.want {
			t.Errorf("maxBuffered(%d) = %d, want %d", c.parts, got, c.want)
		}
	}
}
