// Package beamfs registers Beam's filesystems (gs://, s3:// and any other
// scheme a Beam binary links) with package io/store, which serves local
// paths itself. It is imported by the packages that link Beam anyway (the
// pipeline, the commands), so that the packages reading a finished output
// reach remote outputs without importing Beam themselves.
package beamfs

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/neardup/neardup/io/store"

	// The schemes users can name in --input and --output.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
)

// One filesystem per scheme for the process: Beam's constructors make a
// new client each time (s3's loads the AWS configuration, some
// milliseconds, and then opens its own connections), and package store
// asks for one per operation, thousands of them when a run publishes.
// Their clients are safe for concurrent use; the cached ones are never
// closed.
var cache struct {
	sync.Mutex
	fs map[string]filesystem.Interface
}

func init() {
	store.RegisterFallback(func(ctx context.Context, name string) (store.Filesystem, error) {
		scheme, _, _ := strings.Cut(name, "://")
		cache.Lock()
		defer cache.Unlock()
		if fs, ok := cache.fs[scheme]; ok {
			return kept{fs}, nil
		}
		// Not ctx: a client outlives the call that made it.
		fs, err := filesystem.New(context.Background(), name)
		if err != nil {
			return nil, err
		}
		if cache.fs == nil {
			cache.fs = map[string]filesystem.Interface{}
		}
		cache.fs[scheme] = fs
		return kept{fs}, nil
	})
}

// kept is a cached filesystem, which its users' Close leaves open. It
// offers every optional ability package store looks for, and answers
// errors.ErrUnsupported where the filesystem lacks one (store then does
// without it, as when the method is missing).
type kept struct{ filesystem.Interface }

func (kept) Close() error { return nil }

func (k kept) Remove(ctx context.Context, name string) error {
	if r, ok := k.Interface.(filesystem.Remover); ok {
		return r.Remove(ctx, name)
	}
	return errors.ErrUnsupported
}

func (k kept) Rename(ctx context.Context, oldpath, newpath string) error {
	if r, ok := k.Interface.(filesystem.Renamer); ok {
		return r.Rename(ctx, oldpath, newpath)
	}
	return errors.ErrUnsupported
}

func (k kept) Copy(ctx context.Context, oldpath, newpath string) error {
	if c, ok := k.Interface.(filesystem.Copier); ok {
		return c.Copy(ctx, oldpath, newpath)
	}
	return errors.ErrUnsupported
}

func (k kept) LastModified(ctx context.Context, name string) (time.Time, error) {
	if l, ok := k.Interface.(filesystem.LastModifiedGetter); ok {
		return l.LastModified(ctx, name)
	}
	return time.Time{}, errors.ErrUnsupported
}
