package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/neardup/neardup/clustering/policy"
	"github.com/neardup/neardup/features/rowsketch"
	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/settings"
	"github.com/neardup/neardup/similarity/bloom"
	"github.com/neardup/neardup/text/canon"
	"github.com/neardup/neardup/text/stopword"
	"github.com/neardup/neardup/views/rankgroup"
)

// groupRow is one row of the groups table "runner group" writes: one per
// input row, in input order.
type groupRow struct {
	Row         int64   `parquet:"row"`         // the input row's index (from 0)
	ID          *string `parquet:"id,optional"` // its id or URL, when the input has one
	Rank        float64 `parquet:"rank"`
	Group       int64   `parquet:"group"` // the row of its group's anchor
	Anchor      bool    `parquet:"anchor"`
	Resemblance float64 `parquet:"resemblance"` // Bloom estimates against the anchor (1 for the anchor)
	Containment float64 `parquet:"containment"` // of the row's features in the anchor's
	Features    int32   `parquet:"features"`
}

// groupsTable is the folder of the groups table in --output.
const groupsTable = "groups"

// groupLog is where groupMain prints its summary.
var groupLog io.Writer = os.Stderr

// groupMain is "runner group": Jain et al.'s refinement of a ranked result
// list. Every document of one Parquet file gets a Bloom filter of its
// features; documents whose filters estimate a link under the policy are
// grouped, and each group is anchored on its best-ranked member.
func groupMain(ctx context.Context, args []string) error {
	start := time.Now()
	fs := flag.NewFlagSet("group", flag.ContinueOnError)
	in := fs.String("input", "", "a Parquet file of ranked results, one document a row (local, gs://, s3://)")
	rankCol := fs.String("rank-column", "", "the column of the results' ranks, any integer or float type; lower is better")
	out := fs.String("output", "", "a local folder: the table goes in its groups/ folder")
	textCol := fs.String("text-column", "text", "the column of the documents' text")
	idCol := fs.String("id-column", "", "a column of ids or URLs copied to the output (default: id, else url, if the input has one)")
	featuresSpec := fs.String("features", "", "each document's features: words:W (its W-word shingles; default words:10) or chunks:C (its content-defined chunks of about C bytes, Jain et al.'s)")
	policySpec := fs.String("policy", policy.Default.String(), "which pairs link: resemblance:T, containment:T, or both comma-separated, of the Bloom filters' estimates")
	bitsPerFeature := fs.Int("bloom-bits", bloom.DefaultBitsPerFeature, "Bloom filter bits per feature, 1 to 64 (m/n, rounded up to a power of two), as the runner's --bloom-bits")
	stopwords := fs.String("stopwords", "", "a language code: its stop words make no features, as the runner's --stopwords")
	seedValue := fs.Uint64("seed", fingerprint.DefaultSeed, "fingerprint seed")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *in == "" || *rankCol == "" || *out == "" || fs.NArg() > 0 {
		return usage("group needs --input (a Parquet file), --rank-column and --output (a folder)")
	}
	if strings.Contains(*out, "://") {
		return usage("--output %s: group writes to a local folder", *out)
	}
	cfg := settings.Default()
	cfg.Seed, cfg.Stopwords = *seedValue, *stopwords
	if *stopwords != "" {
		if err := stopword.Check(*stopwords); err != nil {
			return usage("--stopwords: %v", err)
		}
	}
	if *featuresSpec != "" {
		if err := cfg.SetFeatures(*featuresSpec); err != nil {
			return usage("--features: %v", err)
		}
	}
	pol, err := policy.Parse(*policySpec)
	if err != nil {
		return usage("--policy: %v", err)
	}
	if *bitsPerFeature < 1 || *bitsPerFeature > 64 {
		return usage("--bloom-bits %d: want 1 to 64", *bitsPerFeature)
	}
	idName, idGiven := *idCol, *idCol != ""
	res, err := readResults(ctx, *in, *textCol, *rankCol, idName, idGiven)
	if err != nil {
		return err
	}
	filters, counts, err := featureFilters(cfg, res.texts, *bitsPerFeature)
	if err != nil {
		return err
	}
	docs := make([]rankgroup.Doc, len(filters))
	for i := range docs {
		docs[i] = rankgroup.Doc{Rank: res.ranks[i], Filter: filters[i]}
	}
	members, err := rankgroup.Group(docs, pol)
	if err != nil {
		return fmt.Errorf("%s: %w", *in, err)
	}
	rows := make([]groupRow, len(members))
	groups, grouped, largest := 0, 0, 0
	sizes := make([]int, len(members))
	for i, m := range members {
		rows[i] = groupRow{Row: int64(i), Rank: res.ranks[i], Group: int64(m.Group), Anchor: m.Anchor,
			Resemblance: m.Resemblance, Containment: m.Containment, Features: int32(counts[i])}
		if res.ids != nil {
			rows[i].ID = res.ids[i]
		}
		if m.Anchor {
			groups++
		} else {
			grouped++
		}
		sizes[m.Group]++
		largest = max(largest, sizes[m.Group])
	}
	name, err := writeGroups(*out, rows)
	if err != nil {
		return err
	}
	fmt.Fprintf(groupLog, "neardup: %d docs in %d groups (%d docs under a better-ranked anchor, largest group %d) under %s in %.2fs; %s\n",
		len(rows), groups, grouped, largest, pol, time.Since(start).Seconds(), name)
	return nil
}

