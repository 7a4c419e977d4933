package query

import (
	"cmp"
	"container/list"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/hashing/fingerprint"
	"github.com/neardup/neardup/io/output"
	"github.com/neardup/neardup/io/store"
	"github.com/neardup/neardup/io/tables"
	"github.com/neardup/neardup/shuffle/packed"
	"github.com/neardup/neardup/similarity/sketch"
)

// lookups reads an output's rows a few pages at a time: each lookup key
// names the partition its rows are in (the tables are cut by hash
// partitions of their keys: see tables.ShardPartition), and within the
// shard the page index finds its pages (tables.OpenLookup).
type lookups struct {
	dir    string
	url    fingerprint.Hasher // the urls table is cut by the URLs' fingerprints
	shards map[string][]shardRef
	ndocs  int
	total  int // clusters
	files  *fileCache

	largestFiles []string
	largestOnce  sync.Once
	largestRows  []tables.Cluster
	largestErr   error
}

// shardRef is one shard of a table and the keys it holds.
type shardRef struct {
	path     string
	part, of int
}

func newLookups(ctx context.Context, dir string, m *output.Manifest, seed uint64) (*lookups, error) {
	l := &lookups{dir: dir, url: fingerprint.New(seed), shards: map[string][]shardRef{}, ndocs: int(m.Counts["rows_"+tables.DocsTable]),
		total: int(m.Counts["rows_"+tables.ClustersTable]), files: newFileCache(maxOpenFiles)}
	for _, f := range m.Tables[tables.LargestTable] {
		l.largestFiles = append(l.largestFiles, store.Join(dir, f))
	}
	for table, files := range m.Tables {
		if table == tables.LargestTable {
			continue // one shard, of no partition
		}
		for _, f := range files {
			part, of, _, err := tables.ShardPartition(f, m.Partitions)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", dir, err)
			}
			l.shards[table] = append(l.shards[table], shardRef{store.Join(dir, f), part, of})
		}
	}
	return l, nil
}

