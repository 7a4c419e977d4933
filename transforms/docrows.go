package transforms

import (
	"context"

	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
)

// docRowBytes is about what a docs row holds in memory.
func docRowBytes(d *tables.Doc) int {
	n := 160 + len(d.SourceFile)
	for _, p := range []*string{d.ID, d.URL, d.Date, d.Reason} {
		if p != nil {
			n += len(*p)
		}
	}
	return n
}

// emitDocRows packs each doc partition's docs-table rows into one sealed
// element keyed by the partition.
func emitDocRows(ctx context.Context, byPartition [][]tables.Doc, emit func(int, []byte)) error {
	for p, rows := range byPartition {
		if len(rows) == 0 {
			continue
		}
		b, err := tables.Encode(rows)
		if err != nil {
			return err
		}
		b = packed.Seal(nil, b)
		emit(p, b)
		metaElements.Inc(ctx, 1)
		metaBytes.Inc(ctx, int64(len(b)))
	}
	return nil
}

// openDocRows decodes one element of emitDocRows: a partition's docs rows.
func openDocRows(sealed []byte) ([]tables.Doc, error) {
	b, err := packed.Open(nil, sealed)
	if err != nil {
		return nil, err
	}
	return tables.Decode[tables.Doc](nil, b)
}
