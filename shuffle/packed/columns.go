package packed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Phase 3's pair triplets are the largest shuffle of a run with many
// near-duplicates (101M triplets, 670 MB sealed, for a gigabyte of grown
// real text), and a runner holds a shuffle several times over (the
// embedded Prism runner: its store, the bundle it builds, the data
// channel's buffers on both sides). A triplet is two doc IDs and small
// numbers; sealed as Append lays them out, zstd finds little to share
// between their bytes. Sorted by pair and written a field at a time, each
// value as the uvarint of its difference from the one before it where the
// sort makes that small (a document's next pair, the same pair's next
// shared shingle), a batch shrinks to about a third of that before it is
// sealed.

// PackPairs appends to dst the pairs of batch (encoded by Pair.Append),
// sorted by A and written a field at a time; AppendPackedPairs decodes
// them. It sorts a decoded copy, not batch.
func PackPairs(dst, batch []byte) []byte {
	ps, err := AppendPairs(make([]Pair, 0, len(batch)/PairSize), batch)
	if err != nil {
		panic(err) // batch is the batcher's own records
	}
	ps = sortByA(ps)
	dst = slices.Grow(dst, len(batch)/2) // about what it takes (a third to a half)
	dst = binary.AppendUvarint(dst, uint64(len(ps)))
	var prevA uint64
	for _, p := range ps {
		dst = binary.AppendUvarint(dst, p.A-prevA)
		prevA = p.A
	}
	for i, p := range ps {
		if i > 0 && p.A == ps[i-1].A {
			dst = binary.AppendVarint(dst, int64(p.B-ps[i-1].B))
		} else {
			dst = binary.AppendVarint(dst, int64(p.B-p.A)) // B > A in every pair; signed all the same
		}
	}
	// Written out, not a loop over field getters: this runs for every
	// triplet of phase 3.
	for _, p := range ps {
		dst = binary.AppendUvarint(dst, uint64(p.Count))
	}
	for _, p := range ps {
		dst = binary.AppendUvarint(dst, uint64(p.SizeA))
	}
	for _, p := range ps {
		dst = binary.AppendUvarint(dst, uint64(p.SizeB))
	}
	for _, p := range ps {
		dst = binary.AppendUvarint(dst, uint64(p.RankA))
	}
	for _, p := range ps {
		dst = binary.AppendUvarint(dst, uint64(p.RankB))
	}
	for _, p := range ps {
		dst = binary.AppendUvarint(dst, uint64(p.MinShared))
	}
	return dst
}

// sortByA sorts ps by A, stably, and returns the sorted copy: a
// least-significant-digit radix sort of (A, index) over the bytes in which
// the batch's A differ (doc IDs of a few files differ in three to six),
// then one gather of the records.
func sortByA(ps []Pair) []Pair {
	type keyed struct {
		a uint64
		i int
	}
	keys, tmp := make([]keyed, len(ps)), make([]keyed, len(ps))
	var diff uint64
	for i, p := range ps {
		keys[i] = keyed{p.A, i}
		diff |= p.A ^ ps[0].A
	}
	var counts [256]int
	for shift := uint(0); shift < 64 && diff>>shift != 0; shift += 8 {
		if (diff>>shift)&0xff == 0 {
			continue
		}
		counts = [256]int{}
		for _, k := range keys {
			counts[byte(k.a>>shift)]++
		}
		at := 0
		for d, c := range counts {
			counts[d] = at
			at += c
		}
		for _, k := range keys {
			d := byte(k.a >> shift)
			tmp[counts[d]] = k
			counts[d]++
		}
		keys, tmp = tmp, keys
	}
	out := make([]Pair, len(ps))
	for i, k := range keys {
		out[i] = ps[k.i]
	}
	return out
}

// PackedPairsLen is the number of pairs in a batch PackPairs wrote, read
// from its head without decoding them.
func PackedPairsLen(b []byte) (int, error) {
	r := columnReader{b: b}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(b))/8 {
		return 0, packedPairsError(len(b), r.err)
	}
	return int(n), nil
}

// AppendPackedPairs decodes a batch PackPairs wrote and appends its pairs
// to dst.
func AppendPackedPairs(dst []Pair, b []byte) ([]Pair, error) {
	r := columnReader{b: b}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(b))/8 { // every pair takes at least 8 bytes
		return dst, packedPairsError(len(b), r.err)
	}
	start := len(dst)
	dst = slices.Grow(dst, int(n))[:start+int(n)]
	ps := dst[start:]
	var a uint64
	for i := range ps {
		a += r.uvarint()
		ps[i].A = a
	}
	for i := range ps {
		if i > 0 && ps[i].A == ps[i-1].A {
			ps[i].B = ps[i-1].B + uint64(r.varint())
		} else {
			ps[i].B = ps[i].A + uint64(r.varint())
		}
	}
	for i := range ps {
		ps[i].Count = r.uint32()
	}
	for i := range ps {
		ps[i].SizeA = r.uint32()
	}
	for i := range ps {
		ps[i].SizeB = r.uint32()
	}
	for i := range ps {
		ps[i].RankA = uint16(r.uint32())
	}
	for i := range ps {
		ps[i].RankB = uint16(r.uint32())
	}
	for i := range ps {
		ps[i].MinShared = r.uint32()
	}
	if r.err != nil || len(r.b) > 0 {
		return dst[:start], packedPairsError(len(b), r.err)
	}
	return dst, nil
}

func packedPairsError(size int, err error) error {
	if err == nil {
		err = errors.New("bytes left over")
	}
	return fmt.Errorf("packed: packed pairs batch of %d bytes: %w", size, err)
}

// columnReader reads the varints of a column-wise batch, remembering the
// first error (a truncated or overlong value).
type columnReader struct {
	b   []byte
	err error
}

func (r *columnReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		if r.err == nil {
			r.err = errors.New("truncated or overlong varint")
		}
		r.b = nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

// varint reads a signed varint: binary.AppendVarint's zig-zag encoding
// of a uvarint, undone as binary.Varint does.
func (r *columnReader) varint() int64 {
	u := r.uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

func (r *columnReader) uint32() uint32 {
	v := r.uvarint()
	if v > 1<<32-1 && r.err == nil {
		r.err = errors.New("value over 32 bits")
	}
	return uint32(v)
}
