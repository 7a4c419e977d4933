package tables

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/neardup/neardup/io/store"
)

// TestFindAgainstScan: rows found by a lookup are those a scan of the
// whole shard finds, for keys present (once, in runs, across pages) and
// absent (between two pages' bounds, below and above every row), on an
// INT64 key column (the members table's cluster_id, sorted as written)
// and a string one whose values share a prefix longer than the page
// bounds keep (the urls table's url, 256 bytes).
func TestFindAgainstScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var members []Member
	for c := int64(0); len(members) < 20_000; c += 1 + r.Int64N(3) {
		for range 1 + r.IntN(7) {
			members = append(members, Member{ClusterID: c * 10, DocID: int64(len(members)), Sweep: "s", Sketch: []int64{c, -c}})
		}
	}
	mf := openLookup(t, writeShard(t, members))
	prefix := strings.Repeat("https://www.example.test/", 12) // 300 bytes
	var urls []URL
	for i := range 9_000 {
		urls = append(urls, URL{URL: fmt.Sprintf("%s%06d", prefix, i*2), Docs: 1, DocIDs: []int64{int64(i)}})
	}
	uf := openLookup(t, writeShard(t, urls))

	scanMembers := func(keys ...int64) []Member {
		var out []Member
		for _, m := range members {
			if slices.Contains(keys, m.ClusterID) {
				out = append(out, m)
			}
		}
		return out
	}
	for _, keys := range [][]int64{{0}, {10}, {members[len(members)-1].ClusterID}, {members[9000].ClusterID}, {-10}, {5}, {1 << 40},
		{members[100].ClusterID, members[15000].ClusterID, members[15001].ClusterID, 7}} {
		var vals []parquet.Value
		for _, k := range keys {
			vals = append(vals, Int64Key(k))
		}
		slices.SortFunc(vals, func(a, b parquet.Value) int { return int(a.Int64() - b.Int64()) })
		slices.Sort(keys)
		got, err := FindAll[Member](mf, "cluster_id", vals)
		if err != nil {
			t.Fatal(err)
		}
		if want := scanMembers(keys...); !reflect.DeepEqual(got, want) {
			t.Errorf("FindAll %v: %d rows, a scan %d", keys, len(got), len(want))
		}
	}
	// A page of a cluster's rows, as a cluster page reads them.
	big := members[12345].ClusterID
	all := scanMembers(big)
	for off := range int64(len(all)) + 1 {
		got, total, err := FindRange[Member](mf, "cluster_id", Int64Key(big), off, 2)
		if want := all[off:min(off+2, int64(len(all)))]; err != nil || total != int64(len(all)) || len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
			t.Errorf("FindRange from %d: %v of %d, want %v (%v)", off, got, total, all[off:min(off+2, int64(len(all)))], err)
		}
	}
	for _, i := range []int{0, 1, 4500, 8999} {
		got, err := Find[URL](uf, "url", StringKey(urls[i].URL))
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], urls[i]) {
			t.Errorf("url %d: %v, %v", i, got, err)
		}
		if got, err := Find[URL](uf, "url", StringKey(urls[i].URL+"x")); err != nil || len(got) != 0 {
			t.Errorf("absent url after %d: %v, %v", i, got, err)
		}
	}
}

// TestLookupReadsFewPages: a lookup in a shard of many pages reads the
// pages whose bounds hold the key, not the others: the file's bytes read
// are a small part of it.
func TestLookupReadsFewPages(t *testing.T) {
	ctx := context.Background()
	r0 := rand.New(rand.NewPCG(3, 4))
	var members []Member
	for i := range 200_000 {
		u := fmt.Sprintf("https://%x.test/%x", r0.Uint64(), r0.Uint64())
		members = append(members, Member{ClusterID: int64(i / 3), DocID: int64(i), URL: &u, SourceRow: r0.Int64(), Sweep: "s", SourceFile: "f", Status: "ok"})
	}
	name := writeShard(t, members)
	r := &countingReaderAt{}
	var size int64
	var err error
	if r.r, size, err = openCounted(ctx, name); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(r, size)
	if err != nil {
		t.Fatal(err)
	}
	l := &LookupFile{Name: name, f: pf, r: r}
	opened := r.n
	got, err := Find[Member](l, "cluster_id", Int64Key(50_000))
	if err != nil || len(got) != 3 || got[0].DocID != 150_000 {
		t.Fatalf("%v, %v", got, err)
	}
	read := r.n - opened
	t.Logf("a %d-byte shard: %d bytes read to open it, %d to find a key's rows", size, opened, read)
	if read > size/8 {
		t.Errorf("the lookup read %d bytes of a %d-byte shard", read, size)
	}
}

