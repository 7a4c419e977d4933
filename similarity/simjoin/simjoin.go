// Package simjoin computes the exact set-similarity self-join: every pair of
// records whose Jaccard similarity |A∩B| / |A∪B| is at least a threshold t.
//
// It is the exact reference that neardup's quality harness compares the
// sketch-based resemblance estimates against (package sketch): on the
// shingle-fingerprint sets of a sample corpus it yields the true pairs
// above the threshold, so the harness can measure the precision and recall
// of the MOD_m / MIN_s pipeline. Being a reference, it must never miss a
// pair, and it must be fast enough to run on tens of thousands of
// documents, which rules out the O(n²) comparison that BruteForce does.
//
// The algorithm is ppjoin+ from C. Xiao, W. Wang, X. Lin and J. X. Yu,
// "Efficient Similarity Joins for Near Duplicate Detection", WWW 2008. It
// turns J(x,y) >= t into the overlap bound |x∩y| >= α = ⌈t/(1+t)·(|x|+|y|)⌉
// and applies cheap necessary conditions in turn, so that only a few pairs
// are ever merged in full:
//
//   - global ordering: tokens are renamed to ranks by increasing document
//     frequency, so record prefixes consist of rare tokens and the inverted
//     lists probed are short;
//   - length filtering: y can only match x if |y| >= t·|x|; records are
//     processed by increasing length, so too-short records are dropped from
//     the front of each inverted list for good;
//   - prefix filtering: matching records share a token within the first
//     |x| - ⌈t·|x|⌉ + 1 tokens of x, and (Lemma 3, the indexing prefix)
//     within the first |y| - ⌈2t/(1+t)·|y|⌉ + 1 tokens of the shorter y, so
//     only those are probed and indexed;
//   - positional filtering: the overlap seen so far plus the tokens left
//     to the right of the current positions bounds the final overlap;
//   - suffix filtering: on a pair's first shared token, the unindexed
//     suffixes are partitioned recursively (to depth MaxDepth) around probe
//     tokens to lower-bound their Hamming distance;
//   - verification: surviving pairs are merged from the positions of their
//     last shared prefix token, stopping as soon as α is out of reach.
//
// The final decision for each pair is float64(|x∩y|)/float64(|x∪y|) >= t,
// the same expression BruteForce uses; all bounds used by the filters are
// rounded towards admitting pairs, so a pair whose Jaccard is exactly t is
// never filtered out by floating-point error.
package simjoin

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// MaxDepth is the recursion depth of the suffix filter (MAXDEPTH in the
// paper). Each level partitions the unindexed suffixes of a candidate pair
// around one more probe token and costs a binary search per level; the
// paper found 2 the best balance between pruning power and that overhead,
// and deeper levels rarely pay off on long shingle sets whose suffixes
// differ a lot.
const MaxDepth = 2

// Record is one document's set: Tokens sorted ascending and distinct (e.g. its w-shingle fingerprints).
type Record struct {
	ID     uint64
	Tokens []uint64
}

// Pair is a result: A < B (record IDs), with the exact Jaccard and intersection size.
type Pair struct {
	A, B    uint64
	Jaccard float64
	Overlap int
}

// Stats counts the work done, for the quality tool and benchmarks.
//
// Candidates counts the distinct pairs that pass the length filter and
// share a token between the probing prefix of one and the indexing prefix
// of the other. Each candidate is then either PositionalPruned,
// SuffixPruned or Verified (merged to compute its overlap), so
// Candidates == PositionalPruned + SuffixPruned + Verified. Results is the
// number of pairs returned.
type Stats struct{ Candidates, PositionalPruned, SuffixPruned, Verified, Results int }

// eps absorbs the rounding error of t·n and t/(1+t)·n, so that ⌈·⌉ of a
// value that is mathematically an integer is not bumped to the next
// integer; a slightly smaller bound only admits more candidates, which
// verification then decides exactly.
const eps = 1e-9

// ceilLow returns ⌈v⌉, or one less when v lies within a relative eps above
// an integer; it never exceeds the true ceiling.
func ceilLow(v float64) int {
	return int(math.Ceil(v - eps*math.Max(1, v)))
}

