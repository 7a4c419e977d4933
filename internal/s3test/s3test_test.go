package s3test

import (
	"bytes"
	"context"
	"fmt"
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

	"github.com/neardup/neardup/internal/objtest"
	_ "github.com/neardup/neardup/io/beamfs"
	"github.com/neardup/neardup/io/objstore"
	"github.com/neardup/neardup/io/store"
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
	objtest.ReadBack(t, Start(t, "neardup-test"), "s3://neardup-test/x/data.bin")
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

// TestMoveAnyKeyAnySize: store.Move, as publication moves shards, moves
// objects whose keys hold spaces, "+", commas and non-ASCII letters (Beam's
// s3 copy sent them unencoded: "+" came back as a space, and the copy
// failed), and objects over objstore.MultipartCopyAbove in parts, with
// every byte kept and the source gone.
func TestMoveAnyKeyAnySize(t *testing.T) {
	s := Start(t, "neardup-test")
	ctx := context.Background()
	savedAbove, savedPart := objstore.MultipartCopyAbove, objstore.CopyPartSize
	t.Cleanup(func() { objstore.MultipartCopyAbove, objstore.CopyPartSize = savedAbove, savedPart })
	objstore.MultipartCopyAbove, objstore.CopyPartSize = 6<<20, 5<<20
	for _, c := range []struct {
		key  string
		size int
	}{
		{"out/crawl 2024+1/docs/part-00000.parquet", 1000},
		{"out/ünï cödé (1)/part 1,2.parquet", 3 << 10},
		{"out/big/part-00001.parquet", 13<<20 + 5}, // three parts
		{"out/big+ space/part-00002.parquet", 6<<20 + 1},
	} {
		data := make([]byte, c.size)
		for i := range data {
			data[i] = byte(i*31/7 + len(c.key))
		}
		from := "s3://neardup-test/" + c.key
		to := "s3://neardup-test/moved/" + c.key
		if err := s.Put(ctx, from, data); err != nil {
			t.Fatal(err)
		}
		before := s.Requests()["multipart PUT"]
		if err := store.Move(ctx, from, to); err != nil {
			t.Errorf("moving %q (%d bytes): %v", c.key, c.size, err)
			continue
		}
		got, err := s.Get(ctx, to)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("moved %q: %d bytes, %v; want the %d bytes put", c.key, len(got), err, len(data))
		}
		if _, err := s.Get(ctx, from); err == nil {
			t.Errorf("%q still there after the move", c.key)
		}
		parts := s.Requests()["multipart PUT"] - before
		if want := int64((c.size + 5<<20 - 1) / (5 << 20)); c.size > 6<<20 && parts != want {
			t.Errorf("%q of %d bytes copied in %d parts; want %d", c.key, c.size, parts, want)
		}
	}
}
