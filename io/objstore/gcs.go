package objstore

import (
	"context"
	"io"
	"sync"

	"cloud.google.com/go/storage"
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

type gcsObject struct{ obj *storage.ObjectHandle }

// Size reads the object's metadata and pins its generation, so an object
// replaced during the run fails to read instead of mixing two versions.
func (g *gcsObject) Size(ctx context.Context) (int64, error) {
	a, err := g.obj.Attrs(ctx)
	if err != nil {
		return 0, err
	}
	g.obj = g.obj.Generation(a.Generation)
	return a.Size, nil
}

func (g *gcsObject) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	return g.obj.NewRangeReader(ctx, off, n)
}