// find reads the rows of table whose column col is v, from the shards
// holding key's partition (all: from every shard).
func find[T any](ctx context.Context, l *lookups, table string, key uint64, all bool, col string, v parquet.Value) ([]T, error) {
	var out []T
	for _, sh := range l.shards[table] {
		if !all && packed.Partition(key, sh.of) != sh.part {
			continue
		}
		err := l.files.with(ctx, sh.path, func(f *tables.LookupFile) error {
			rows, err := tables.Find[T](f, col, v)
			out = append(out, rows...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// findInt64s reads the rows of table whose INT64 column col holds one of
// keys, each shard read once for the keys of its partition.
func findInt64s[T any](ctx context.Context, l *lookups, table, col string, keys []int64) ([]T, error) {
	keys = slices.Clone(keys)
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var out []T
	for _, sh := range l.shards[table] {
		var mine []parquet.Value
		for _, k := range keys {
			if packed.Partition(uint64(k), sh.of) == sh.part {
				mine = append(mine, tables.Int64Key(k))
			}
		}
		if len(mine) == 0 {
			continue
		}
		err := l.files.with(ctx, sh.path, func(f *tables.LookupFile) error {
			rows, err := tables.FindAll[T](f, col, mine)
			out = append(out, rows...)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (l *lookups) urlDocs(ctx context.Context, url string) ([]tables.Doc, error) {
	rows, err := find[tables.URL](ctx, l, tables.URLsTable, l.url.String(url), false, "url", tables.StringKey(url))
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.DocIDs...)
	}
	out, err := l.docs(ctx, ids)
	if err != nil {
		return nil, err
	}
	if len(out) != len(ids) {
		return nil, fmt.Errorf("%s: the urls table lists docs %v for %q, and the docs table has %d of them", l.dir, ids, url, len(out))
	}
	slices.SortFunc(out, func(a, b tables.Doc) int { return cmp.Compare(a.DocID, b.DocID) })
	return out, nil
}

func (l *lookups) docs(ctx context.Context, ids []int64) ([]tables.Doc, error) {
	return findInt64s[tables.Doc](ctx, l, tables.DocsTable, "doc_id", ids)
}

func (l *lookups) doc(ctx context.Context, id int64) (*tables.Doc, error) {
	rows, err := l.docs(ctx, []int64{id})
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

func (l *lookups) members(ctx context.Context, clusters ...int64) ([]tables.Member, error) {
	return findInt64s[tables.Member](ctx, l, tables.MembersTable, "cluster_id", clusters)
}

func (l *lookups) membersFrom(ctx context.Context, cluster int64, offset, n int) ([]tables.Member, int, error) {
	var out []tables.Member
	total := 0
	for _, sh := range l.shards[tables.MembersTable] {
		if packed.Partition(uint64(cluster), sh.of) != sh.part {
			continue
		}
		err := l.files.with(ctx, sh.path, func(f *tables.LookupFile) error {
			rows, t, err := tables.FindRange[tables.Member](f, "cluster_id", tables.Int64Key(cluster), int64(offset), int64(n))
			out, total = rows, int(t)
			return err
		})
		// One shard a cluster partition: the members table is rewritten
		// by every run, never carried.
		return out, total, err
	}
	return nil, 0, nil
}

func (l *lookups) cluster(ctx context.Context, id, kept int64) (*tables.Cluster, error) {
	// The clusters table is cut by the partitions of the kept documents.
	rows, err := find[tables.Cluster](ctx, l, tables.ClustersTable, uint64(kept), kept < 0, "cluster_id", tables.Int64Key(id))
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return &rows[0], nil
}

func (l *lookups) sketch(ctx context.Context, rep int64) ([]uint64, error) {
	got, err := l.sketches(ctx, []int64{rep})
	return got[rep], err
}

func (l *lookups) sketches(ctx context.Context, reps []int64) (map[int64][]uint64, error) {
	rows, err := findInt64s[tables.Sketch](ctx, l, tables.SketchesTable, "doc_id", reps)
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]uint64, len(rows))
	for _, r := range rows {
		out[r.DocID] = uint64s(r.Sketch)
	}
	return out, nil
}

func (l *lookups) largest(ctx context.Context) ([]tables.Cluster, int, error) {
	l.largestOnce.Do(func() {
		for _, f := range l.largestFiles {
			rows, err := tables.Read[tables.Cluster](ctx, f)
			if err != nil {
				l.largestErr = err
				return
			}
			l.largestRows = append(l.largestRows, rows...)
		}
		tables.SortLargest(l.largestRows)
	})
	return l.largestRows, l.total, l.largestErr
}

// filesOf lists a table's files.
func (l *lookups) filesOf(table string) []string {
	var out []string
	for _, sh := range l.shards[table] {
		out = append(out, sh.path)
	}
	return out
}

func (l *lookups) numDocs() int { return l.ndocs }

// candidates finds the representatives sharing a value with q in the
// postings table (Broder's <shingle, doc> pairs, a representative's
// sketch values and its sketch's size): one lookup a value. An output
// without postings (--mode=supershingles, or --tables) has its sketches
// read shard by shard instead.
func (l *lookups) candidates(ctx context.Context, q []uint64) ([]candidate, error) {
	if len(l.shards[tables.PostingsTable]) == 0 {
		return l.scan(ctx, q)
	}
	keys := make([]int64, len(q))
	for i, v := range q {
		keys[i] = int64(v)
	}
	rows, err := findInt64s[tables.Posting](ctx, l, tables.PostingsTable, "shingle", keys)
	if err != nil {
		return nil, err
	}
	byDoc := map[int64]*candidate{}
	for _, r := range rows {
		c := byDoc[r.DocID]
		if c == nil {
			c = &candidate{doc: r.DocID, size: int(r.SketchSize)}
			byDoc[r.DocID] = c
		}
		c.shared++
	}
	out := make([]candidate, 0, len(byDoc))
	for _, c := range byDoc {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b candidate) int { return cmp.Compare(a.doc, b.doc) })
	return out, nil
}

// scan reads every sketches shard, one at a time, for the representatives
// sharing a value with q.
func (l *lookups) scan(ctx context.Context, q []uint64) ([]candidate, error) {
	var out []candidate
	for _, f := range l.filesOf(tables.SketchesTable) {
		rows, err := tables.ReadSketches(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if m := uint64s(r.Sketch); sketch.IntersectCount(q, m) > 0 {
				out = append(out, candidate{doc: r.DocID, sketch: m})
			}
		}
	}
	return out, nil
}

// maxOpenFiles bounds the shards a query or server keeps open: each
// holds its footer and page index (and, on an object store, the blocks
// it read last).
const maxOpenFiles = 64

// fileCache keeps the most recently used shards open for lookups.
type fileCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *openFile, most recent first
	files map[string]*list.Element
}

// openFile is one open shard; mu serializes its lookups (a LookupFile is
// not safe for concurrent use).
type openFile struct {
	mu      sync.Mutex
	name    string
	f       *tables.LookupFile
	refs    int
	evicted bool
}

func newFileCache(max int) *fileCache {
	return &fileCache{max: max, order: list.New(), files: map[string]*list.Element{}}
}

// with runs fn on the shard name, opened once and kept while it is among
// the max most recently used.
func (c *fileCache) with(ctx context.Context, name string, fn func(*tables.LookupFile) error) error {
	c.mu.Lock()
	var of *openFile
	if e, ok := c.files[name]; ok {
		c.order.MoveToFront(e)
		of = e.Value.(*openFile)
	} else {
		f, err := tables.OpenLookup(ctx, name)
		if err != nil {
			c.mu.Unlock()
			return err
		}
		of = &openFile{name: name, f: f}
		c.files[name] = c.order.PushFront(of)
		for c.order.Len() > c.max {
			last := c.order.Back()
			old := last.Value.(*openFile)
			c.order.Remove(last)
			delete(c.files, old.name)
			old.evicted = true
			if old.refs == 0 {
				old.f.Close()
			}
		}
	}
	of.refs++
	c.mu.Unlock()

	of.mu.Lock()
	err := fn(of.f)
	of.mu.Unlock()

	c.mu.Lock()
	of.refs--
	if of.evicted && of.refs == 0 {
		of.f.Close()
	}
	c.mu.Unlock()
	return err
}
