package transforms

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// laneRun works 20 elements through lanes, element i on lanesOf(i)
// lanes, each sleeping so that later elements often end first, and
// returns what they emitted and, for each, how many elements were
// working when it started (itself included).
func laneRun(t *testing.T, lanesOf func(i int) int) (got []int, atOnce []int32) {
	ctx := context.Background()
	var l lanes[func(int)]
	emit := func(i int) { got = append(got, i) }
	var running atomic.Int32
	atOnce = make([]int32, 20)
	for i := range 20 {
		err := l.do(ctx, lanesOf(i), emit, func(context.Context) (laneOut[func(int)], error) {
			atOnce[i] = running.Add(1)
			time.Sleep(time.Duration((20-i)%5) * time.Millisecond)
			running.Add(-1)
			return func(ctx context.Context, emit func(int)) error { emit(i); return nil }, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := l.finish(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if len(got) != 20 {
		t.Fatalf("%d elements emitted, want 20", len(got))
	}
	for i, x := range got {
		if x != i {
			t.Fatalf("emitted %v, want 0..19 in order", got)
		}
	}
	return got, atOnce
}

// TestLanesOrder checks that elements worked on at once emit in their
// order, whatever order their work ends in, and that no more than n work
// at once.
func TestLanesOrder(t *testing.T) {
	for _, n := range []int{0, 1, 2, 4} {
		_, atOnce := laneRun(t, func(int) int { return n })
		most := slices.Max(atOnce)
		if limit := int32(max(n, 1)); most > limit {
			t.Errorf("n=%d: %d elements worked at once", n, most)
		}
		if n >= 2 && most < 2 {
			t.Errorf("n=%d: the elements never worked at once", n)
		}
	}
}

// TestLanesFailure checks that a failed or panicking element fails the
// bundle only once every lane has stopped, and that nothing after it is
// emitted.
func TestLanesFailure(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		fail func(context.Context) (laneOut[func(int)], error)
		want string
	}{
		{"error", func(context.Context) (laneOut[func(int)], error) { return nil, errors.New("bad shard") }, "bad shard"},
		{"panic", func(context.Context) (laneOut[func(int)], error) { panic("index out of range") }, "panic: index out of range"},
	} {
		var l lanes[func(int)]
		var got []int
		emit := func(i int) { got = append(got, i) }
		var stopped atomic.Int32
		var err error
		for i := 0; i < 6 && err == nil; i++ {
			work := func(context.Context) (laneOut[func(int)], error) {
				time.Sleep(5 * time.Millisecond)
				stopped.Add(1)
				return func(ctx context.Context, emit func(int)) error { emit(i); return nil }, nil
			}
			if i == 2 {
				work = tc.fail
				stopped.Add(1)
			}
			err = l.do(ctx, 3, emit, work)
		}
		if err == nil {
			err = l.finish(ctx, emit)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("%s: got %v, want an error with %q", tc.name, err, tc.want)
		}
		if len(l.queue) != 0 {
			t.Errorf("%s: %d lanes still queued", tc.name, len(l.queue))
		}
		for _, x := range got {
			if x >= 2 {
				t.Errorf("%s: element %d emitted after the failed one", tc.name, x)
			}
		}
		// Every lane started has stopped: none races a retry.
		time.Sleep(20 * time.Millisecond)
		before := stopped.Load()
		time.Sleep(20 * time.Millisecond)
		if stopped.Load() != before {
			t.Errorf("%s: a lane ran on after the bundle failed", tc.name)
		}
	}
}

// TestLanesInline checks that an element hold sends inline (one lane)
// among elements on lanes works alone, after those in flight, and that
// every element still emits in order.
func TestLanesInline(t *testing.T) {
	inline := func(i int) bool { return i%5 == 3 }
	_, atOnce := laneRun(t, func(i int) int {
		if inline(i) {
			return 1
		}
		return 4
	})
	for i, n := range atOnce {
		if inline(i) && n != 1 {
			t.Errorf("element %d ran inline beside %d others", i, n-1)
		}
	}
}

// TestHold checks that with lanes hold reads the streams at once and gives
// every batch back, in order, after the streams' own iterators are gone;
// that with one lane it reads nothing ahead (the streams are the DoFn's to
// read as they come); and that past its budget it stops holding, leaves
// the rest to be read as it comes and asks for the element to run inline.
func TestHold(t *testing.T) {
	src := [][]byte{[]byte("a"), []byte("bc"), nil, []byte("d")}
	stream := func(read *int) func(*[]byte) bool {
		return func(b *[]byte) bool {
			if *read == len(src) {
				return false
			}
			*b = src[*read]
			*read++
			return true
		}
	}
	drain := func(it func(*[]byte) bool) string {
		var got []string
		var b []byte
		for it(&b) {
			got = append(got, string(b))
		}
		return strings.Join(got, ",")
	}
	for _, c := range []struct {
		lanes, budget        int
		wantLanes            int
		wantRead1, wantRead2 int // batches read before the iterators are used
	}{
		{1, 1 << 20, 1, 0, 0},
		{2, 1 << 20, 2, 4, 4},
		{2, 2, 1, 2, 0}, // "a", "bc": 3 bytes, over 2
	} {
		holdBudget = c.budget
		var read1, read2 int
		it1, it2 := stream(&read1), stream(&read2)
		n := hold(c.lanes, &it1, &it2)
		if n != c.wantLanes || read1 != c.wantRead1 || read2 != c.wantRead2 {
			t.Errorf("lanes %d, budget %d: %d lanes, read %d and %d batches ahead; want %d lanes, %d and %d", c.lanes, c.budget, n, read1, read2, c.wantLanes, c.wantRead1, c.wantRead2)
		}
		if got1, got2 := drain(it1), drain(it2); got1 != "a,bc,,d" || got2 != "a,bc,,d" {
			t.Errorf("lanes %d, budget %d: streams %q and %q", c.lanes, c.budget, got1, got2)
		}
	}
	holdBudget = 256 << 20
}

// TestCopySlots checks that no more export copies run at once than the
// process has cores, and that a copy waiting for a slot gives up with its
// context.
func TestCopySlots(t *testing.T) {
	ctx := context.Background()
	limit := int64(runtime.GOMAXPROCS(0))
	var inFlight, most atomic.Int64
	var wg sync.WaitGroup
	for range 8 * limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := withCopySlot(ctx, func() error {
				n := inFlight.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(2 * time.Millisecond)
				inFlight.Add(-1)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if most.Load() > limit {
		t.Errorf("%d copies ran at once, want at most %d", most.Load(), limit)
	}

	// Every slot taken: a copy whose context ends gives up.
	release := make(chan struct{})
	var held sync.WaitGroup
	for range limit {
		held.Add(1)
		go withCopySlot(ctx, func() error { held.Done(); <-release; return nil })
	}
	held.Wait()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	ran := false
	if err := withCopySlot(cancelled, func() error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Errorf("with every slot taken and the context cancelled: err %v, ran %v; want context.Canceled, not run", err, ran)
	}
	close(release)
}
