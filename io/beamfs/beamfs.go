// Package beamfs registers Beam's filesystems (gs://, s3:// and any other
// scheme a Beam binary links) with package io/store, which serves local
// paths itself. It is imported by the packages that link Beam anyway (the
// pipeline, the commands), so that the packages reading a finished output
// reach remote outputs without importing Beam themselves.
package beamfs

import (
	"context"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/neardup/neardup/io/store"

	// The schemes users can name in --input and --output.
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3"
)

func init() {
	store.RegisterFallback(func(ctx context.Context, name string) (store.Filesystem, error) {
		fs, err := filesystem.New(ctx, name)
		if err != nil {
			return nil, err
		}
		return fs, nil
	})
}
