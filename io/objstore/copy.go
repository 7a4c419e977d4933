package objstore

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/neardup/neardup/internal/fanout"
)

// Copies within an object store, as publication moves every shard of a
// run into place (a copy and a delete: object stores have no rename).
// Beam's s3 filesystem copies with one CopyObject, which S3 caps at 5 GiB
// and whose source it passes unencoded, so a key with a space or a "+"
// fails, and only once the whole job has run. Copy here encodes the
// source, copies objects over MultipartCopyAbove in parts, several at
// once, pins the source's version (ETag) across the parts, and retries
// as reads are retried.

// A Copier copies object from to object to, within one store.
type Copier func(ctx context.Context, from, to string) error

var copiers sync.Map // scheme → Copier

// RegisterCopier makes Copy serve the names of scheme.
func RegisterCopier(scheme string, c Copier) { copiers.Store(scheme, c) }

func init() { RegisterCopier("s3", s3Copy) }

// CanCopy reports whether Copy serves a copy from from to to: both on one
// scheme that has a Copier.
func CanCopy(from, to string) bool {
	s, _, ok := strings.Cut(from, "://")
	if !ok || !strings.HasPrefix(to, s+"://") {
		return false
	}
	_, ok = copiers.Load(s)
	return ok
}

// Copy copies object from to object to, replacing it.
func Copy(ctx context.Context, from, to string) error {
	s, _, _ := strings.Cut(from, "://")
	c, ok := copiers.Load(s)
	if !ok || !CanCopy(from, to) {
		return fmt.Errorf("objstore: no copier from %s to %s", from, to)
	}
	if err := c.(Copier)(ctx, from, to); err != nil {
		return fmt.Errorf("copying %s to %s: %w", from, to, err)
	}
	return nil
}

// MultipartCopyAbove is the size above which an S3 copy goes in parts
// (S3's CopyObject takes at most 5 GiB), and CopyPartSize the size of a
// part (S3: at least 5 MiB, at most 5 GiB and 10,000 parts; larger parts
// are used when 10,000 would not hold the object). Variables for the
// tests.
var (
	MultipartCopyAbove int64 = 5 << 30
	CopyPartSize       int64 = 512 << 20
)

// copySource is the x-amz-copy-source of bucket and key: URL-encoded, but
// for the slashes between the key's parts, "+" included (as %2B: servers
// decode the header as a query, where "+" is a space), as the AWS SDKs
// for Java and Python encode it.
func copySource(bucket, key string) string {
	parts := strings.Split(bucket+"/"+key, "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(url.QueryEscape(p), "+", "%20")
	}
	return strings.Join(parts, "/")
}

func s3Copy(ctx context.Context, from, to string) error {
	sb, sk, err := splitName("s3", from)
	if err != nil {
		return err
	}
	db, dk, err := splitName("s3", to)
	if err != nil {
		return err
	}
	c, err := s3c()
	if err != nil {
		return err
	}
	var head *s3.HeadObjectOutput
	err = withRetries(ctx, func() error {
		var err error
		head, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(sb), Key: aws.String(sk)})
		if clientError(err) {
			return Permanent(err)
		}
		return err
	})
	if err != nil {
		return err
	}
	size, source := aws.ToInt64(head.ContentLength), copySource(sb, sk)
	if size <= MultipartCopyAbove {
		return withRetries(ctx, func() error {
			_, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String(db), Key: aws.String(dk),
				CopySource: aws.String(source), CopySourceIfMatch: head.ETag})
			return s3WriteError(err)
		})
	}
	part := max(CopyPartSize, (size+9999)/10000)
	n := int((size + part - 1) / part)
	var up *s3.CreateMultipartUploadOutput
	err = withRetries(ctx, func() error {
		var err error
		up, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(db), Key: aws.String(dk)})
		return s3WriteError(err)
	})
	if err != nil {
		return err
	}
	done := make([]types.CompletedPart, n)
	err = fanout.Each(n, 8, func(i int) error {
		first := int64(i) * part
		last := min(first+part, size) - 1
		return withRetries(ctx, func() error {
			out, err := c.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: aws.String(db), Key: aws.String(dk),
				UploadId: up.UploadId, PartNumber: aws.Int32(int32(i + 1)), CopySource: aws.String(source),
				CopySourceRange: aws.String(fmt.Sprintf("bytes=%d-%d", first, last)), CopySourceIfMatch: head.ETag})
			if err != nil {
				return s3WriteError(err)
			}
			if out.CopyPartResult == nil {
				return fmt.Errorf("part %d: UploadPartCopy returned no ETag", i+1)
			}
			done[i] = types.CompletedPart{ETag: out.CopyPartResult.ETag, PartNumber: aws.Int32(int32(i + 1))}
			return nil
		})
	})
	if err == nil {
		err = withRetries(ctx, func() error {
			_, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(db), Key: aws.String(dk),
				UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: slices.Clone(done)}})
			return s3WriteError(err)
		})
	}
	if err != nil {
		// Parts left behind are billed until aborted.
		c.AbortMultipartUpload(context.WithoutCancel(ctx), &s3.AbortMultipartUploadInput{Bucket: aws.String(db), Key: aws.String(dk), UploadId: up.UploadId})
		return err
	}
	return nil
}

// s3WriteError marks the errors of a copy that trying again cannot mend:
// 4xx but timeouts and throttling (a 412 means the source changed since
// it was sized).
func s3WriteError(err error) error {
	if clientError(err) {
		return Permanent(err)
	}
	return err
}
