package packed

import (
	"math"
	"slices"
)

// Features is one document's whole feature set, carried to the candidate
// pairs it is in for their verification: with K 0, Values are its sorted
// distinct features (--verify=exact); otherwise they are the words of its
// Bloom filter of N features and K hash functions (--verify=bloom).
type Features struct {
	Doc    uint64
	N, K   uint32
	Values []uint64
}

// FeaturesHeader is the encoded size of Features without its values.
const FeaturesHeader = 20

// featuresLayout: the count of Values is at 16.
var featuresLayout = variable{"features", FeaturesHeader, 16, 1, 0}

// Append appends the encoding of f to b.
func (f Features) Append(b []byte) []byte {
	b = le.AppendUint64(b, f.Doc)
	b = le.AppendUint32(b, f.N)
	b = le.AppendUint32(b, f.K)
	b = le.AppendUint32(b, uint32(len(f.Values)))
	for _, v := range f.Values {
		b = le.AppendUint64(b, v)
	}
	return b
}

// AppendFeatures decodes the records in b and appends them to dst; their
// values share one allocation.
func AppendFeatures(dst []Features, b []byte) ([]Features, error) {
	arena, _, err := featuresLayout.frame(b)
	if err != nil {
		return dst, err
	}
	for len(b) > 0 {
		f := Features{Doc: le.Uint64(b), N: le.Uint32(b[8:]), K: le.Uint32(b[12:])}
		n := int(le.Uint32(b[16:]))
		b = b[FeaturesHeader:]
		f.Values, b, arena = readUint64s(b, n, arena)
		dst = append(dst, f)
	}
	return dst, nil
}

// Verified is a counted pair with the figures of its verification on the
// two documents' whole feature sets: the resemblance and the containments
// of A in B and of B in A, exact or Bloom estimates. Checked is false
// when the verification's filters proved the pair below what the policy
// could link, before computing them (the figures are then 0).
type Verified struct {
	Pair
	Resemblance, AInB, BInA float64
	Checked                 bool
}

// VerifiedSize is the encoded size of a Verified.
const VerifiedSize = PairSize + 25

// Append appends the encoding of v to b.
func (v Verified) Append(b []byte) []byte {
	b = v.Pair.Append(b)
	b = le.AppendUint64(b, math.Float64bits(v.Resemblance))
	b = le.AppendUint64(b, math.Float64bits(v.AInB))
	b = le.AppendUint64(b, math.Float64bits(v.BInA))
	if v.Checked {
		return append(b, 1)
	}
	return append(b, 0)
}

func decodeVerified(b []byte) Verified {
	r := b[PairSize:]
	return Verified{Pair: decodePair(b),
		Resemblance: math.Float64frombits(le.Uint64(r)),
		AInB:        math.Float64frombits(le.Uint64(r[8:])),
		BInA:        math.Float64frombits(le.Uint64(r[16:])),
		Checked:     r[24] == 1}
}

// AppendVerified decodes the pairs in b and appends them to dst.
func AppendVerified(dst []Verified, b []byte) ([]Verified, error) {
	return appendFixed(dst, b, VerifiedSize, "verified pairs", decodeVerified)
}

// Job is a counted pair sent away from its pair partition to be
// verified, with Part, the partition its verification goes back to.
type Job struct {
	Pair
	Part uint32
}

// JobSize is the encoded size of a Job.
const JobSize = PairSize + 4

// Append appends the encoding of j to b.
func (j Job) Append(b []byte) []byte {
	return le.AppendUint32(j.Pair.Append(b), j.Part)
}

func decodeJob(b []byte) Job {
	return Job{Pair: decodePair(b), Part: le.Uint32(b[PairSize:])}
}

// AppendJobs decodes the jobs in b and appends them to dst.
func AppendJobs(dst []Job, b []byte) ([]Job, error) {
	return appendFixed(dst, b, JobSize, "verify jobs", decodeJob)
}

// DenseFeatures is the Features record of a document's dense sample
// (sketch.Dense): N its set's size, K how many values the sample holds,
// and the 32-bit values two to a word, so that a sample travels at 4
// bytes a value.
func DenseFeatures(doc uint64, n int, sample []uint32) Features {
	f := Features{Doc: doc, N: uint32(n), K: uint32(len(sample)), Values: make([]uint64, (len(sample)+1)/2)}
	for i, v := range sample {
		f.Values[i/2] |= uint64(v) << (32 * (i % 2))
	}
	return f
}

// AppendDense appends to b the encoding of DenseFeatures(doc, n,
// sample), without making the record.
func AppendDense(b []byte, doc uint64, n int, sample []uint32) []byte {
	b = le.AppendUint64(b, doc)
	b = le.AppendUint32(b, uint32(n))
	b = le.AppendUint32(b, uint32(len(sample)))
	words := (len(sample) + 1) / 2
	b = le.AppendUint32(b, uint32(words))
	// Two values to a little-endian word are the values one after another,
	// little-endian, and a zero after an odd count: written in place
	// (phase 1 writes a sample for every page).
	at := len(b)
	b = slices.Grow(b, 8*words)[:at+8*words]
	for i, v := range sample {
		le.PutUint32(b[at+4*i:], v)
	}
	if len(sample)%2 == 1 {
		le.PutUint32(b[at+4*len(sample):], 0)
	}
	return b
}

// DenseSample appends to dst the dense sample a DenseFeatures record
// holds.
func (f Features) DenseSample(dst []uint32) []uint32 {
	for i := range int(f.K) {
		dst = append(dst, uint32(f.Values[i/2]>>(32*(i%2))))
	}
	return dst
}
