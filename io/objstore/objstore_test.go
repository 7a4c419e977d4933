package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// fake is an in-memory object that counts and records its requests.
type fake struct {
	data []byte

	mu        sync.Mutex
	sizeCalls int
	reqs      [][2]int64 // off, n of each ReadRange
	sizeErr   error      // returned by Size while set
	readErr   error      // returned by ReadRange while set
	short     bool       // bodies end one byte early
	long      bool       // bodies run on past the range (a server ignoring Range)
	cuts      int        // the next cuts bodies end half way, with io.ErrUnexpectedEOF
	failures  int        // the next failures requests fail with failWith
	failWith  error
}

func (f *fake) Size(context.Context) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sizeCalls++
	if f.sizeErr != nil {
		return 0, f.sizeErr
	}
	return int64(len(f.data)), nil
}

func (f *fake) ReadRange(_ context.Context, off, n int64) (io.ReadCloser, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, [2]int64{off, n})
	if f.readErr != nil {
		return nil, f.readErr
	}
	if f.failures > 0 {
		f.failures--
		return nil, f.failWith
	}
	if off < 0 || n <= 0 || off+n > int64(len(f.data)) {
		return nil, fmt.Errorf("fake: bad range %d+%d of %d", off, n, len(f.data))
	}
	end := off + n
	switch {
	case f.short:
		end--
	case f.long:
		end = int64(len(f.data))
		off = 0
	case f.cuts > 0:
		f.cuts--
		return io.NopCloser(io.MultiReader(bytes.NewReader(f.data[off:off+n/2]), errReader{io.ErrUnexpectedEOF})), nil
	}
	return io.NopCloser(bytes.NewReader(f.data[off:end])), nil
}

func (f *fake) requests() [][2]int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][2]int64(nil), f.reqs...)
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.IntN(256))
	}
	return b
}

func open(t *testing.T, f *fake, opt Options) *ReaderAt {
	t.Helper()
	r, err := NewReaderAt(context.Background(), "mem://bucket/obj", f, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// ReadAt agrees with bytes.Reader.ReadAt at random offsets and lengths,
// across block, head and tail boundaries, with caches small enough to evict.
func TestReadAtMatchesBytesReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	optss := []Options{
		{BlockSize: 256, CacheBlocks: 3, HeadSize: 64, TailSize: 300},
		{BlockSize: 1000, CacheBlocks: 1, HeadSize: 10, TailSize: 1},
		{BlockSize: 7, CacheBlocks: 2, HeadSize: 100, TailSize: 13},
		{}, // the defaults: every object here fits the tail
	}
	for _, size := range []int{0, 1, 7, 63, 64, 100, 299, 300, 301, 999, 1000, 1001, 5000, 12345} {
		data := randomBytes(rng, size)
		want := bytes.NewReader(data)
		for oi, opt := range optss {
			f := &fake{data: data}
			r := open(t, f, opt)
			maxLen := max(2*size, 10)
			for i := 0; i < 1000; i++ {
				off := int64(rng.IntN(size+12)) - 2
				p1 := make([]byte, rng.IntN(maxLen))
				if rng.IntN(4) == 0 {
					p1 = p1[:min(len(p1), rng.IntN(16))] // many small reads, as parquet-go does
				}
				p2 := make([]byte, len(p1))
				n1, err1 := r.ReadAt(p1, off)
				n2, err2 := want.ReadAt(p2, off)
				if off < 0 {
					if err1 == nil || n1 != 0 {
						t.Fatalf("size %d opts %d: ReadAt at %d = %d, %v; want an error", size, oi, off, n1, err1)
					}
					continue
				}
				if n1 != n2 || !bytes.Equal(p1[:n1], p2[:n2]) || err1 != err2 {
					t.Fatalf("size %d opts %d: ReadAt(len %d, off %d) = %d, %v; bytes.Reader: %d, %v (same bytes: %v)",
						size, oi, len(p1), off, n1, err1, n2, err2, bytes.Equal(p1[:n1], p2[:n2]))
				}
			}
			o := opt.withDefaults()
			for _, q := range f.requests() {
				if q[1] > max(o.BlockSize, o.HeadSize, o.TailSize, int64(maxLen)) {
					t.Errorf("size %d opts %d: request %v larger than a block and any read", size, oi, q)
				}
			}
			if f.sizeCalls != 1 {
				t.Errorf("size %d opts %d: %d size requests, want 1", size, oi, f.sizeCalls)
			}
		}
	}
}

// Concurrent readers see the right bytes (run with -race).
func TestConcurrentReadAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := randomBytes(rng, 50000)
	f := &fake{data: data}
	r := open(t, f, Options{BlockSize: 1024, CacheBlocks: 4, HeadSize: 100, TailSize: 2000})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 5))
			for i := 0; i < 2000; i++ {
				off := rng.Int64N(int64(len(data)))
				p := make([]byte, rng.IntN(3000))
				n, err := r.ReadAt(p, off)
				if want := min(len(p), len(data)-int(off)); n != want || !bytes.Equal(p[:n], data[off:off+int64(n)]) {
					errs <- fmt.Errorf("ReadAt(len %d, off %d) = %d, %v", len(p), off, n, err)
					return
				}
			}
		}(uint64(g))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Opening as Parquet does (magic at 0, trailer at the end) costs a small