// validThreshold reports whether t is in (0, 1]; NaN fails both tests.
func validThreshold(t float64) bool { return t > 0 && t <= 1 }

// Join returns every pair of records with Jaccard(A, B) >= t (0 < t <= 1), sorted by (A, B), using ppjoin+. Empty records never pair. Records with duplicate IDs are an error.
//
// Tokens that are not strictly ascending are an error too, since every
// filter relies on a consistent order. The input is not modified.
func Join(records []Record, t float64) ([]Pair, Stats, error) {
	var st Stats
	c, err := prepare(records, t)
	if err != nil {
		return nil, st, err
	}
	if len(c.ids) < 2 {
		return []Pair{}, st, nil
	}
	j := newJoiner(c, t)
	for x := range c.ids {
		j.probe(int32(x), &st)
	}
	pairs := j.out
	if pairs == nil {
		pairs = []Pair{}
	}
	slices.SortFunc(pairs, func(a, b Pair) int {
		if c := cmp.Compare(a.A, b.A); c != 0 {
			return c
		}
		return cmp.Compare(a.B, b.B)
	})
	st.Results = len(pairs)
	return pairs, st, nil
}

// prepare checks the threshold and the records, and renames the tokens
// of the non-empty records to ranks, in length order.
func prepare(records []Record, t float64) (canon, error) {
	if !validThreshold(t) {
		return canon{}, fmt.Errorf("simjoin: threshold %v not in (0, 1]", t)
	}
	if len(records) > math.MaxInt32 {
		return canon{}, errors.New("simjoin: too many records")
	}
	if err := validate(records); err != nil {
		return canon{}, err
	}
	return canonicalize(records), nil
}

func validate(records []Record) error {
	ids := make([]uint64, len(records))
	for i, r := range records {
		ids[i] = r.ID
		for k := 1; k < len(r.Tokens); k++ {
			if r.Tokens[k-1] >= r.Tokens[k] {
				return fmt.Errorf("simjoin: record %d: tokens not sorted ascending and distinct at index %d", r.ID, k)
			}
		}
	}
	slices.Sort(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i-1] == ids[i] {
			return fmt.Errorf("simjoin: duplicate record ID %d", ids[i])
		}
	}
	return nil
}

// canon holds the non-empty records in processing order (length, then ID)
// with their tokens renamed to frequency ranks.
type canon struct {
	ids  []uint64
	toks [][]uint32 // ascending ranks; rank order = increasing document frequency
	// nSingle is the number of tokens that occur in one record only. They
	// get the lowest ranks and can never be shared, so they are neither
	// indexed nor probed.
	nSingle uint32
}

