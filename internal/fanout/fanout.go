// Package fanout runs the same call on many items at once, a bounded
// number at a time: what the launcher does to thousands of small files on
// an object store (footers, tallies, records), where each request waits
// tens of milliseconds and one at a time would take minutes.
package fanout

import "sync"

// Each calls fn(0), ..., fn(n-1), at most limit at once, and returns the
// error of the lowest i that failed, or nil.
func Each(n, limit int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(limit, 1))
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