// head request and one tail request; sequential small reads then cost one
// request per block, and nothing is fetched twice.
func TestSequentialSmallReadsOneRequestPerBlock(t *testing.T) {
	const block, tailSize, head = 64 << 10, 16 << 10, 1 << 10
	data := randomBytes(rand.New(rand.NewPCG(5, 6)), 10*block+5000)
	size := int64(len(data))
	f := &fake{data: data}
	r := open(t, f, Options{BlockSize: block, CacheBlocks: 2, HeadSize: head, TailSize: tailSize})
	buf := make([]byte, 4096)
	read := func(n int, off int64) {
		t.Helper()
		if k, err := r.ReadAt(buf[:n], off); k != n || err != nil || !bytes.Equal(buf[:n], data[off:off+int64(n)]) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v", n, off, k, err)
		}
	}
	read(4, 0)            // the magic
	read(8, size-8)       // the trailer
	read(3000, size-3008) // the footer
	want := [][2]int64{{0, head}, {size - tailSize, tailSize}}
	if got := f.requests(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("opening: requests %v, want %v", got, want)
	}
	tailStart := size - tailSize
	for off := int64(4); off < size; off += 4096 {
		read(int(min(4096, size-off)), off)
	}
	// Past the head, blocks start where the head ends and run to the tail.
	for off := int64(head); off < tailStart; off += block {
		want = append(want, [2]int64{off, min(block, tailStart-off)})
	}
	if got := f.requests(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sequential scan: %d requests %v,\nwant %d: %v", len(got), got, len(want), want)
	}
	// A read larger than a block is one request, and stops at cached data.
	r = open(t, f, Options{BlockSize: 100, CacheBlocks: 4, HeadSize: 10, TailSize: 10})
	f.reqs = nil
	big := make([]byte, 5000)
	if _, err := r.ReadAt(big[:50], 7000); err != nil {
		t.Fatal(err)
	}
	if n, err := r.ReadAt(big, 3000); n != len(big) || err != nil || !bytes.Equal(big, data[3000:8000]) {
		t.Fatalf("big read: %d, %v", n, err)
	}
	if got, want := fmt.Sprint(f.requests()), fmt.Sprint([][2]int64{{7000, 100}, {3000, 4000}, {7100, 900}}); got != want {
		t.Errorf("a big read around a cached block: requests %s, want %s", got, want)
	}
}

// The cache keeps the most recently used blocks: interleaved cursors in as
// many blocks as the cache holds cost one request per block.
func TestLRU(t *testing.T) {
	const block = 1000
	data := randomBytes(rand.New(rand.NewPCG(7, 8)), 20*block)
	f := &fake{data: data}
	r := open(t, f, Options{BlockSize: block, CacheBlocks: 2, HeadSize: 1, TailSize: 1})
	p := make([]byte, 10)
	for _, b := range []int64{1, 3, 1, 3, 1, 3, 5, 3, 1} {
		if _, err := r.ReadAt(p, b*block+5); err != nil {
			t.Fatal(err)
		}
	}
	// 1 and 3 once each; 5 evicts 1 (least recent); 3 is still cached; 1 again.
	var got []int64
	for _, q := range f.requests() {
		got = append(got, q[0]/block)
	}
	if want := []int64{1, 3, 5, 1}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("blocks fetched %v, want %v", got, want)
	}
}

type doc struct {
	ID   int64  `parquet:"id"`
	Text string `parquet:"text"`
	URL  string `parquet:"url,optional"`
}

