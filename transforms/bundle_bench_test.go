package transforms

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/shareddata"
	"github.com/neardup/neardup/io/crawl"
	"github.com/neardup/neardup/shuffle/packed"
)

// The memory of one bundle of the two DoFns that hold the most: the
// budgets are in docs/speed.md ("What a worker needs"). Run:
//
//	go test -run XXX -bench BundleHeap -benchtime 1x ./transforms/
var (
	bundleMB     = flag.Int("bundle-mb", 200, "MB of postings (triplets) in BenchmarkShingleMergeBundleHeap's (BenchmarkPairCountBundleHeap's) partition")
	bundleRepeat = flag.Int("bundle-repeat", 4, "times BenchmarkSketchBundleHeap's bundle reads multilingual-docs")
)

// peakHeap runs fn and returns the most bytes of heap objects it added,
// sampled every millisecond (runtime/metrics: live objects and garbage
// not yet collected, so it depends on GOGC, as a worker's does).
func peakHeap(fn func()) uint64 {
	runtime.GC()
	const name = "/memory/classes/heap/objects:bytes"
	read := func() uint64 {
		s := []metrics.Sample{{Name: name}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	base := read()
	var peak uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				peak = max(peak, read())
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	peak = max(peak, read())
	if peak < base {
		return 0
	}
	return peak - base
}

// postingBatches is a shingle partition as a runner hands it to phase 2:
// sealed batches of 128 KiB of postings, mb MB in all, made as they are
// read (the SDK pages a large group in, so they are not all in memory at
// once unless the DoFn keeps them). Seven shingles in ten are in one
// document, the rest in two to four (a crawl's share of shared shingles
// is smaller: this is the heavier case for the lists).
func postingBatches(mb int, seed uint64) func(*[]byte) bool {
	rng := rand.New(rand.NewPCG(seed, 2))
	total := mb * 1e6 / packed.PostingSize
	perBatch := (128 << 10) / packed.PostingSize
	made := 0
	var raw []byte
	return func(out *[]byte) bool {
		if made >= total {
			return false
		}
		raw = raw[:0]
		for n := 0; n < perBatch && made < total; {
			sh, docs := rng.Uint64(), 1
			if rng.IntN(10) >= 7 {
				docs = 2 + rng.IntN(3)
			}
			for range docs {
				raw = packed.Posting{Shingle: sh, Doc: rng.Uint64N(1 << 30), Size: 25, Rank: uint16(rng.IntN(100))}.Append(raw)
				n++
				made++
			}
		}
		*out = packed.Seal(nil, raw)
		return true
	}
}

// BenchmarkShingleMergeBundleHeap is one phase 2 bundle of one partition
// of --bundle-mb MB of postings (writing its postings shard), at one lane
// (a remote worker's: the stream read as it comes) and at two (the
// embedded runner's: the sealed batches held for the lane). It reports the
// peak heap in MB and per byte of the partition's postings.
func BenchmarkShingleMergeBundleHeap(b *testing.B) {
	cand := benchConfig().Candidates()
	keyedBundleHeap(b, "postings", "lists", func(lanes int, emit func([]byte)) error {
		f := &shingleMergeFn{Candidates: cand, Partitions: 72, TempDir: b.TempDir(), Lanes: lanes}
		ctx := context.Background()
		f.StartBundle(ctx, nil, emit, emit)
		if err := f.ProcessElement(ctx, 7, postingBatches(*bundleMB, 1), nil, emit, emit); err != nil {
			return err
		}
		return f.FinishBundle(ctx, nil, emit, emit)
	})
}

// keyedBundleHeap runs one bundle of a keyed step (run, at one lane and
// at two, emitting through emit) b.N times over --bundle-mb MB of in,
// and reports its peak heap in MB and per byte of in, and the MB of out
// it emitted.
func keyedBundleHeap(b *testing.B, in, out string, run func(lanes int, emit func([]byte)) error) {
	for _, lanes := range []int{1, 2} {
		b.Run(fmt.Sprintf("lanes=%d", lanes), func(b *testing.B) {
			var peak uint64
			var emitted int
			for range b.N {
				var err error
				peak = max(peak, peakHeap(func() { err = run(lanes, func(v []byte) { emitted += len(v) }) }))
				if err != nil {
					b.Fatal(err)
				}
			}
			perByte := float64(peak) / float64(*bundleMB*1e6)
			b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
			b.ReportMetric(perByte, "heap-B/B")
			b.Logf("lanes %d: %d MB of %s, peak heap %.0f MB (%.2f bytes per byte), %d MB of %s emitted", lanes, *bundleMB, in, float64(peak)/1e6, perByte, emitted/b.N/1e6, out)
		})
	}
}

// tripletBatches is a pair partition as a runner hands it to phase 3's
// merge: sealed batches of 128 KiB of triplets, mb MB in all. Each pair
// is met one to eight times (its shared shingles), its triplets spread
// over the stream as the lists of many bundles send them.
func tripletBatches(mb int, seed uint64) func(*[]byte) bool {
	rng := rand.New(rand.NewPCG(seed, 3))
	total := mb * 1e6 / packed.PairSize
	perBatch := (128 << 10) / packed.PairSize
	pairs := make([][2]uint64, total/4)
	for i := range pairs {
		a, b := rng.Uint64N(1<<30), rng.Uint64N(1<<30)
		pairs[i] = [2]uint64{min(a, b), max(a, b) + 1}
	}
	made := 0
	var raw []byte
	return func(out *[]byte) bool {
		if made >= total {
			return false
		}
		raw = raw[:0]
		for n := 0; n < perBatch && made < total; n++ {
			p := pairs[rng.IntN(len(pairs))]
			raw = packed.Pair{A: p[0], B: p[1], Count: 1, SizeA: 100, SizeB: 100,
				RankA: uint16(rng.IntN(100)), RankB: uint16(rng.IntN(100))}.Append(raw)
			made++
		}
		*out = packed.Seal(nil, packed.PackPairs(nil, raw))
		return true
	}
}

// BenchmarkPairCountBundleHeap is one phase 3 merge bundle of one pair
// partition of --bundle-mb MB of triplets (the default MIN_s sketches: each
// triplet kept until its pair is merged), at one lane and at two. It
// reports the peak heap in MB and per byte of the partition's triplets.
func BenchmarkPairCountBundleHeap(b *testing.B) {
	keyedBundleHeap(b, "triplets", "pairs", func(lanes int, emit func([]byte)) error {
		f := &mergePairsFn{Sketch: benchConfig().Linking().Sketch, Lanes: lanes}
		emitKV := func(_ int, v []byte) { emit(v) }
		ctx := context.Background()
		f.StartBundle(ctx, nil, emitKV, emitKV)
		if err := f.ProcessElement(ctx, 7, tripletBatches(*bundleMB, 1), nil, emitKV, emitKV); err != nil {
			return err
		}
		return f.FinishBundle(ctx, nil, emitKV, emitKV)
	})
}

// BenchmarkSketchBundleHeap is one phase 1 bundle: every row group of
// multilingual-docs (47 MB of real text), --bundle-repeat times over,
// through sketchFn at 72 partitions
// (10 GiB of input) and at 1,691 (about 6 TB), with the default settings.
// It reports the peak heap in MB: the batchers' buffers grow with the
// partitions (maxBuffered).
func BenchmarkSketchBundleHeap(b *testing.B) {
	path := shareddata.Path(b, "multilingual-docs.parquet")
	ctx := context.Background()
	cfg := benchConfig()
	splits, err := crawl.Splits(ctx, 0, path, cfg.Columns)
	if err != nil {
		b.Fatal(err)
	}
	for _, parts := range []int{72, 1691} {
		b.Run(fmt.Sprintf("partitions=%d", parts), func(b *testing.B) {
			var peak uint64
			for range b.N {
				f := &sketchFn{Settings: cfg.Config, Partitions: parts, TempDir: b.TempDir()}
				emit := func(int, []byte) {}
				emitName := func(int, string) {}
				var err error
				peak = max(peak, peakHeap(func() {
					f.StartBundle(emit, emit, emit, emit, emit, emit, emitName)
					for range *bundleRepeat {
						for _, sp := range splits {
							if err = f.ProcessElement(ctx, sp, emit, emit, emit, emit, emit, emit, emitName); err != nil {
								return
							}
						}
					}
					err = f.FinishBundle(emit, emit, emit, emit, emit, emit, emitName)
				}))
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
			b.Logf("partitions %d: %d row groups in one bundle, peak heap %.0f MB", parts, len(splits)**bundleRepeat, float64(peak)/1e6)
		})
	}
}