// featureFilters builds every text's Bloom filter, on all cores, and
// counts its features: the features of phase 1 (RowSketcher.Features).
func featureFilters(cfg settings.Config, texts []string, bitsPerFeature int) ([]bloom.Filter, []int, error) {
	filters, counts := make([]bloom.Filter, len(texts)), make([]int, len(texts))
	// One sketcher per worker (it reuses its buffers), made before any
	// starts so that a setting it refuses is an error, not a panic.
	sketchers := make([]*rowsketch.Sketcher, max(1, min(runtime.GOMAXPROCS(0), len(texts)/16)))
	for w := range sketchers {
		var err error
		if sketchers[w], err = rowsketch.New(cfg); err != nil {
			return nil, nil, err
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, rs := range sketchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := fingerprint.New(cfg.Seed)
			var hashes, feats []uint64
			for {
				i := int(next.Add(1) - 1)
				if i >= len(texts) {
					return
				}
				hashes = canon.AppendHashes(hashes[:0], h, texts[i])
				feats = rs.Features(feats[:0], texts[i], hashes)
				filters[i] = bloom.New(feats, bitsPerFeature)
				counts[i] = len(feats)
			}
		}()
	}
	wg.Wait()
	return filters, counts, nil
}

// results are the columns group reads, by row.
type results struct {
	texts []string
	ranks []float64
	ids   []*string // nil without an id column
}

// readResults reads the text, rank and id columns of the Parquet file
// name. idName is the id column, or, unless idGiven, "id" or else "url"
// where the file has one.
func readResults(ctx context.Context, name, textName, rankName, idName string, idGiven bool) (results, error) {
	var res results
	r, size, err := store.OpenReaderAt(ctx, name)
	if err != nil {
		return res, err
	}
	defer r.Close()
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return res, fmt.Errorf("%s: %w", name, err)
	}
	lookup := func(col string) (parquet.LeafColumn, error) {
		leaf, ok := f.Schema().Lookup(col)
		if !ok {
			return leaf, fmt.Errorf("%s has no column %q", name, col)
		}
		if leaf.MaxRepetitionLevel > 0 {
			return leaf, fmt.Errorf("%s: column %q is repeated: want one value a row", name, col)
		}
		return leaf, nil
	}
	text, err := lookup(textName)
	if err != nil {
		return res, err
	}
	rank, err := lookup(rankName)
	if err != nil {
		return res, err
	}
	var id parquet.LeafColumn
	if !idGiven {
		for _, col := range []string{"id", "url"} {
			if _, ok := f.Schema().Lookup(col); ok {
				idName = col
				break
			}
		}
	}
	if idName != "" {
		if id, err = lookup(idName); err != nil {
			return res, err
		}
	}
	toRank, err := rankValue(rank)
	if err != nil {
		return res, fmt.Errorf("%s: column %q: %w", name, rankName, err)
	}
	if k := text.Node.Type().Kind(); k != parquet.ByteArray {
		return res, fmt.Errorf("%s: column %q is %s, not text", name, textName, k)
	}
	n := int(f.NumRows())
	res.texts, res.ranks = make([]string, n), make([]float64, n)
	err = eachValue(f, name, text, textName, func(row int, v parquet.Value) error {
		if v.IsNull() {
			return errors.New("null")
		}
		res.texts[row] = string(v.ByteArray())
		return nil
	})
	if err != nil {
		return res, err
	}
	err = eachValue(f, name, rank, rankName, func(row int, v parquet.Value) error {
		if v.IsNull() {
			return errors.New("null")
		}
		x, err := toRank(v)
		res.ranks[row] = x
		return err
	})
	if err != nil {
		return res, err
	}
	if idName != "" {
		toID, err := idValue(id)
		if err != nil {
			return res, fmt.Errorf("%s: column %q: %w", name, idName, err)
		}
		res.ids = make([]*string, n)
		err = eachValue(f, name, id, idName, func(row int, v parquet.Value) error {
			if !v.IsNull() {
				s := toID(v)
				res.ids[row] = &s
			}
			return nil
		})
		if err != nil {
			return res, err
		}
	}
	return res, ctx.Err()
}