func parquetFile(t *testing.T, rows int) ([]doc, []byte) {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 10))
	words := strings.Fields("the quick brown fox jumps over a lazy dog near duplicate shingle sketch broder crawl page")
	docs := make([]doc, rows)
	for i := range docs {
		var sb strings.Builder
		for j := rng.IntN(200); j >= 0; j-- {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(' ')
		}
		docs[i] = doc{ID: int64(i), Text: sb.String(), URL: fmt.Sprintf("https://example.com/%d/%x", i, rng.Uint64())}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[doc](&buf, parquet.MaxRowsPerRowGroup(int64(rows/4+1)), parquet.PageBufferSize(4<<10))
	for i := 0; i < len(docs); i += 100 {
		if _, err := w.Write(docs[i:min(i+100, len(docs))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return docs, buf.Bytes()
}

// readAll reads every row group the way io/crawl does.
func readAll(t *testing.T, r io.ReaderAt, size int64) []doc {
	t.Helper()
	f, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		t.Fatal(err)
	}
	var got []doc
	for _, rg := range f.RowGroups() {
		rows := parquet.NewGenericRowGroupReader[doc](rg)
		buf := make([]doc, 64)
		for {
			n, err := rows.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		rows.Close()
	}
	return got
}

func TestParquetThroughRangedReader(t *testing.T) {
	docs, file := parquetFile(t, 3000)
	size := int64(len(file))
	const block = 32 << 10
	if size < 8*block {
		t.Fatalf("test file is only %d bytes; want several blocks", size)
	}
	f := &fake{data: file}
	r := open(t, f, Options{BlockSize: block, CacheBlocks: 4, HeadSize: 1 << 10, TailSize: 16 << 10})
	pf, err := parquet.OpenFile(r, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pf.RowGroups()); n < 4 {
		t.Fatalf("%d row groups, want at least 4", n)
	}
	if got := f.requests(); len(got) != 2 {
		t.Errorf("opening the file: %d requests %v, want 2 (magic, footer)", len(got), got)
	}
	got := readAll(t, r, size)
	if len(got) != len(docs) {
		t.Fatalf("read %d rows, want %d", len(got), len(docs))
	}
	for i := range docs {
		if got[i] != docs[i] {
			t.Fatalf("row %d: %+v, want %+v", i, got[i], docs[i])
		}
	}
	// Every byte once (the cache holds the cursor of every column, and
	// blocks start at the missing byte), at most a block's worth of
	// requests for the file plus one per column chunk whose start interrupts
	// a block, the head and the tail.
	var fetched int64
	reqs := f.requests()
	for _, q := range reqs {
		fetched += q[1]
	}
	chunks := 0
	for _, rg := range pf.Metadata().RowGroups {
		chunks += len(rg.Columns)
	}
	t.Logf("%d bytes, %d column chunks: %d requests, %d bytes fetched", size, chunks, len(reqs), fetched)
	if fetched > size {
		t.Errorf("fetched %d bytes of a %d-byte file", fetched, size)
	}
	if limit := int(size/block) + chunks + 2; len(reqs) > limit {
		t.Errorf("%d requests, want at most %d", len(reqs), limit)
	}

	// A cache too small for the column cursors costs requests, never rows.
	f = &fake{data: file}
	r = open(t, f, Options{BlockSize: 1000, CacheBlocks: 1, HeadSize: 1, TailSize: 1})
	if got := readAll(t, r, size); !slices.Equal(got, docs) {
		t.Errorf("with a one-block cache: %d rows, not the %d written", len(got), len(docs))
	}
}

// With the default sizes a file of up to 256 KiB is read in one request.
func TestSmallParquetOneRequest(t *testing.T) {
	docs, file := parquetFile(t, 300)
	if len(file) >= 256<<10 {
		t.Fatalf("test file is %d bytes; want under the default tail", len(file))
	}
	f := &fake{data: file}
	r := open(t, f, Options{})
	if got := readAll(t, r, r.Size()); len(got) != len(docs) {
		t.Fatalf("read %d rows, want %d", len(got), len(docs))
	}
	if got := f.requests(); len(got) != 1 || got[0] != [2]int64{0, int64(len(file))} {
		t.Errorf("requests %v, want one for the whole file", got)
	}
}

func TestErrorsNameTheObject(t *testing.T) {
	ctx := context.Background()
	const name = "mem://bucket/dir/x.parquet"
	boom := errors.New("boom: 503 slow down")
	data := randomBytes(rand.New(rand.NewPCG(11, 12)), 10000)
	check := func(what string, err, target error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), name) || !errors.Is(err, target) {
			t.Errorf("%s: error %v; want one naming %s and wrapping %v", what, err, name, target)
		}
	}
	opt := Options{BlockSize: 1000, HeadSize: 10, TailSize: 100}

	_, err := NewReaderAt(ctx, name, &fake{data: data, sizeErr: boom}, opt)
	check("size", err, boom)

	f := &fake{data: data, readErr: boom}
	r, err := NewReaderAt(ctx, name, f, opt)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 500)
	_, err = r.ReadAt(p, 2000)
	check("ranged read", err, boom)
	_, err = parquet.OpenFile(r, r.Size())
	check("parquet.OpenFile", err, boom)
	// Failures are not cached: the next read asks again.
	f.mu.Lock()
	f.readErr = nil
	f.mu.Unlock()
	if n, err := r.ReadAt(p, 2000); n != len(p) || err != nil || !bytes.Equal(p, data[2000:2500]) {
		t.Errorf("after the store recovered: %d, %v", n, err)
	}

	if r, err = NewReaderAt(ctx, name, &fake{data: data, short: true}, opt); err != nil {
		t.Fatal(err)
	}
	_, err = r.ReadAt(p, 5000)
	check("short body", err, io.ErrUnexpectedEOF)

	r = open(t, &fake{data: data, long: true}, opt)
	if _, err = r.ReadAt(p, 5000); err == nil || !strings.Contains(err.Error(), "range ignored") {
		t.Errorf("a body longer than the range: %v", err)
	}

	r.Close()
	if _, err := r.ReadAt(p, 0); err == nil || !strings.Contains(err.Error(), "Close") {
		t.Errorf("read after Close: %v", err)
	}
}

