package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestMain(m *testing.M) {
	// The retries' waits, short: the tests count tries, not time.
	RetryDelays = []time.Duration{time.Millisecond, time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond}
	os.Exit(m.Run())
}

// errReader fails every read with err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// A ranged read cut off part way is followed by a request for the bytes
// still missing, and the reader returns them all, right; so is a request
// that fails outright.
func TestCutOffReadRetried(t *testing.T) {
	data := randomBytes(rand.New(rand.NewPCG(21, 22)), 10000)
	f := &fake{data: data, cuts: 2}
	r := open(t, f, Options{BlockSize: 1000, HeadSize: 10, TailSize: 100})
	p := make([]byte, 800)
	if n, err := r.ReadAt(p, 3000); n != len(p) || err != nil || !bytes.Equal(p, data[3000:3800]) {
		t.Fatalf("ReadAt after two cut-off bodies: %d, %v (right bytes: %v)", n, err, bytes.Equal(p, data[3000:3800]))
	}
	// 1000 bytes from 3000: half, then half the rest, then the rest.
	if got, want := fmt.Sprint(f.requests()), fmt.Sprint([][2]int64{{3000, 1000}, {3500, 500}, {3750, 250}}); got != want {
		t.Errorf("requests %s, want %s (each retry asks for the bytes still missing)", got, want)
	}

	f = &fake{data: data, failures: 3, failWith: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}
	r = open(t, f, Options{BlockSize: 1000, HeadSize: 10, TailSize: 100})
	if n, err := r.ReadAt(p, 3000); n != len(p) || err != nil || !bytes.Equal(p, data[3000:3800]) {
		t.Fatalf("ReadAt after three resets: %d, %v", n, err)
	}
	if got := len(f.requests()); got != 4 {
		t.Errorf("%d requests, want 4 (three failed, one good)", got)
	}

	// The object's size is retried too.
	f = &fake{data: data}
	calls := 0
	sized := sizeFailing{fake: f, fail: 2, calls: &calls}
	if r, err := NewReaderAt(context.Background(), "mem://b/o", sized, Options{}); err != nil || r.Size() != int64(len(data)) {
		t.Errorf("size after two failures: %v", err)
	}
	if calls != 3 {
		t.Errorf("%d size requests, want 3", calls)
	}
}

type sizeFailing struct {
	*fake
	fail  int
	calls *int
}

func (s sizeFailing) Size(ctx context.Context) (int64, error) {
	*s.calls++
	if *s.calls <= s.fail {
		return 0, errors.New("503 Service Unavailable")
	}
	return s.fake.Size(ctx)
}

// A read that keeps failing gives up after len(RetryDelays)+1 tries, with
// an error that names the object and wraps the last failure.
func TestRetriesRunOut(t *testing.T) {
	data := randomBytes(rand.New(rand.NewPCG(23, 24)), 10000)
	f := &fake{data: data, cuts: 1 << 30}
	r := open(t, f, Options{BlockSize: 1000, HeadSize: 10, TailSize: 100})
	p := make([]byte, 100)
	_, err := r.ReadAt(p, 5000)
	if err == nil || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "mem://bucket/obj") || !strings.Contains(err.Error(), "5 tries failed") {
		t.Errorf("a read cut off every time: %v; want an error naming the object, the tries, and wrapping io.ErrUnexpectedEOF", err)
	}
	if got := len(f.requests()); got != len(RetryDelays)+1 {
		t.Errorf("%d requests, want %d", got, len(RetryDelays)+1)
	}
	// The reader is not poisoned: once the store heals, it reads.
	f.mu.Lock()
	f.cuts = 0
	f.mu.Unlock()
	if n, err := r.ReadAt(p, 5000); n != len(p) || err != nil || !bytes.Equal(p, data[5000:5100]) {
		t.Errorf("after the store healed: %d, %v", n, err)
	}
}

// An object that changed since it was opened, and errors marked
// permanent, are not retried.
func TestChangedAndPermanentNotRetried(t *testing.T) {
	data := randomBytes(rand.New(rand.NewPCG(25, 26)), 10000)
	for _, c := range []struct {
		err    error
		wantIs error
	}{
		{fmt.Errorf("412 Precondition Failed: %w", ErrChanged), ErrChanged},
		{Permanent(os.ErrPermission), os.ErrPermission},
	} {
		f := &fake{data: data, readErr: c.err}
		r := open(t, f, Options{BlockSize: 1000, HeadSize: 10, TailSize: 100})
		_, err := r.ReadAt(make([]byte, 10), 5000)
		if !errors.Is(err, c.wantIs) || strings.Contains(err.Error(), "tries") {
			t.Errorf("%v: ReadAt error %v; want it returned at once", c.err, err)
		}
		if got := len(f.requests()); got != 1 {
			t.Errorf("%v: %d requests, want 1", c.err, got)
		}
	}
	// A done context stops the retries.
	ctx, cancel := context.WithCancel(context.Background())
	f := &fake{data: data, readErr: context.Canceled}
	r, err := NewReaderAt(ctx, "mem://b/o", f, Options{BlockSize: 1000, HeadSize: 10, TailSize: 100})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := r.ReadAt(make([]byte, 10), 5000); !errors.Is(err, context.Canceled) || len(f.requests()) != 1 {
		t.Errorf("canceled: %v after %d requests; want context.Canceled after 1", err, len(f.requests()))
	}
}

