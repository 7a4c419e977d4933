package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
)

func init() { Register("gs", openGCS) }

// One client per process, made on first use with the same credentials as
// Beam's gs:// filesystem: application default credentials, or anonymous
// access (public buckets) when there are none.
var gcsClient struct {
	sync.Mutex
	c *storage.Client
}

func gcs() (*storage.Client, error) {
	gcsClient.Lock()
	defer gcsClient.Unlock()
	if gcsClient.c == nil {
		// The client outlives any one read: not the caller's context.
		c, err := storage.NewClient(context.Background(), option.WithScopes(storage.ScopeReadOnly))
		if err != nil {
			if c, err = storage.NewClient(context.Background(), option.WithoutAuthentication()); err != nil {
				return nil, err
			}
		}
		gcsClient.c = c
	}
	return gcsClient.c, nil
}

func openGCS(_ context.Context, name string) (RangeReader, error) {
	bucket, object, err := splitName("gs", name)
	if err != nil {
		return nil, err
	}
	c, err := gcs()
	if err != nil {
		return nil, err
	}
	// Stored bytes, never decompressive transcoding: offsets and the size
	// from the metadata must describe the same bytes.
	return &gcsObject{obj: c.Bucket(bucket).Object(object).ReadCompressed(true)}, nil
}

type gcsObject struct {
	obj *storage.ObjectHandle
	gen int64 // from Size; later reads require the same generation
}

// Version is the generation Size pinned.
func (g *gcsObject) Version() string { return fmt.Sprintf("generation:%d", g.gen) }

// Size reads the object's metadata and pins its generation, so an object
// replaced during the run fails to read instead of mixing two versions.
func (g *gcsObject) Size(ctx context.Context) (int64, error) {
	a, err := g.obj.Attrs(ctx)
	if err != nil {
		if errors.Is(err, storage.ErrObjectNotExist) || errors.Is(err, storage.ErrBucketNotExist) || gcsClientError(gcsStatus(err)) {
			return 0, Permanent(err)
		}
		return 0, err
	}
	g.gen = a.Generation
	g.obj = g.obj.Generation(a.Generation)
	return a.Size, nil
}

// ReadRange reads bytes of the generation Size pinned. That generation no
// longer existing (404), or failing a precondition (412), is an object
// changed since it was opened; other 4xx but 408 and 429 are permanent;
// the rest (5xx, the network) are worth another try.
func (g *gcsObject) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	r, err := g.obj.NewRangeReader(ctx, off, n)
	if err != nil {
		code := gcsStatus(err)
		switch {
		case errors.Is(err, storage.ErrObjectNotExist) || code == http.StatusNotFound || code == http.StatusPreconditionFailed:
			return nil, fmt.Errorf("%w: the object is no longer the generation opened (%d): %w", ErrChanged, g.gen, err)
		case gcsClientError(code):
			return nil, Permanent(err)
		}
		return nil, err
	}
	return r, nil
}

// gcsStatus is the HTTP status of a GCS API error, 0 for other errors.
func gcsStatus(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}

// gcsClientError reports whether code is a 4xx that asking again will not
// change (not a timeout, 408, nor throttling, 429).
func gcsClientError(code int) bool {
	return code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests
}
