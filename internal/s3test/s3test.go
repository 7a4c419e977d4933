// Package s3test serves an S3-compatible object store for tests, in the
// test's own process, and points the AWS SDK at it: neardup's s3:// paths
// (Beam's s3 filesystem, package io/objstore) then read and write it as
// they would a bucket on AWS.
//
// The store is github.com/johannesboyne/gofakes3 over its in-memory
// backend. It runs inside the test binary, pure Go, fetched from the Go
// module proxy like every other dependency: no docker, no server binary
// to download, nothing left running after a test, and the same code
// serves the shell checks (scripts/s3server). It was in our module graph
// already: Beam v2.77.0 tests its own s3 filesystem with the same v1.2.0.
//
// # Addressing
//
// The AWS SDK for Go v2 addresses a bucket by virtual host
// (BUCKET.HOST) whenever its name is DNS-compatible, except when the
// endpoint's host is an IP address: its S3 endpoint rules
// (service/s3/endpoints.go, the conditions IsVirtualHostableS3Bucket and
// url.IsIp) then use path style, http://127.0.0.1:PORT/BUCKET/KEY. So
// the server listens on a loopback IP literal, never "localhost" (which
// would give BUCKET.localhost, and glibc does not resolve that without
// /etc/hosts), and bucket names have no dots (a dotted name over http is
// addressed by virtual host even on an IP). Nothing on the machine
// changes, and neither Beam's client nor objstore's needs an option.
//
// # The environment, and objstore's one client
//
// Both Beam's s3 filesystem and io/objstore make their clients with
// config.LoadDefaultConfig and s3.NewFromConfig, from the environment:
// Start sets it (Env lists it) with t.Setenv. Beam makes a client per
// use, but objstore makes ONE client per process, on its first s3://
// read, and keeps it. Hence:
//
//   - Start must run before the test binary's first s3:// read, in
//     every test that uses s3:// paths (t.Setenv also forbids
//     t.Parallel in such tests);
//   - every server a process starts listens on the port of the first
//     (Start reuses it), so that the endpoint objstore's cached client
//     was made with stays right for later tests. The credentials and
//     region never change.
//
// Workers in other processes (a worker pool, a job server's workers) read
// their own environment: start them with Env's variables set.
package s3test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/neardup/neardup/internal/objtest"
)

// The region and credentials the server is reached with; it checks
// neither, but the SDK needs them to sign its requests.
const (
	Region    = "us-east-1"
	AccessKey = "neardup-test"
	SecretKey = "neardup-test-secret"
)

// Server is a running S3-compatible store.
type Server struct {
	// URL is the endpoint, http://IP:PORT.
	URL string
	// Addr is the address it listens on, IP:PORT.
	Addr string

	srv    *http.Server
	done   chan error
	client *s3.Client
	closed sync.Once

	mu       sync.Mutex
	requests map[string]int64       // by operation (Requests)
	reads    map[string]ObjectReads // GETs by object, bucket/key (Reads)
}

// ObjectReads is what the server sent of one object: the GET requests
// (whole or ranged) answered with a body, and the body bytes.
type ObjectReads struct {
	Requests int64
	Bytes    int64
}