// s3Server is an S3 endpoint serving one object, bucket/key, as S3 does
// for HeadObject and ranged GetObject with If-Match; it can cut bodies
// off, fail requests with a 503, and replace the object.
type s3Server struct {
	mu       sync.Mutex
	data     []byte
	etag     string
	cuts     int      // the next cuts GETs send half their body, then drop the connection
	fail503  int      // the next fail503 GETs answer 503 Slow Down
	ifMatch  []string // the If-Match header of every GET
	gets     int
	rangeHdr []string
}

func (s *s3Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.URL.Path != "/bucket/key" {
		http.Error(w, "<Error><Code>NoSuchKey</Code></Error>", http.StatusNotFound)
		return
	}
	w.Header().Set("ETag", s.etag)
	w.Header().Set("Last-Modified", time.Unix(0, 0).UTC().Format(http.TimeFormat))
	if req.Method == http.MethodHead {
		w.Header().Set("Content-Length", strconv.Itoa(len(s.data)))
		return
	}
	s.gets++
	s.ifMatch = append(s.ifMatch, req.Header.Get("If-Match"))
	s.rangeHdr = append(s.rangeHdr, req.Header.Get("Range"))
	if m := req.Header.Get("If-Match"); m != "" && m != s.etag {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusPreconditionFailed)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-Match</Condition></Error>`)
		return
	}
	if s.fail503 > 0 {
		s.fail503--
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
		return
	}
	var from, to int
	if _, err := fmt.Sscanf(req.Header.Get("Range"), "bytes=%d-%d", &from, &to); err != nil || from > to || to >= len(s.data) {
		http.Error(w, "bad range", http.StatusRequestedRangeNotSatisfiable)
		return
	}
	body := s.data[from : to+1]
	w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", from, to, len(s.data)))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusPartialContent)
	if s.cuts > 0 {
		s.cuts--
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // drop the connection mid-body
	}
	w.Write(body)
}

func s3Test(t *testing.T, srv *s3Server) *s3Object {
	t.Helper()
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	c := s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(hs.URL),
		UsePathStyle: true,
		Credentials:  aws.AnonymousCredentials{},
		Retryer:      aws.NopRetryer{}, // the SDK's own retries aside: these are objstore's
	})
	return &s3Object{c: c, bucket: "bucket", key: "key"}
}

// Through the AWS SDK against an S3 endpoint: a GET whose connection drops
// mid-body, and one answered 503, are retried for the missing bytes of the
// same version (If-Match the ETag read at open); an object replaced since
// (412 Precondition Failed) fails at once, saying that it changed.
func TestS3RetriesAndChangedObject(t *testing.T) {
	data := randomBytes(rand.New(rand.NewPCG(27, 28)), 20000)
	srv := &s3Server{data: data, etag: `"v1"`, cuts: 1, fail503: 1}
	ctx := context.Background()
	const name = "s3://bucket/key"
	r, err := NewReaderAt(ctx, name, s3Test(t, srv), Options{BlockSize: 4000, HeadSize: 100, TailSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 3000)
	if n, err := r.ReadAt(p, 2000); n != len(p) || err != nil || !bytes.Equal(p, data[2000:5000]) {
		t.Fatalf("ReadAt through a dropped connection and a 503: %d, %v", n, err)
	}
	srv.mu.Lock()
	for _, m := range srv.ifMatch {
		if m != `"v1"` {
			t.Errorf("a GET with If-Match %q, want the ETag read at open", m)
		}
	}
	if want := []string{"bytes=2000-5999", "bytes=2000-5999", "bytes=4000-5999"}; fmt.Sprint(srv.rangeHdr) != fmt.Sprint(want) {
		t.Errorf("GETs %v, want %v: the 503, the one cut off half way, then the bytes still missing", srv.rangeHdr, want)
	}
	srv.etag, srv.data, srv.gets = `"v2"`, bytes.Repeat([]byte("x"), len(data)), 0
	srv.mu.Unlock()

	_, err = r.ReadAt(p, 10000)
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "changed during the run") {
		t.Errorf("reading an object replaced since it was opened: %v; want an error naming it and saying it changed during the run", err)
	}
	if srv.gets != 1 {
		t.Errorf("%d GETs for a changed object, want 1 (no retries)", srv.gets)
	}
	t.Log(err)

	// A key that is not there fails to open, at once.
	srv.gets = 0
	missing := s3Test(t, srv)
	missing.key = "nope"
	if _, err := NewReaderAt(ctx, "s3://bucket/nope", missing, Options{}); err == nil || !strings.Contains(err.Error(), "s3://bucket/nope") || strings.Contains(err.Error(), "tries") {
		t.Errorf("a missing key: %v; want an error naming it, not retried", err)
	}
}