// Malformed names fail before any client is made (no network).
func TestOpenRejectsBadNames(t *testing.T) {
	for _, name := range []string{"gs://bucket-only", "gs:///object", "s3://bucket/", "s3://"} {
		if _, err := Open(context.Background(), name); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Open(%q): %v; want an error naming it", name, err)
		}
	}
	if _, err := Open(context.Background(), "hdfs://x/y"); err == nil {
		t.Error("Open of an unregistered scheme succeeded")
	}
	for name, want := range map[string]bool{"gs://b/o": true, "s3://b/k": true, "/tmp/x": false, "file:///x": false, "hdfs://x/y": false} {
		if Handles(name) != want {
			t.Errorf("Handles(%q) = %v", name, !want)
		}
	}
	b, k, err := splitName("s3", "s3://bucket/a/b%20c?d#e")
	if b != "bucket" || k != "a/b%20c?d#e" || err != nil {
		t.Errorf("splitName: %q %q %v; want the key taken literally", b, k, err)
	}
}

// TestReadsCounted: Reads and the OnClose call give the requests the
// store answered and their bytes, as the store saw them; ReadDirect
// fetches exactly what it is asked, past the cache.
func TestReadsCounted(t *testing.T) {
	f := &fake{data: randomBytes(rand.New(rand.NewPCG(5, 6)), 100000)}
	r := open(t, f, Options{BlockSize: 1000, CacheBlocks: 2, HeadSize: 10, TailSize: 100, WholeSize: 100})
	var closed [][2]int64
	r.OnClose(func(requests, bytes int64) { closed = append(closed, [2]int64{requests, bytes}) })
	p := make([]byte, 50)
	for _, off := range []int64{99950, 5000, 5020, 70000} {
		if _, err := r.ReadAt(p, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.ReadDirect(make([]byte, 333), 40000); err != nil {
		t.Fatal(err)
	}
	var bytes int64
	reqs := f.requests()
	for _, q := range reqs {
		bytes += q[1]
	}
	if n, b := r.Reads(); n != int64(len(reqs)) || b != bytes {
		t.Errorf("Reads %d requests, %d bytes; the store answered %d of %d bytes (%v)", n, b, len(reqs), bytes, reqs)
	}
	if last := reqs[len(reqs)-1]; last != [2]int64{40000, 333} {
		t.Errorf("ReadDirect asked for %v, want [40000 333]", last)
	}
	r.Close()
	r.Close()
	if len(closed) != 1 || closed[0] != [2]int64{int64(len(reqs)), bytes} {
		t.Errorf("OnClose told %v, want once [%d %d]", closed, len(reqs), bytes)
	}
}
