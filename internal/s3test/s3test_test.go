package s3test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/neardup/neardup/io/objstore"
)

// envClient makes a client as Beam's s3 filesystem and io/objstore make
// theirs, from the environment alone; hosts collects the host and path of
// every request it sends.
func envClient(t *testing.T, hosts *[]string) *s3.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Finalize.Add(middleware.FinalizeMiddlewareFunc("record", func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				if r, ok := in.Request.(*smithyhttp.Request); ok {
					*hosts = append(*hosts, r.URL.Host+" "+r.URL.Path)
				}
				return next.HandleFinalize(ctx, in)
			}), middleware.After)
		})
	})
}

// TestEnvironmentClient: a client made from the environment Start sets,
// as neardup's are, puts, lists and reads objects, addressing the bucket
// by path on the server's IP (a virtual host, BUCKET.127.0.0.1, would not
// resolve).
func TestEnvironmentClient(t *testing.T) {
	s := Start(t, "neardup-test")
	if os.Getenv("AWS_ENDPOINT_URL") != s.URL || !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
		t.Fatalf("AWS_ENDPOINT_URL = %q, server at %q", os.Getenv("AWS_ENDPOINT_URL"), s.URL)
	}
	ctx := context.Background()
	var sent []string
	c := envClient(t, &sent)
	body := []byte("hello, object store")
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("neardup-test"), Key: aws.String("a/b.txt"), Body: bytes.NewReader(body)}); err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("neardup-test"), Prefix: aws.String("a/")})
	if err != nil {
		t.Fatalf("ListObjectsV2: %v", err)
	}
	if len(out.Contents) != 1 || aws.ToString(out.Contents[0].Key) != "a/b.txt" {
		t.Errorf("listed %d objects, want a/b.txt alone", len(out.Contents))
	}
	got, err := s.Get(ctx, "s3://neardup-test/a/b.txt")
	if err != nil || !bytes.Equal(got, body) {
		t.Errorf("Get: %q, %v; want %q", got, err, body)
	}
	if r := s.Requests(); r["PUT"] != 1 || r["LIST"] != 1 || r["GET"] != 1 || len(r) != 3 {
		t.Errorf("the server counts requests %v, want a PUT, a LIST and a GET", r)
	}
	want := s.Addr + " /neardup-test/a/b.txt"
	if len(sent) != 2 || sent[0] != want || sent[1] != s.Addr+" /neardup-test" {
		t.Errorf("requests went to %q, want path style on %s (%q first)", sent, s.Addr, want)
	}
}

// TestObjstore reads an object through io/objstore, whose ranged reads
// (with If-Match on the ETag of its HEAD) the Parquet readers use.
func TestObjstore(t *testing.T) {
	s := Start(t, "neardup-test")
	ctx := context.Background()
	data := make([]byte, 3<<20)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	if err := s.Put(ctx, "s3://neardup-test/x/data.bin", data); err != nil {
		t.Fatal(err)
	}
	r, err := objstore.Open(ctx, "s3://neardup-test/x/data.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", r.Size(), len(data))
	}
	for _, span := range [][2]int{{0, 4}, {len(data) - 8, len(data)}, {1 << 20, 2<<20 + 17}, {5, 100000}} {
		got := make([]byte, span[1]-span[0])
		if n, err := r.ReadAt(got, int64(span[0])); (err != nil && err != io.EOF) || n != len(got) {
			t.Fatalf("ReadAt(%d..%d): %d bytes, %v", span[0], span[1], n, err)
		}
		if !bytes.Equal(got, data[span[0]:span[1]]) {
			t.Errorf("ReadAt(%d..%d) read other bytes", span[0], span[1])
		}
	}
}

// TestSamePort: a later server of the process listens on the first one's
// port, so a client made during an earlier test, as objstore's is, keeps
// working.
func TestSamePort(t *testing.T) {
	var addr string
	var early *s3.Client
	var sent []string
	for i := range 2 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			s := Start(t, "neardup-test")
			if addr == "" {
				addr, early = s.Addr, envClient(t, &sent)
			} else if s.Addr != addr {
				t.Fatalf("second server on %s, first on %s", s.Addr, addr)
			}
			ctx := context.Background()
			key := fmt.Sprintf("k%d", i)
			if _, err := early.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("neardup-test"), Key: aws.String(key), Body: strings.NewReader(key)}); err != nil {
				t.Fatalf("server %d through the first test's client: %v", i, err)
			}
			// A new server is a new, empty store.
			uris, err := s.List(ctx, "s3://neardup-test/")
			if err != nil || !slices.Equal(uris, []string{"s3://neardup-test/" + key}) {
				t.Errorf("server %d holds %q, %v; want its own object alone", i, uris, err)
			}
		})
	}
}

// TestUploadDownload copies a folder and a glob up and the folder back.
func TestUploadDownload(t *testing.T) {
	s := Start(t, "neardup-test")
	ctx := context.Background()
	src := t.TempDir()
	files := map[string]string{"a.parquet": "A", "b.parquet": "BB", "notes.txt": "n", "sub/c.parquet": "CCC"}
	for name, body := range files {
		p := filepath.Join(src, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	up, err := s.Upload(ctx, filepath.Join(src, "*.parquet"), "s3://neardup-test/glob/")
	if want := []string{"s3://neardup-test/glob/a.parquet", "s3://neardup-test/glob/b.parquet"}; err != nil || !slices.Equal(up, want) {
		t.Errorf("Upload of a glob: %q, %v; want %q", up, err, want)
	}
	if _, err := s.Upload(ctx, filepath.Join(src, "*.csv"), "s3://neardup-test/none"); err == nil {
		t.Error("Upload of a glob matching nothing succeeded")
	}
	if _, err := s.Upload(ctx, src, "s3://neardup-test/dir"); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	got, err := s.Download(ctx, "s3://neardup-test/dir", dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(files) {
		t.Errorf("downloaded %q, want %d files", got, len(files))
	}
	for name, body := range files {
		b, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(b) != body {
			t.Errorf("%s downloaded as %q, %v; want %q", name, b, err, body)
		}
	}
	if _, err := s.Download(ctx, "s3://neardup-test/di", t.TempDir()); err == nil {
		t.Error("Download of a folder that is only a prefix of one succeeded")
	}
}

// TestServeRefuses: hosts the SDK would address by virtual host, or that
// are not loopback, and bucket names S3 or the addressing cannot take.
func TestServeRefuses(t *testing.T) {
	for _, c := range []struct {
		addr, bucket, want string
	}{
		{"localhost:0", "neardup-test", "loopback IP"},
		{"0.0.0.0:0", "neardup-test", "loopback IP"},
		{"127.0.0.1:0", "neardup.test", "dot"},
		{"127.0.0.1:0", "Neardup", "bucket"},
		{"127.0.0.1:0", "neardup_test", "bucket"},
	} {
		s, err := Serve(c.addr, c.bucket)
		if err == nil {
			s.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Serve(%q, %q): %v, want an error about %q", c.addr, c.bucket, err, c.want)
		}
	}
}