// TestKeptBlocks: lookups served partly from the blocks a file keeps
// answer as a scan does, in random order across row groups (of 1,000
// rows, so blocks end where groups do) and past the blocks kept, and a
// lookup next to the last one reads no more of the file.
func TestKeptBlocks(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(5, 6))
	var members []Member
	for c := int64(0); len(members) < 9_500; c++ {
		for range 1 + r.IntN(4) {
			members = append(members, Member{ClusterID: c, DocID: int64(len(members)), Sweep: "s", Sketch: []int64{c}})
		}
	}
	name := filepath.Join(t.TempDir(), "part-00000.parquet")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[Member](f, parquet.MaxRowsPerRowGroup(1000), parquet.PageBufferSize(2048))
	if _, err := w.Write(members); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cr := &countingReaderAt{}
	var size int64
	if cr.r, size, err = openCounted(ctx, name); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(cr, size)
	if err != nil {
		t.Fatal(err)
	}
	if len(pf.RowGroups()) < 9 {
		t.Fatalf("%d row groups", len(pf.RowGroups()))
	}
	l := &LookupFile{Name: name, f: pf, r: cr}
	last := members[len(members)-1].ClusterID
	for range 3000 {
		c := r.Int64N(last + 2)
		var want []Member
		for _, m := range members {
			if m.ClusterID == c || m.ClusterID == c+1 {
				want = append(want, m)
			}
		}
		got, err := FindAll[Member](l, "cluster_id", []parquet.Value{Int64Key(c), Int64Key(c + 1)})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("clusters %d and %d: %d rows, a scan %d (%v)", c, c+1, len(got), len(want), err)
		}
		if off := r.Int64N(int64(len(want)) + 1); len(want) > 0 && want[0].ClusterID == c {
			n := 0
			for n < len(want) && want[n].ClusterID == c {
				n++
			}
			got, total, err := FindRange[Member](l, "cluster_id", Int64Key(c), off, 2)
			if w := want[min(off, int64(n)):min(off+2, int64(n))]; err != nil || total != int64(n) || len(got) != len(w) || len(w) > 0 && !reflect.DeepEqual(got, w) {
				t.Fatalf("FindRange %d from %d: %v of %d, want %v (%v)", c, off, got, total, w, err)
			}
		}
		if len(l.blocks) > cachedBlocks {
			t.Fatalf("%d blocks kept", len(l.blocks))
		}
	}
	// A block's rows, then its neighbour's: the second reads only the
	// key column's page (the block is kept).
	i := 4321 - 4321%blockRows + 10
	if _, err := Find[Member](l, "cluster_id", Int64Key(members[i].ClusterID)); err != nil {
		t.Fatal(err)
	}
	before := cr.n
	if _, err := Find[Member](l, "cluster_id", Int64Key(members[i+20].ClusterID)); err != nil {
		t.Fatal(err)
	}
	again := cr.n - before
	fresh := &countingReaderAt{r: cr.r}
	pf2, err := parquet.OpenFile(fresh, size)
	if err != nil {
		t.Fatal(err)
	}
	opened := fresh.n
	if _, err := Find[Member](&LookupFile{Name: name, f: pf2, r: fresh}, "cluster_id", Int64Key(members[i+20].ClusterID)); err != nil {
		t.Fatal(err)
	}
	if cold := fresh.n - opened; again*3 > cold {
		t.Errorf("the neighbour's lookup read %d bytes, %d without the kept block", again, cold)
	}
}

func openLookup(t *testing.T, name string) *LookupFile {
	t.Helper()
	l, err := OpenLookup(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r interface {
		ReadAt([]byte, int64) (int, error)
		Close() error
	}
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

func (c *countingReaderAt) Close() error { return c.r.Close() }

func openCounted(ctx context.Context, name string) (interface {
	ReadAt([]byte, int64) (int, error)
	Close() error
}, int64, error) {
	return store.OpenReaderAt(ctx, name)
}

// TestHas: a shard has its flat and list columns, not others.
func TestHas(t *testing.T) {
	l := openLookup(t, writeShard(t, []URL{{URL: "u", Docs: 1, DocIDs: []int64{3}}}))
	for col, want := range map[string]bool{"url": true, "doc_ids": true, "docs": true, "doc_id": false, "element": false} {
		if l.Has(col) != want {
			t.Errorf("Has(%q) = %v", col, !want)
		}
	}
}