func canonicalize(records []Record) canon {
	total := 0
	order := make([]int, 0, len(records))
	for i, r := range records {
		if len(r.Tokens) > 0 {
			total += len(r.Tokens)
			order = append(order, i)
		}
	}
	// Length first is what length filtering and Lemma 3 need (every indexed
	// record is no longer than the probing one); ID breaks ties so the run
	// is deterministic whatever the input order.
	slices.SortFunc(order, func(a, b int) int {
		ra, rb := &records[a], &records[b]
		if c := cmp.Compare(len(ra.Tokens), len(rb.Tokens)); c != 0 {
			return c
		}
		return cmp.Compare(ra.ID, rb.ID)
	})

	// Counting frequencies is most of the cost of a join on shingle sets,
	// so each occurrence costs one probe of a flat table, which also keeps
	// the count, and remembers its slot for the rank lookup below.
	tab := newTokenTable(total)
	occ := make([]uint32, total)
	k := 0
	for _, i := range order {
		for _, tok := range records[i].Tokens {
			occ[k] = tab.add(tok)
			k++
		}
	}
	nDistinct := tab.n
	df := make([]uint32, nDistinct)
	type shared struct {
		df, slot uint32
		tok      uint64
	}
	var multi []shared
	for _, e := range tab.entries {
		if e.slot == 0 {
			continue
		}
		df[e.slot-1] = e.df
		if e.df > 1 {
			multi = append(multi, shared{e.df, e.slot - 1, e.tok})
		}
	}
	// Tokens in one record only ("singletons") rank first, numbered in
	// order of appearance as the records are laid out below, so they come
	// out ascending within their record and only the shared tokens need
	// sorting. Their order among themselves cannot change any result or
	// count: they are never indexed, probed or merged. Shared tokens are
	// ordered by increasing document frequency, ties by token value.
	const single = math.MaxUint32
	rank := make([]uint32, nDistinct)
	var nSingle uint32
	for s, f := range df {
		if f == 1 {
			rank[s] = single
			nSingle++
		}
	}
	slices.SortFunc(multi, func(a, b shared) int {
		if c := cmp.Compare(a.df, b.df); c != 0 {
			return c
		}
		return cmp.Compare(a.tok, b.tok)
	})
	for r, m := range multi {
		rank[m.slot] = nSingle + uint32(r)
	}

	c := canon{ids: make([]uint64, len(order)), toks: make([][]uint32, len(order)), nSingle: nSingle}
	flat := make([]uint32, total)
	var nextSingle uint32
	k = 0
	for n, i := range order {
		m := len(records[i].Tokens)
		ts := flat[k : k+m : k+m]
		lo, hi := 0, m
		for _, s := range occ[k : k+m] {
			if r := rank[s]; r == single {
				ts[lo] = nextSingle
				nextSingle++
				lo++
			} else {
				hi--
				ts[hi] = r
			}
		}
		slices.Sort(ts[lo:])
		c.ids[n] = records[i].ID
		c.toks[n] = ts
		k += m
	}
	return c
}

// tokenTable is an open-addressing hash table from token to a dense slot
// number and document frequency. It beats a Go map
// here because the count lives in the probed entry: one cache miss per
// token occurrence instead of two or three.
type tokenTable struct {
	entries []tableEntry
	shift   uint // 64 - log2(len(entries))
	n       int
}

type tableEntry struct {
	tok      uint64
	slot, df uint32 // slot is 1-based; 0 marks an empty entry
}

func newTokenTable(total int) *tokenTable {
	t := &tokenTable{}
	t.resize(max(64, min(total, 1<<20)))
	return t
}

