package pipelines

import (
	"context"

	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/tables"
)

// Lost answers Broder's "this page is gone: where did it go?" from a
// finished output: the lost table's rows for url (its cluster's live
// documents and their resemblance to it; none when the URL is not lost),
// and the URL's row of the urls table (nil when it was never seen).
func Lost(ctx context.Context, dir, url string) ([]tables.Lost, *tables.URL, error) {
	m, err := output.ReadManifest(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	if err := m.Needs(dir, "lost", tables.LostNeeds); err != nil {
		return nil, nil, err
	}
	urls, err := tables.ReadTable[tables.URL](ctx, dir, tables.URLsTable)
	if err != nil {
		return nil, nil, err
	}
	var seen *tables.URL
	for i := range urls {
		if urls[i].URL == url {
			seen = &urls[i]
			break
		}
	}
	lost, err := tables.ReadTable[tables.Lost](ctx, dir, tables.LostTable)
	if err != nil {
		return nil, nil, err
	}
	var rows []tables.Lost
	for _, l := range lost {
		if l.URL == url {
			rows = append(rows, l)
		}
	}
	return rows, seen, nil
}
