package fanout

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

// Each calls every index once, never more than limit at once, and
// returns the error of the lowest index that failed.
func TestEach(t *testing.T) {
	var calls, running, most atomic.Int64
	seen := make([]atomic.Int64, 100)
	err := Each(100, 3, func(i int) error {
		calls.Add(1)
		seen[i].Add(1)
		n := running.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		defer running.Add(-1)
		if i == 70 || i == 40 {
			return fmt.Errorf("item %d", i)
		}
		return nil
	})
	if err == nil || err.Error() != "item 40" {
		t.Errorf("Each = %v, want item 40's error", err)
	}
	if calls.Load() != 100 || most.Load() > 3 {
		t.Errorf("%d calls, %d at once; want 100, at most 3", calls.Load(), most.Load())
	}
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Errorf("item %d called %d times", i, seen[i].Load())
		}
	}
	if err := Each(0, 8, func(int) error { return errors.New("no items, no calls") }); err != nil {
		t.Error(err)
	}
}