func (t *tokenTable) resize(want int) {
	size := 1
	for size < 2*want {
		size <<= 1
	}
	old := t.entries
	t.entries = make([]tableEntry, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	mask := uint64(size - 1)
	for _, e := range old {
		if e.slot == 0 {
			continue
		}
		h := (e.tok * 0x9e3779b97f4a7c15) >> t.shift
		for t.entries[h].slot != 0 {
			h = (h + 1) & mask
		}
		t.entries[h] = e
	}
}

// add counts one occurrence of tok and returns its 0-based slot.
func (t *tokenTable) add(tok uint64) uint32 {
	mask := uint64(len(t.entries) - 1)
	h := (tok * 0x9e3779b97f4a7c15) >> t.shift // Fibonacci hashing: top bits mix every key bit
	for {
		e := &t.entries[h]
		if e.slot == 0 {
			break
		}
		if e.tok == tok {
			e.df++
			return e.slot - 1
		}
		h = (h + 1) & mask
	}
	t.n++
	t.entries[h] = tableEntry{tok: tok, slot: uint32(t.n), df: 1}
	if 2*t.n > len(t.entries) {
		t.resize(2 * t.n)
	}
	return uint32(t.n - 1)
}

type posting struct {
	rec, pos int32
}

type joiner struct {
	canon
	t     float64
	ratio float64 // t/(1+t): α = ⌈ratio·(|x|+|y|)⌉

	// Inverted lists by rank - nSingle (singletons are never indexed).
	// Postings before start[w] are too short for every later probe, as
	// records come in increasing length: the length filter drops them for
	// good instead of skipping them on every probe.
	index [][]posting
	start []int32

	// Per-probe accumulator, indexed by record; reset via touched.
	// acc < 0 marks a pair already pruned, so a later shared token cannot
	// revive it: the paper's A[y] ← 0 would let it be filtered, counted and
	// verified again from a partial overlap, wasted work on a pair already
	// proven dissimilar.
	acc     []int32
	lastX   []int32 // position in x of the last shared prefix token
	lastY   []int32 // position in y of the same token
	touched []int32
	alpha   []int // α by |y| - minLen for the current x

	out []Pair
}

func newJoiner(c canon, t float64) *joiner {
	n := len(c.ids)
	nTok := 0
	for _, ts := range c.toks {
		if m := int(ts[len(ts)-1]) + 1; m > nTok {
			nTok = m
		}
	}
	return &joiner{
		canon: c,
		t:     t,
		ratio: t / (1 + t),
		index: make([][]posting, nTok-int(c.nSingle)),
		start: make([]int32, nTok-int(c.nSingle)),
		acc:   make([]int32, n),
		lastX: make([]int32, n),
		lastY: make([]int32, n),
	}
}

// prefixes are, for a record of lx tokens at threshold t, the shortest
// record it can match (length filter), its probing prefix and its
// indexing prefix (Lemma 3).
func prefixes(t float64, lx int) (minLen, probeLen, indexLen int) {
	minLen = max(1, ceilLow(t*float64(lx)))
	return minLen, lx - minLen + 1, min(lx, max(1, lx-ceilLow(2*(t/(1+t))*float64(lx))+1))
}

// probe finds the partners of record x among the records before it, then
// indexes x.
func (j *joiner) probe(x int32, st *Stats) {
	xs := j.toks[x]
	lx := len(xs)
	minLen, probeLen, indexLen := prefixes(j.t, lx)

	j.alpha = j.alpha[:0]
	for ly := minLen; ly <= lx; ly++ {
		j.alpha = append(j.alpha, max(1, ceilLow(j.ratio*float64(lx+ly))))
	}

	j.touched = j.touched[:0]
	for i := 0; i < probeLen; i++ {
		w := xs[i]
		if w < j.nSingle {
			continue
		}
		w -= j.nSingle
		list := j.index[w]
		s := j.start[w]
		for int(s) < len(list) && len(j.toks[list[s].rec]) < minLen {
			s++
		}
		j.start[w] = s
		for _, p := range list[s:] {
			y := p.rec
			a := j.acc[y]
			if a < 0 {
				continue
			}
			ys := j.toks[y]
			ly := len(ys)
			alpha := j.alpha[ly-minLen]
			if a == 0 {
				st.Candidates++
				j.touched = append(j.touched, y)
			}
			// Positional filter (Lemma 2): the a tokens shared before w,
			// plus at most the shorter of the two remainders from w on.
			if int(a)+min(lx-i, ly-int(p.pos)) < alpha {
				j.acc[y] = -1
				st.PositionalPruned++
				continue
			}
			if a == 0 {
				// First shared token, so x[:i] and y[:pos] are disjoint and
				// contribute i+pos to the Hamming distance (Algorithm 5).
				hmax := lx + ly - 2*alpha - (i + int(p.pos))
				if suffixFilter(xs[i+1:], ys[p.pos+1:], hmax, 1) > hmax {
					j.acc[y] = -1
					st.SuffixPruned++
					continue
				}
			}
			j.acc[y] = a + 1
			j.lastX[y] = int32(i)
			j.lastY[y] = p.pos
		}
		if i < indexLen {
			j.index[w] = append(j.index[w], posting{rec: x, pos: int32(i)})
		}
	}

	for _, y := range j.touched {
		if j.acc[y] > 0 {
			st.Verified++
			j.verify(x, y, probeLen, minLen)
		}
		j.acc[y] = 0
	}
}

// verify computes the overlap of a surviving candidate and records the
// pair if it meets t.
//
// Every shared token in x[:lastX+1] × y[:lastY+1] has been counted in acc,
// since those positions lie inside x's probing prefix and y's indexing
// prefix, and no token beyond lastX in x can equal one up to lastY in y
// (they compare against the same token). So only the two tails need a
// merge. Algorithm 2's refinement shortens one tail further: if x's
// probing prefix ends before y's indexing prefix in token order, then all
// of x's prefix has been matched against all of y and x can start after
// its prefix, and symmetrically.
func (j *joiner) verify(x, y int32, probeLen, minLen int) {
	xs, ys := j.toks[x], j.toks[y]
	lx, ly := len(xs), len(ys)
	alpha := j.alpha[ly-minLen]
	o := int(j.acc[y])
	sx, sy := int(j.lastX[y])+1, int(j.lastY[y])+1
	_, _, yIndexLen := prefixes(j.t, ly)
	wx, wy := xs[probeLen-1], ys[yIndexLen-1]
	if wx <= wy {
		sx = probeLen
	}
	if wy <= wx {
		sy = yIndexLen
	}
	if o = mergeOverlap(xs, ys, sx, sy, o, alpha); o < alpha {
		return
	}
	jac := float64(o) / float64(lx+ly-o)
	if jac < j.t {
		return
	}
	a, b := j.ids[x], j.ids[y]
	if a > b {
		a, b = b, a
	}
	j.out = append(j.out, Pair{A: a, B: b, Jaccard: jac, Overlap: o})
}

// mergeOverlap is o plus the tokens xs[sx:] and ys[sy:] share; it stops,
// returning less than alpha, as soon as alpha is out of reach.
func mergeOverlap(xs, ys []uint32, sx, sy, o, alpha int) int {
	lx, ly := len(xs), len(ys)
	for sx < lx && sy < ly {
		if o+min(lx-sx, ly-sy) < alpha {
			return o
		}
		switch a, b := xs[sx], ys[sy]; {
		case a < b:
			sx++
		case a > b:
			sy++
		default:
			o++
			sx++
			sy++
		}
	}
	return o
}

// suffixFilter returns a lower bound of the Hamming distance |x △ y|, or
// any value above hmax once it is certain that the distance exceeds hmax
// (Algorithm 3). It splits y at its middle token w and x at the place w
// would occupy; tokens on different sides of w cannot match, so the
// distance is the sum over the two sides, each at least the difference in
// their sizes, and each side is refined recursively.
func suffixFilter[T cmp.Ordered](x, y []T, hmax, depth int) int {
	nx, ny := len(x), len(y)
	delta := abs(nx - ny)
	if depth > MaxDepth || nx == 0 || ny == 0 || delta > hmax {
		return delta
	}
	mid := (ny+1)/2 - 1
	w := y[mid]

	// With p tokens of x below w, the bound is |p-mid| + |Δ-(p-mid)| for
	// Δ = nx-ny, so p is confined to a window around mid of half-width
	// (hmax-|Δ|)/2, widened by |Δ| on the side of the longer set. Outside
	// it the pair is already lost, and inside it a short binary search
	// replaces one over all of x (Algorithm 4's search range).
	o := (hmax - delta) / 2
	lo, hi := mid-o, mid+o
	if nx < ny {
		lo -= delta
	} else {
		hi += delta
	}
	lo, hi = max(lo, 0), min(hi, nx)
	if lo > hi || (lo > 0 && x[lo-1] >= w) || (hi < nx && x[hi] < w) {
		return hmax + 1
	}
	p := lo
	for q := hi; p < q; { // first index in [lo, hi) with x[index] >= w, else hi
		h := int(uint(p+q) >> 1)
		if x[h] < w {
			p = h + 1
		} else {
			q = h
		}
	}

	xl, yl, yr := x[:p], y[:mid], y[mid+1:]
	xr := x[p:]
	diff := 1 // w is in y only
	if p < nx && x[p] == w {
		xr = x[p+1:]
		diff = 0
	}
	dr := abs(len(xr) - len(yr))
	h := abs(len(xl)-len(yl)) + dr + diff
	if h > hmax {
		return h
	}
	hl := suffixFilter(xl, yl, hmax-dr-diff, depth+1)
	if h = hl + dr + diff; h > hmax {
		return h
	}
	return hl + suffixFilter(xr, yr, hmax-hl-diff, depth+1) + diff
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// MinOverlap is ppjoin+'s overlap bound: sets of sizes nx and ny have
// Jaccard at least t only if they share at least this many tokens,
// ⌈t/(1+t)·(nx+ny)⌉ (rounded towards admitting pairs, see ceilLow).
func MinOverlap(t float64, nx, ny int) int {
	return max(0, ceilLow(t/(1+t)*float64(nx+ny)))
}

// ProbePrefix is the length of the prefix of a set of n tokens, in the
// join's global order, that shares a token with every set it has Jaccard
// t or more with: n - ⌈t·n⌉ + 1 (the probing prefix; at least 1, at most
// n). Distributed prefix filtering (neardup's --mode=exact) keys documents
// by these tokens.
func ProbePrefix(t float64, n int) int {
	return min(n, max(1, n-ceilLow(t*float64(n))+1))
}

// PositionMayMatch is ppjoin+'s length and positional filters for two
// sets of sizes nx and ny whose first shared token is at positions i and
// j of their prefixes: whether their Jaccard may still reach t. At their
// first shared token no token before it is shared, so the overlap is at
// most 1 plus the shorter remainder. Asked at every shared prefix token,
// it may turn a matching pair away at a later one, never at its first:
// the pair is still found there.
func PositionMayMatch(t float64, nx, ny, i, j int) bool {
	if min(nx, ny) < ceilLow(t*float64(max(nx, ny))) {
		return false
	}
	return 1+min(nx-i-1, ny-j-1) >= MinOverlap(t, nx, ny)
}

// Overlap verifies one candidate pair, as Join verifies the pairs it
// finds, for callers that find their candidates elsewhere (neardup's
// --verify=exact): x and y are sorted distinct sets in any one global
// order, alpha the overlap a match needs. It returns |x∩y| and true when
// the overlap is at least alpha; false, and a lower overlap, as soon as
// the filters prove it below: the suffix filter on the whole sets first,
// then the merge, stopping when the overlap so far plus the shorter
// remainder falls short of alpha (positional filtering).
func Overlap[T cmp.Ordered](x, y []T, alpha int) (overlap int, ok bool) {
	lx, ly := len(x), len(y)
	if alpha > min(lx, ly) {
		return 0, false
	}
	alpha = max(alpha, 0)
	if hmax := lx + ly - 2*alpha; suffixFilter(x, y, hmax, 1) > hmax {
		return 0, false
	}
	o, i, k := 0, 0, 0
	for i < lx && k < ly {
		if o+min(lx-i, ly-k) < alpha {
			return o, false
		}
		switch a, b := x[i], y[k]; {
		case a < b:
			i++
		case a > b:
			k++
		default:
			o++
			i++
			k++
		}
	}
	return o, o >= alpha
}

// BruteForce is the O(n^2) reference used by tests.
//
// It compares every pair of non-empty records with the same decision as
// Join, float64(|A∩B|)/float64(|A∪B|) >= t, and returns the pairs sorted by
// (A, B). It assumes distinct IDs and sorted distinct tokens, and returns
// nil for a threshold outside (0, 1].
func BruteForce(records []Record, t float64) []Pair {
	if !validThreshold(t) {
		return nil
	}
	out := []Pair{}
	for i := range records {
		a := records[i].Tokens
		if len(a) == 0 {
			continue
		}
		for k := i + 1; k < len(records); k++ {
			b := records[k].Tokens
			if len(b) == 0 {
				continue
			}
			o := intersect(a, b)
			jac := float64(o) / float64(len(a)+len(b)-o)
			if jac < t {
				continue
			}
			p := Pair{A: records[i].ID, B: records[k].ID, Jaccard: jac, Overlap: o}
			if p.A > p.B {
				p.A, p.B = p.B, p.A
			}
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(p, q Pair) int {
		if c := cmp.Compare(p.A, q.A); c != 0 {
			return c
		}
		return cmp.Compare(p.B, q.B)
	})
	return out
}

func intersect(a, b []uint64) int {
	n := 0
	for i, k := 0, 0; i < len(a) && k < len(b); {
		switch {
		case a[i] < b[k]:
			i++
		case a[i] > b[k]:
			k++
		default:
			n++
			i++
			k++
		}
	}
	return n
}
