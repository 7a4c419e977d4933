package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func init() { Register("s3", openS3) }

// One client per process, made on first use exactly as Beam's s3://
// filesystem makes its own (config.LoadDefaultConfig, s3.NewFromConfig), so
// both honour the same settings: AWS_REGION or AWS_DEFAULT_REGION,
// AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_S3, AWS_PROFILE, credentials.
var s3Client struct {
	sync.Mutex
	c *s3.Client
}

func s3c() (*s3.Client, error) {
	s3Client.Lock()
	defer s3Client.Unlock()
	if s3Client.c == nil {
		cfg, err := config.LoadDefaultConfig(context.Background())
		if err != nil {
			return nil, fmt.Errorf("loading AWS config: %w", err)
		}
		s3Client.c = s3.NewFromConfig(cfg)
	}
	return s3Client.c, nil
}

func openS3(_ context.Context, name string) (RangeReader, error) {
	bucket, key, err := splitName("s3", name)
	if err != nil {
		return nil, err
	}
	c, err := s3c()
	if err != nil {
		return nil, err
	}
	return &s3Object{c: c, bucket: bucket, key: key}, nil
}

type s3Object struct {
	c           *s3.Client
	bucket, key string
	etag        *string // from Size; later reads require the same version
}

// Version is the ETag Size pinned.
func (o *s3Object) Version() string { return "etag:" + aws.ToString(o.etag) }

func (o *s3Object) Size(ctx context.Context) (int64, error) {
	out, err := o.c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(o.bucket), Key: aws.String(o.key)})
	if err != nil {
		if clientError(err) {
			return 0, Permanent(err)
		}
		return 0, err
	}
	if out.ContentLength == nil {
		return 0, fmt.Errorf("HeadObject reported no content length")
	}
	o.etag = out.ETag
	return *out.ContentLength, nil
}

func (o *s3Object) ReadRange(ctx context.Context, off, n int64) (io.ReadCloser, error) {
	out, err := o.c.GetObject(ctx, &s3.GetObjectInput{
		Bucket:  aws.String(o.bucket),
		Key:     aws.String(o.key),
		Range:   aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
		IfMatch: o.etag,
	})
	if err != nil {
		return nil, s3ReadError(err, o.etag)
	}
	return out.Body, nil
}

// s3ReadError says what a failed GetObject of a pinned version means: 412
// Precondition Failed (the ETag no longer matches) and 404 (the key is
// gone) are an object changed since it was opened; other 4xx but 408 and
// 429 are permanent; the rest (5xx, throttling, the network) are worth
// another try.
func s3ReadError(err error, etag *string) error {
	switch httpStatus(err) {
	case http.StatusPreconditionFailed, http.StatusNotFound:
		return fmt.Errorf("%w: the object is no longer the version opened (ETag %s): %w", ErrChanged, aws.ToString(etag), err)
	}
	if clientError(err) {
		return Permanent(err)
	}
	return err
}

// httpStatus is the status of the HTTP response an AWS SDK error carries,
// 0 when it carries none (the request never got an answer).
func httpStatus(err error) int {
	var r interface{ HTTPStatusCode() int }
	if errors.As(err, &r) {
		return r.HTTPStatusCode()
	}
	return 0
}

// clientError reports whether err is a 4xx answer that asking again will
// not change (not a timeout, 408, nor throttling, 429).
func clientError(err error) bool {
	c := httpStatus(err)
	return c >= 400 && c < 500 && c != http.StatusRequestTimeout && c != http.StatusTooManyRequests
}