// Serve starts a store on addr, a loopback IP address and a port (0: any
// free port), with the named buckets. It refuses any other host: the
// store checks no credentials, and a host name would make the SDK
// address buckets by virtual host (see the package comment).
func Serve(addr string, buckets ...string) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("s3test: address %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("s3test: address %q: the host must be a loopback IP address such as 127.0.0.1 (a name such as localhost makes the AWS SDK address BUCKET.localhost)", addr)
	}
	backend := s3mem.New()
	for _, b := range buckets {
		if err := gofakes3.ValidateBucketName(b); err != nil {
			return nil, fmt.Errorf("s3test: bucket %q: %w", b, err)
		}
		if strings.Contains(b, ".") {
			return nil, fmt.Errorf("s3test: bucket %q: a name with a dot is addressed by virtual host over http, even on an IP endpoint; use a name without dots", b)
		}
		if err := backend.CreateBucket(b); err != nil {
			return nil, fmt.Errorf("s3test: bucket %q: %w", b, err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("s3test: %w", err)
	}
	faker := gofakes3.New(backend, gofakes3.WithTimeSkewLimit(0))
	s := &Server{
		Addr:     ln.Addr().String(),
		URL:      "http://" + ln.Addr().String(),
		done:     make(chan error, 1),
		requests: map[string]int64{},
		reads:    map[string]ObjectReads{},
	}
	s.srv = &http.Server{Handler: s.counting(partCopy(faker.Server(), backend)), ReadHeaderTimeout: time.Minute}
	s.client = s3.New(s3.Options{
		BaseEndpoint: aws.String(s.URL),
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
		UsePathStyle: true,
	})
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// counting counts each request by operation before h serves it.
func (s *Server) counting(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := r.Method
		switch q := r.URL.Query(); {
		case r.Method == http.MethodGet && q.Has("list-type"), r.Method == http.MethodGet && strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0:
			op = "LIST"
		case r.Method == http.MethodGet && r.Header.Get("Range") != "":
			op = "GET range"
		case q.Has("uploads") || q.Has("uploadId"):
			op = "multipart " + r.Method // UploadPartCopy too: "multipart PUT"
		case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "":
			op = "COPY"
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		s.mu.Lock()
		if (op == "GET" || op == "GET range") && sw.status < 300 {
			key := strings.TrimPrefix(r.URL.Path, "/")
			o := s.reads[key]
			o.Requests++
			o.Bytes += sw.bytes
			s.reads[key] = o
		}
		s.requests[op]++
		if sw.status >= 300 {
			s.requests[fmt.Sprintf("%s %d", op, sw.status)]++
		}
		s.mu.Unlock()
	})
}

// partCopy serves UploadPartCopy, the multipart copy of a range of an
// object, which gofakes3 lacks (it takes such a request for an upload of
// an empty part): it reads the range from the backend, as S3 does at the
// x-amz-copy-source's version when x-amz-copy-source-if-match names it,
// has h store it as an uploaded part, and answers with the part's ETag.
func partCopy(h http.Handler, backend gofakes3.Backend) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		source := r.Header.Get("X-Amz-Copy-Source")
		if r.Method != http.MethodPut || !q.Has("uploadId") || !q.Has("partNumber") || source == "" {
			h.ServeHTTP(w, r)
			return
		}
		fail := func(code int, what string) {
			w.WriteHeader(code)
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, http.StatusText(code), what)
		}
		src, err := url.PathUnescape(strings.TrimPrefix(source, "/"))
		bucket, key, ok := strings.Cut(src, "/")
		if err != nil || !ok {
			fail(http.StatusBadRequest, "bad x-amz-copy-source")
			return
		}
		var rng *gofakes3.ObjectRangeRequest
		if v := r.Header.Get("X-Amz-Copy-Source-Range"); v != "" {
			var first, last int64
			if _, err := fmt.Sscanf(v, "bytes=%d-%d", &first, &last); err != nil {
				fail(http.StatusBadRequest, "bad x-amz-copy-source-range")
				return
			}
			rng = &gofakes3.ObjectRangeRequest{Start: first, End: last}
		}
		obj, err := backend.GetObject(bucket, key, rng)
		if err != nil {
			fail(http.StatusNotFound, err.Error())
			return
		}
		defer obj.Contents.Close()
		if m := r.Header.Get("X-Amz-Copy-Source-If-Match"); m != "" && strings.Trim(m, `"`) != hex.EncodeToString(obj.Hash) {
			fail(http.StatusPreconditionFailed, "the source's ETag does not match")
			return
		}
		body, err := io.ReadAll(obj.Contents)
		if err != nil {
			fail(http.StatusInternalServerError, err.Error())
			return
		}
		put := r.Clone(r.Context())
		for k := range put.Header {
			if strings.HasPrefix(strings.ToLower(k), "x-amz-copy-source") {
				put.Header.Del(k)
			}
		}
		put.Body, put.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		put.Header.Set("Content-Length", fmt.Sprint(len(body)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, put)
		if rec.Code != http.StatusOK {
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
			return
		}
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><CopyPartResult><ETag>%s</ETag><LastModified>%s</LastModified></CopyPartResult>`,
			rec.Header().Get("ETag"), time.Now().UTC().Format(time.RFC3339))
	})
}

// statusWriter remembers the status of a response and the bytes of its
// body.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// Requests returns how many requests the server has answered, by
// operation: GET, GET range, HEAD, PUT, COPY, DELETE, LIST, multipart
// POST/PUT, ...; and, as "OPERATION STATUS", those answered with a status
// of 300 or more ("HEAD 404").
func (s *Server) Requests() map[string]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.requests)
}

// Reads returns what the server has sent of each object, by its
// bucket/key: the reference a job's own count of its reads is held to.
func (s *Server) Reads() map[string]ObjectReads {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.reads)
}

// Close stops the server; the objects go with it.
func (s *Server) Close() error {
	var err error
	s.closed.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = s.srv.Shutdown(ctx)
		if serr := <-s.done; err == nil && !errors.Is(serr, http.ErrServerClosed) {
			err = serr
		}
	})
	return err
}

// Env is the environment the AWS SDK needs to use the server, as
// NAME=VALUE: the endpoint (also as the S3-specific one, which would
// otherwise win if the caller's environment set it), the region, the
// credentials, and nothing from the user's AWS files (~/.aws/config and
// credentials read as /dev/null, no profile) or from instance metadata.
func (s *Server) Env() []string {
	return []string{
		"AWS_ENDPOINT_URL=" + s.URL,
		"AWS_ENDPOINT_URL_S3=" + s.URL,
		"AWS_REGION=" + Region,
		"AWS_DEFAULT_REGION=" + Region,
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_SESSION_TOKEN=",
		"AWS_PROFILE=",
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_EC2_METADATA_DISABLED=true",
	}
}

// The port of the first server of the process: later ones listen there
// too (see the package comment).
var first struct {
	sync.Mutex
	port string
}

// Start starts a store with the named buckets on 127.0.0.1 for the test,
// sets the environment the AWS SDK reads (Env) for the test's duration,
// and stops the store when the test ends. The process's first server
// takes any free port; later ones take the same port, so that
// io/objstore's cached client keeps reaching the current server.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	first.Lock()
	defer first.Unlock()
	port := first.port
	if port == "" {
		port = "0"
	}
	s, err := Serve(net.JoinHostPort("127.0.0.1", port), buckets...)
	if err != nil {
		t.Fatalf("%v (the process's first S3 server listened on port %s, which io/objstore's cached client keeps using)", err, port)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("s3test: stopping the server: %v", err)
		}
	})
	if first.port == "" {
		_, first.port, _ = net.SplitHostPort(s.Addr)
	}
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return s
}

// Client is an SDK client of the server that needs no environment: path
// style, static credentials. The helpers below use it.
func (s *Server) Client() *s3.Client { return s.client }

// split splits s3://bucket/key.
func split(uri string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("s3test: %q is not an s3:// path", uri)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("s3test: %q names no bucket", uri)
	}
	return bucket, key, nil
}

// Put writes data to the object uri (s3://bucket/key).
func (s *Server) Put(ctx context.Context, uri string, data []byte) error {
	bucket, key, err := split(uri)
	if err != nil {
		return err
	}
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data)})
	if err != nil {
		return fmt.Errorf("s3test: put %s: %w", uri, err)
	}
	return nil
}

// Get reads the object uri (s3://bucket/key).
func (s *Server) Get(ctx context.Context, uri string) ([]byte, error) {
	bucket, key, err := split(uri)
	if err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("s3test: get %s: %w", uri, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("s3test: get %s: %w", uri, err)
	}
	return b, nil
}

// List returns the objects whose keys start with the key of prefix
// (s3://bucket/prefix), as sorted s3:// paths.
func (s *Server) List(ctx context.Context, prefix string) ([]string, error) {
	bucket, key, err := split(prefix)
	if err != nil {
		return nil, err
	}
	var uris []string
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3test: list %s: %w", prefix, err)
		}
		for _, o := range page.Contents {
			uris = append(uris, "s3://"+bucket+"/"+aws.ToString(o.Key))
		}
	}
	slices.Sort(uris)
	return uris, nil
}

// Upload copies local files to the folder dst (s3://bucket/prefix):
// objtest.Upload.
func (s *Server) Upload(ctx context.Context, src, dst string) ([]string, error) {
	if _, _, err := split(dst); err != nil {
		return nil, err
	}
	return objtest.Upload(ctx, s, src, dst)
}

// Download copies the objects below src into the local folder dir:
// objtest.Download.
func (s *Server) Download(ctx context.Context, src, dir string) ([]string, error) {
	return objtest.Download(ctx, s, src, dir)
}
