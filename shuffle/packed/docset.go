package packed

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// A doc set is a set of doc IDs packed as the uvarint differences of its
// sorted members (the first from zero): 2-3 bytes a document where the
// crawl's rows run in order, against a Posting's 22. It is for sets that
// travel whole, such as a side input every worker reads.

// AppendDocSet appends the set of docs (in any order, repeats allowed)
// to b. It sorts docs in place.
func AppendDocSet(b []byte, docs []uint64) []byte {
	slices.Sort(docs)
	var last uint64
	for i, d := range docs {
		if i > 0 && d == last {
			continue
		}
		b = binary.AppendUvarint(b, d-last)
		last = d
	}
	return b
}

// AppendDocs decodes the doc set b and appends its members, ascending, to
// dst.
func AppendDocs(dst []uint64, b []byte) ([]uint64, error) {
	var last uint64
	for first := true; len(b) > 0; first = false {
		d, n := binary.Uvarint(b)
		if n <= 0 || (!first && d == 0) {
			return dst, fmt.Errorf("doc set: bad difference at %d bytes from its end", len(b))
		}
		last += d
		dst = append(dst, last)
		b = b[n:]
	}
	return dst, nil
}
