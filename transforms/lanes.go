package transforms

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// lanes runs the work of a bundle's elements on up to Placement.Lanes
// goroutines at once, and what each element emits on the bundle's own
// goroutine, in the elements' order.
//
// Why: the embedded Prism runner gives a keyed stage all its keys in one
// bundle, and splits a bundle only when one element has made no progress
// for a whole progress tick (100 ms). The keyed steps of a small or
// incremental run take 20-90 ms per partition, so each such stage ran on
// one core however many the machine has (measured: Assemble's 19
// partitions of an update, 1.08 s busy in 1.08 s of wall time on 2 cores).
// Other runners spread keys over workers and bundles themselves, so
// there the launcher leaves Placement.Lanes at 1: work runs inline, as before.
//
// A DoFn reads its element's iterators on the bundle's goroutine (they
// are valid only during the call: see hold), hands the rest to do as
// work, which returns the emitting part (out), and calls finish in
// FinishBundle. Work must not emit or touch the DoFn's fields; out runs
// with the emitters and context of the call that runs it, which are the
// bundle's (every output here is in the global window). At most Lanes
// elements are in flight, so memory grows by that factor at most. A
// failed element fails the bundle once every lane has stopped, so a
// retried bundle never races a lane of the failed one.
type lanes[E any] struct {
	queue []chan laneResult[E]
}

// laneOut is what an element emits, run on the bundle's goroutine.
type laneOut[E any] func(ctx context.Context, emit E) error

type laneResult[E any] struct {
	out    laneOut[E]
	err    error
	counts *laneCounts // what its work counted, held for the bundle's goroutine
}

// do runs work on a lane of its own (inline when n <= 1), then the outs of
// the elements at the head of the queue that have finished, waiting for
// the oldest when n are in flight.
//
// Work gets a context of its own, whose counters (addCount) wait for out:
// the SDK makes a bundle's counter on its first increment, in a map no
// lock guards, so an increment on a lane beside one on the bundle's
// goroutine crashes the worker ("concurrent map read and map write").
func (l *lanes[E]) do(ctx context.Context, n int, emit E, work func(ctx context.Context) (laneOut[E], error)) error {
	if n <= 1 {
		// Inline, after the elements in flight: their outs come first.
		if err := l.finish(ctx, emit); err != nil {
			return err
		}
		out, err := work(ctx)
		if err != nil {
			return err
		}
		return out(ctx, emit)
	}
	c := make(chan laneResult[E], 1)
	l.queue = append(l.queue, c)
	counts := &laneCounts{}
	lane := context.WithValue(ctx, laneCountsKey{}, counts)
	go func() {
		defer func() {
			// A panic on a goroutine of our own would end the worker
			// process: fail the bundle instead, as the SDK does for
			// panics on its own goroutine.
			if p := recover(); p != nil {
				c <- laneResult[E]{err: fmt.Errorf("panic: %v\n%s", p, debug.Stack()), counts: counts}
			}
		}()
		out, err := work(lane)
		c <- laneResult[E]{out, err, counts}
	}()
	for len(l.queue) > 0 {
		var r laneResult[E]
		if len(l.queue) < max(n, 1) {
			select {
			case r = <-l.queue[0]:
			default:
				return nil
			}
		} else {
			r = <-l.queue[0]
		}
		l.queue = l.queue[1:]
		if err := l.run(ctx, emit, r); err != nil {
			return err
		}
	}
	return nil
}

// timed is do for one element of a phase: work's time counts as t's.
func (l *lanes[E]) timed(ctx context.Context, n int, emit E, t phaseTimer, work func(ctx context.Context) (laneOut[E], error)) error {
	return l.do(ctx, n, emit, func(ctx context.Context) (laneOut[E], error) {
		start := time.Now()
		out, err := work(ctx)
		end := time.Now()
		return func(ctx context.Context, emit E) error {
			t.span(ctx, start, end)
			return out(ctx, emit)
		}, err
	})
}

// finish waits for every element in flight and runs their outs in order.
func (l *lanes[E]) finish(ctx context.Context, emit E) error {
	for len(l.queue) > 0 {
		r := <-l.queue[0]
		l.queue = l.queue[1:]
		if err := l.run(ctx, emit, r); err != nil {
			return err
		}
	}
	return nil
}

// run runs one element's out, or on its failure waits out the other lanes
// and returns the failure.
func (l *lanes[E]) run(ctx context.Context, emit E, r laneResult[E]) error {
	r.counts.flush(ctx)
	if r.err == nil {
		r.err = r.out(ctx, emit)
	}
	if r.err != nil {
		for _, c := range l.queue {
			<-c
		}
		l.queue = nil
	}
	return r.err
}

// reset, in StartBundle, waits out and forgets the lanes of a bundle that
// failed elsewhere (in another DoFn of its stage) while they ran: a
// retried bundle must not race them.
func (l *lanes[E]) reset() {
	for _, c := range l.queue {
		<-c
	}
	l.queue = nil
}

// holdBudget bounds the sealed bytes hold keeps of one element's streams.
var holdBudget = 256 << 20

// hold prepares an element's shuffled streams (each *it) for a lane and
// returns the lanes the element may use. A stream is valid only during
// the call, so for a lane it is read now, on the bundle's goroutine, and
// replaced by an iterator over its batches that lets go of each as it
// hands it out. With one lane (n <= 1) work runs inline, in the call, so
// the streams are left as they are and read as they come: the SDK pages a
// large group in from the runner, and holding it would keep every sealed
// batch of the group alive beside what the DoFn decodes from them. Past
// holdBudget bytes in all, hold stops: the stream it was reading goes on
// where it left off (the batches held, then the rest as it comes), those
// after it are left as they are, and it returns 1, so the element runs
// inline after the lanes in flight, while its streams are valid.
func hold(n int, its ...*func(*[]byte) bool) int {
	if n <= 1 {
		return n
	}
	held := 0
	for _, it := range its {
		var batches [][]byte
		var b []byte
		src := *it
		over := false
		for !over && src(&b) {
			batches = append(batches, b)
			held += len(b)
			b = nil
			over = held > holdBudget
		}
		*it = func(out *[]byte) bool {
			if len(batches) == 0 {
				return over && src(out)
			}
			*out, batches[0], batches = batches[0], nil, batches[1:]
			return true
		}
		if over {
			return 1
		}
	}
	return n
}

// laneCounts holds the counter increments of one element's lane work
// until its out runs on the bundle's goroutine (see do).
type laneCounts struct {
	mu sync.Mutex
	n  map[beam.Counter]int64
}

type laneCountsKey struct{}

// addCount adds v to the bundle's counter c: at once, or, from lane work
// (ctx a lane's), when the element's out runs.
func addCount(ctx context.Context, c beam.Counter, v int64) {
	if lc, ok := ctx.Value(laneCountsKey{}).(*laneCounts); ok {
		lc.mu.Lock()
		defer lc.mu.Unlock()
		if lc.n == nil {
			lc.n = map[beam.Counter]int64{}
		}
		lc.n[c] += v
		return
	}
	c.Inc(ctx, v)
}

// flush makes the held increments on the bundle's context ctx.
func (lc *laneCounts) flush(ctx context.Context) {
	if lc == nil {
		return
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	for c, v := range lc.n {
		c.Inc(ctx, v)
	}
	lc.n = nil
}