// rankValue returns how a rank column's values become ranks: any integer
// (signed or not) or float column; NaN is refused.
func rankValue(leaf parquet.LeafColumn) (func(parquet.Value) (float64, error), error) {
	t := leaf.Node.Type()
	unsigned := false
	if lt := t.LogicalType(); lt != nil {
		switch v := lt.Value.(type) {
		case *format.IntType:
			unsigned = !v.IsSigned
		case *format.DecimalType:
			return nil, fmt.Errorf("a %s column: want an integer or float column", lt)
		}
	}
	if ct := t.ConvertedType(); ct != nil {
		switch *ct {
		case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
			unsigned = true
		case deprecated.Decimal:
			return nil, fmt.Errorf("a DECIMAL column: want an integer or float column")
		}
	}
	finite := func(x float64) (float64, error) {
		if x != x {
			return 0, errors.New("NaN is not a rank")
		}
		return x, nil
	}
	switch k := t.Kind(); {
	case k == parquet.Int32 && unsigned:
		return func(v parquet.Value) (float64, error) { return float64(v.Uint32()), nil }, nil
	case k == parquet.Int32:
		return func(v parquet.Value) (float64, error) { return float64(v.Int32()), nil }, nil
	case k == parquet.Int64 && unsigned:
		return func(v parquet.Value) (float64, error) { return float64(v.Uint64()), nil }, nil
	case k == parquet.Int64:
		return func(v parquet.Value) (float64, error) { return float64(v.Int64()), nil }, nil
	case k == parquet.Float:
		return func(v parquet.Value) (float64, error) { return finite(float64(v.Float())) }, nil
	case k == parquet.Double:
		return func(v parquet.Value) (float64, error) { return finite(v.Double()) }, nil
	default:
		return nil, fmt.Errorf("a %s column, not a number", k)
	}
}

// idValue returns how an id column's values become ids: text as it is,
// integers in decimal.
func idValue(leaf parquet.LeafColumn) (func(parquet.Value) string, error) {
	switch k := leaf.Node.Type().Kind(); k {
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return func(v parquet.Value) string { return string(v.ByteArray()) }, nil
	case parquet.Int32, parquet.Int64:
		return func(v parquet.Value) string { return strconv.FormatInt(v.Int64(), 10) }, nil
	default:
		return nil, fmt.Errorf("a %s column: want text or an integer for ids", k)
	}
}

// eachValue calls set with every row's value of a flat column, page by
// page; an error of set is returned naming the file, row and column.
func eachValue(f *parquet.File, name string, leaf parquet.LeafColumn, col string, set func(row int, v parquet.Value) error) error {
	buf := make([]parquet.Value, 1024)
	base := 0
	for _, rg := range f.RowGroups() {
		n := int(rg.NumRows())
		row := base
		err := tables.EachPage(rg.ColumnChunks()[leaf.ColumnIndex], func(vr parquet.ValueReader) error {
			for {
				k, err := vr.ReadValues(buf)
				for _, v := range buf[:k] {
					if row == base+n {
						return fmt.Errorf("column %q has more values than rows", col)
					}
					if err := set(row, v); err != nil {
						return fmt.Errorf("row %d: column %q: %w", row, col, err)
					}
					row++
				}
				if errors.Is(err, io.EOF) {
					return nil
				}
				if err != nil {
					return err
				}
			}
		})
		if err == nil && row != base+n {
			err = fmt.Errorf("column %q has %d values for %d rows", col, row-base, n)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		base += n
	}
	return nil
}

// writeGroups writes the groups table into dir/groups, whole or not at
// all: to a temporary file in dir, then renamed into place.
func writeGroups(dir string, rows []groupRow) (string, error) {
	final := filepath.Join(dir, groupsTable, tables.ShardName(0))
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".groups-*.parquet.tmp")
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("%s: %w", final, err)
	}
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp's 0600 is for secrets
		return fail(err)
	}
	w := parquet.NewGenericWriter[groupRow](tmp, parquet.Compression(&zstd.Codec{Level: zstd.SpeedFastest}))
	const chunk = 4096 // parquet-go cuts a page a Write
	for i := 0; i < len(rows); i += chunk {
		if _, err := w.Write(rows[i:min(i+chunk, len(rows))]); err != nil {
			return fail(err)
		}
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp.Name(), final); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return final, nil
}
