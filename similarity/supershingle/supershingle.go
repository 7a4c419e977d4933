package supershingle

import (
	"math"
	"slices"
	"strconv"

	"github.com/neardup/neardup/hashing/fingerprint"
)

// Broder appends to dst[:0] the super-shingles of a sketch: every window
// of size consecutive values of the sorted sketch (step 1, so a sketch of
// n values has n-size+1 windows), each fingerprinted with h.Combine, then
// sorted and made distinct. sortedSketch must be sorted ascending, as
// every sketch from package sketch is; it is not re-sorted here, since
// the order is what makes the meta-sketch canonical.
//
// A sketch with fewer than size values has no super-shingles and gives
// nil: Broder's warning that super-shingles do not work for short
// documents. Changing one value of the sketch without moving it in the
// sorted order changes only the size windows that contain it; a change
// that moves it also breaks the size-1 windows that spanned its old place,
// so at most 2*size-1 super-shingles are new.
//
// dst may be sortedSketch[:0]: window i is written to index i only after
// it has been read, and later windows start after i. It panics if size is
// below 1.
func Broder(dst []uint64, h fingerprint.Hasher, sortedSketch []uint64, size int) []uint64 {
	if size < 1 {
		panic("supershingle: Broder with size " + strconv.Itoa(size) + " below 1")
	}
	if len(sortedSketch) < size {
		return nil
	}
	dst = dst[:0]
	for i := 0; i+size <= len(sortedSketch); i++ {
		dst = append(dst, h.Combine(sortedSketch[i:i+size]))
	}
	slices.Sort(dst)
	// Windows of a sorted distinct sketch all differ, so duplicates are
	// 64-bit collisions; compact anyway so the output is a set.
	return slices.Compact(dst)
}

// Bands appends to dst[:0] the band fingerprints of a MinHash sketch given
// in position order (sketch.MinHashValues, not the sorted, tagged values
// of sketch.Spec.Select, whose order says nothing about positions):
// bands consecutive groups of rows = len(values)/bands positions each.
// Band j's fingerprint is h.Combine of (uint64(j), its rows' values), so
// that equal rows in different bands never collide. The output is sorted
// and distinct. Two documents share band j's fingerprint iff all rows of
// band j agree (up to 64-bit collisions), which happens with probability
// r^rows for documents of resemblance r; see LinkProbability.
//
// It panics unless bands >= 1 and len(values) is divisible by bands:
// callers validate the (rows, bands) configuration once, and a mismatch
// here is a programming error. Empty values (an empty document's sketch)
// give nil, so that empty documents do not all share bands. dst may be
// values[:0]: band j is copied out before index j is written.
func Bands(dst []uint64, h fingerprint.Hasher, values []uint64, bands int) []uint64 {
	if bands < 1 || len(values)%bands != 0 {
		panic("supershingle: Bands of " + strconv.Itoa(len(values)) + " values into " +
			strconv.Itoa(bands) + " bands")
	}
	if len(values) == 0 {
		return nil
	}
	rows := len(values) / bands
	// Combine takes one slice, so each band is copied behind its index;
	// the buffer stays on the stack for the usual band sizes.
	var stack [65]uint64
	buf := stack[:0]
	if rows+1 > len(stack) {
		buf = make([]uint64, 0, rows+1)
	}
	dst = dst[:0]
	for j := range bands {
		buf = append(buf[:0], uint64(j))
		buf = append(buf, values[j*rows:(j+1)*rows]...)
		dst = append(dst, h.Combine(buf))
	}
	slices.Sort(dst)
	return slices.Compact(dst)
}

// LinkProbability is the probability that two documents of resemblance j
// share at least one band: 1 - (1 - j^rows)^bands. It assumes, as
// MinHash's analysis does, that the positions are independent. It is
// computed as -expm1(bands * log1p(-j^rows)), which keeps its precision
// where the probability is tiny. j must be in [0, 1]; it panics if rows
// or bands is below 1.
func LinkProbability(j float64, rows, bands int) float64 {
	checkShape("LinkProbability", rows, bands)
	p := math.Pow(j, float64(rows)) // all rows of one band agree
	return -math.Expm1(float64(bands) * math.Log1p(-p))
}

// Threshold is the resemblance where LinkProbability rises most steeply,
// approximately (1/bands)^(1/rows), the rule of thumb for the resemblance
// at which banding starts to link documents. Setting the derivative of
// log(dP/dj) to zero gives the exact point, j^rows = (rows-1) /
// (rows*bands-1), which is what Threshold returns; it lies a little below
// the rule of thumb (0.392 against 0.420 for 4 rows and 32 bands). With
// one row the curve is concave and steepest at 0. It panics if rows or
// bands is below 1.
func Threshold(rows, bands int) float64 {
	checkShape("Threshold", rows, bands)
	if rows == 1 {
		return 0
	}
	r := float64(rows)
	return math.Pow((r-1)/(r*float64(bands)-1), 1/r)
}

func checkShape(fn string, rows, bands int) {
	if rows < 1 || bands < 1 {
		panic("supershingle: " + fn + " with " + strconv.Itoa(rows) + " rows and " +
			strconv.Itoa(bands) + " bands")
	}
}
