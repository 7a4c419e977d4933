package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// LogNormal draws round(median*exp(sigma*N(0,1))) clamped to [lo, hi].
func LogNormal(r *rand.Rand, median, sigma float64, lo, hi int) int {
	return min(max(int(math.Round(median*math.Exp(sigma*r.NormFloat64()))), lo), hi)
}

// LogNormalAtLeast draws round(median*exp(sigma*N(0,1))) again until it is
// in [lo, hi] (no pile-up at the bounds).
func LogNormalAtLeast(r *rand.Rand, median, sigma float64, lo, hi int) int {
	for {
		x := int(math.Round(median * math.Exp(sigma*r.NormFloat64())))
		if x >= lo && x <= hi {
			return x
		}
	}
}

// AppendUUID appends a random (version 4) UUID as FineWeb writes its ids,
// <urn:uuid:...>, made of two 64-bit draws from r.
func AppendUUID(b []byte, r *rand.Rand) []byte {
	hi, lo := r.Uint64(), r.Uint64()
	return fmt.Appendf(b, "<urn:uuid:%08x-%04x-4%03x-%04x-%012x>", hi>>32, hi>>16&0xffff, hi&0xfff, lo>>48&0x3fff|0x8000, lo&0xffffffffffff)
}

// Mix64 is splitmix64's finalizer: 64 well-mixed bits of x.
func Mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
