// Package gcstest serves a Google Cloud Storage emulator for tests, in the
// test's own process, and points the GCS client library at it: neardup's
// gs:// paths (Beam's gcs filesystem, package io/objstore) then read and
// write it as they would a bucket on GCS.
//
// The emulator is github.com/fsouza/fake-gcs-server's fakestorage over
// memory, the one Beam v2.77.0 tests its own gcs filesystem with (so it
// was in our module graph already): pure Go, in the test binary, nothing
// to download or leave running. The client library
// (cloud.google.com/go/storage) sends every request to
// STORAGE_EMULATOR_HOST when it is set, without credentials: Start sets it.
//
// As with package s3test, io/objstore makes ONE gs:// client per process,
// on its first read, and keeps it: Start must run before the test binary's
// first gs:// read, and every server a process starts listens on the first
// one's port.
package gcstest

import (
	"context"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"google.golang.org/api/iterator"

	"github.com/neardup/neardup/internal/objtest"
)

// Server is a running emulator.
type Server struct {
	// Host is its address, IP:PORT, as STORAGE_EMULATOR_HOST takes it.
	Host string
	srv  *fakestorage.Server
}

var first struct {
	sync.Mutex
	port uint16
}

// Start starts an emulator with the named buckets on 127.0.0.1 for the
// test, sets STORAGE_EMULATOR_HOST for the test's duration, and stops the
// emulator when the test ends.
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	first.Lock()
	defer first.Unlock()
	if first.port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("gcstest: %v", err)
		}
		first.port = uint16(l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	host := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(first.port)))
	// The client reads objects by the XML API's path, /BUCKET/OBJECT,
	// which the emulator serves on its public host only: its own address.
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", Port: first.port, PublicHost: host})
	if err != nil {
		t.Fatalf("gcstest: %v (the process's first emulator listened on port %d, which io/objstore's cached client keeps using)", err, first.port)
	}
	t.Cleanup(srv.Stop)
	for _, b := range buckets {
		srv.CreateBucketWithOpts(fakestorage.CreateBucketOpts{Name: b})
	}
	t.Setenv("STORAGE_EMULATOR_HOST", host)
	return &Server{Host: host, srv: srv}
}

// split splits gs://bucket/object.
func split(uri string) (bucket, object string, err error) {
	rest, ok := strings.CutPrefix(uri, "gs://")
	if !ok {
		return "", "", fmt.Errorf("gcstest: %q is not a gs:// path", uri)
	}
	bucket, object, _ = strings.Cut(rest, "/")
	return bucket, object, nil
}

// Put writes data to the object uri, through the emulator's own client.
func (s *Server) Put(ctx context.Context, uri string, data []byte) error {
	bucket, object, err := split(uri)
	if err != nil {
		return err
	}
	w := s.srv.Client().Bucket(bucket).Object(object).NewWriter(ctx)
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// Get reads the object uri.
func (s *Server) Get(ctx context.Context, uri string) ([]byte, error) {
	bucket, object, err := split(uri)
	if err != nil {
		return nil, err
	}
	r, err := s.srv.Client().Bucket(bucket).Object(object).NewReader(ctx)
	if err != nil {
		return nil, fmt.Errorf("gcstest: get %s: %w", uri, err)
	}
	defer r.Close()
	return io.ReadAll(r)
}

// List returns the objects whose names start with prefix's
// (gs://bucket/prefix), as sorted gs:// paths.
func (s *Server) List(ctx context.Context, prefix string) ([]string, error) {
	bucket, p, err := split(prefix)
	if err != nil {
		return nil, err
	}
	var uris []string
	it := s.srv.Client().Bucket(bucket).Objects(ctx, &storage.Query{Prefix: p})
	for {
		a, err := it.Next()
		if err == iterator.Done {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("gcstest: list %s: %w", prefix, err)
		}
		uris = append(uris, "gs://"+bucket+"/"+a.Name)
	}
	sort.Strings(uris)
	return uris, nil
}

// Upload copies local files to the folder dst (gs://bucket/prefix):
// objtest.Upload.
func (s *Server) Upload(ctx context.Context, src, dst string) ([]string, error) {
	return objtest.Upload(ctx, s, src, dst)
}

// Download copies the objects below src into the local folder dir:
// objtest.Download.
func (s *Server) Download(ctx context.Context, src, dir string) ([]string, error) {
	return objtest.Download(ctx, s, src, dir)
}
