package packed

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/neardup/neardup/hashing/fingerprint"
)

// Phases 2 and 3 sort every partition's records, the largest cost after
// phase 1. A comparison sort of 24- and 40-byte structs pays n log n
// comparisons and moves; these records carry a 64-bit key that is
// uniformly distributed (a shingle fingerprint, or a hash of the pair), so
// one counting pass on the key's top bits leaves a handful of records per
// bucket, which insertion sort finishes. Equal keys land in one bucket, and
// a bucket larger than bucketMax (a shingle in many documents) falls back
// to slices.SortFunc, so the worst case stays n log n.

const bucketMax = 32

// bucketSort sorts a by cmpFn, given that key orders a like cmpFn does on
// its first criterion and is uniform over 64 bits. tmp is scratch of len(a).
func bucketSort[T any](a, tmp []T, key func(*T) uint64, cmpFn func(x, y T) int) {
	n := len(a)
	if n < 64 {
		slices.SortFunc(a, cmpFn)
		return
	}
	b := min(max(bits.Len(uint(n))-2, 1), 20) // 2 to 4 records per bucket
	shift := 64 - uint(b)
	counts := make([]int32, 1<<b+1)
	for i := range a {
		counts[key(&a[i])>>shift+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	for i := range a {
		k := key(&a[i]) >> shift
		tmp[counts[k]] = a[i]
		counts[k]++
	}
	// counts[i] is now the end of bucket i.
	start := int32(0)
	for _, end := range counts[:1<<b] {
		bucket := tmp[start:end]
		if len(bucket) > bucketMax {
			slices.SortFunc(bucket, cmpFn)
		} else {
			for i := 1; i < len(bucket); i++ {
				for j := i; j > 0 && cmpFn(bucket[j], bucket[j-1]) < 0; j-- {
					bucket[j], bucket[j-1] = bucket[j-1], bucket[j]
				}
			}
		}
		start = end
	}
	copy(a, tmp)
}

// ComparePostings orders postings by (Shingle, Doc).
func ComparePostings(x, y Posting) int {
	return cmp.Or(cmp.Compare(x.Shingle, y.Shingle), cmp.Compare(x.Doc, y.Doc))
}

// PairHash is the hash a pair is partitioned and sorted by.
func PairHash(a, b uint64) uint64 { return fingerprint.Mix(a ^ (b * 0x9e3779b97f4a7c15)) }

// ComparePairs orders pairs by (PairHash, A, B, RankA): equal pairs are
// adjacent, in an order that is fixed but not that of the doc IDs.
func ComparePairs(x, y Pair) int {
	return cmp.Or(cmp.Compare(PairHash(x.A, x.B), PairHash(y.A, y.B)),
		cmp.Compare(x.A, y.A), cmp.Compare(x.B, y.B), cmp.Compare(x.RankA, y.RankA))
}

// SortPairs sorts pairs by ComparePairs.
func SortPairs(ps []Pair) {
	bucketSort(ps, make([]Pair, len(ps)), func(p *Pair) uint64 { return PairHash(p.A, p.B) }, ComparePairs)
}

func sketchKey(s *Sketch) uint64 { return s.Key }

func compareSketches(x, y Sketch) int {
	return cmp.Or(cmp.Compare(x.Key, y.Key), cmp.Compare(x.Doc, y.Doc))
}

// A partition's records come as a stream of batches, and sorting them as
// one slice held them twice or more: the slice grown by append (up to
// 2.25 times its final size at the last growth) and bucketSort's scratch.
// RangeSorter keeps each batch as it comes, ordered in place by the top
// bits of its key (one of rangeCount key ranges), and sorts one key range
// at a time into a buffer it reuses: beside the records it holds two
// buffers of about 1/rangeCount of them. Records with equal keys (a
// shingle's postings, a pair's triplets) share a key range, so each range
// holds its groups whole.

const (
	rangeBits  = 4
	rangeCount = 1 << rangeBits
	runMax     = 8192 // records a run orders in place, with scratch of its size
)

// A RangeSorter sorts records added a batch at a time (Add) and hands
// them back sorted, a key range at a time (Next). Its key must be uniform
// over 64 bits and order records as cmp does on its first criterion; the
// zero value is not usable: see NewRangeSorter.
type RangeSorter[T any] struct {
	key      func(*T) uint64
	cmp      func(x, y T) int
	runs     []sortRun[T]
	counts   [rangeCount]int
	next     int // the key range Next returns next
	out, tmp []T
	runTmp   []T
	n        int
}

// sortRun is one added run of records, ordered by key range: range r is
// recs[ends[r-1]:ends[r]] (from 0 for r = 0).
type sortRun[T any] struct {
	recs []T
	ends [rangeCount]int32
}

// NewRangeSorter returns an empty RangeSorter for key and cmp (see
// RangeSorter).
func NewRangeSorter[T any](key func(*T) uint64, cmp func(x, y T) int) *RangeSorter[T] {
	return &RangeSorter[T]{key: key, cmp: cmp}
}

// NewPostingSorter returns a RangeSorter of postings by (Shingle, Doc);
// shingles must be fingerprints (uniform over 64 bits).
func NewPostingSorter() *RangeSorter[Posting] { return NewRangeSorter(postingKey, ComparePostings) }

func postingKey(p *Posting) uint64 { return p.Shingle }

// NewSketchSorter returns a RangeSorter of sketch records by (Key, Doc);
// keys must be fingerprints.
func NewSketchSorter() *RangeSorter[Sketch] { return NewRangeSorter(sketchKey, compareSketches) }

// NewPairSorter returns a RangeSorter of pairs in ComparePairs order.
func NewPairSorter() *RangeSorter[Pair] {
	return NewRangeSorter(func(p *Pair) uint64 { return PairHash(p.A, p.B) }, ComparePairs)
}

// Len is the number of records added.
func (s *RangeSorter[T]) Len() int { return s.n }

// Add takes recs (and keeps them: the caller must not change them after)
// and orders them in place by key range, runMax records at a time. It must
// not be called after Next.
func (s *RangeSorter[T]) Add(recs []T) {
	for len(recs) > 0 {
		run := recs[:min(len(recs), runMax)]
		recs = recs[len(run):]
		var c [rangeCount + 1]int32
		for i := range run {
			c[s.key(&run[i])>>(64-rangeBits)+1]++
		}
		for r := 1; r <= rangeCount; r++ {
			s.counts[r-1] += int(c[r])
			c[r] += c[r-1]
		}
		if cap(s.runTmp) < len(run) {
			s.runTmp = make([]T, runMax)
		}
		tmp := s.runTmp[:len(run)]
		for i := range run {
			r := s.key(&run[i]) >> (64 - rangeBits)
			tmp[c[r]] = run[i]
			c[r]++
		}
		copy(run, tmp)
		sr := sortRun[T]{recs: run}
		copy(sr.ends[:], c[:rangeCount])
		s.runs = append(s.runs, sr)
		s.n += len(run)
	}
}

// Next returns the records of the next key range in order, or nil when
// every range has been returned. The slice is valid until the next call.
func (s *RangeSorter[T]) Next() []T {
	if s.next == 0 {
		s.runTmp = nil
		most := 0
		for _, c := range s.counts {
			most = max(most, c)
		}
		s.out, s.tmp = make([]T, 0, most), make([]T, most)
	}
	for ; s.next < rangeCount; s.next++ {
		r := s.next
		if s.counts[r] == 0 {
			continue
		}
		out := s.out[:0]
		for i := range s.runs {
			from := int32(0)
			if r > 0 {
				from = s.runs[i].ends[r-1]
			}
			out = append(out, s.runs[i].recs[from:s.runs[i].ends[r]]...)
		}
		bucketSort(out, s.tmp[:len(out)], func(p *T) uint64 { return s.key(p) << rangeBits }, s.cmp)
		s.next++
		return out
	}
	s.runs, s.out, s.tmp = nil, nil, nil
	return nil
}
