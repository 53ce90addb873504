package storage

import (
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// s3Object reads an object by ranges, pinned to the version (ETag) it had at Open.
type s3Object struct {
	s    *S3
	ctx  context.Context
	info Info
}

func (s *S3) Open(ctx context.Context, key string) (Object, error) {
	info, err := s.Stat(ctx, key)
	if err != nil {
		return nil, err
	}
	return &s3Object{s: s, ctx: ctx, info: info}, nil
}

func (o *s3Object) Info() Info   { return o.info }
func (o *s3Object) Close() error { return nil }

// ReadAt reads len(p) bytes at off with one ranged GET (resumed if the body drops).
func (o *s3Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read %s: negative offset", o.s.URL(o.info.Key))
	}
	if off >= o.info.Size {
		return 0, io.EOF
	}
	want := p[:min(int64(len(p)), o.info.Size-off)]
	n, err := readFullAt(o.ctx, want, off, o.s.opener(o.ctx, o.info.Key, o.info.ETag), o.s.dropped(o.info.Key), o.s.readRetry())
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

func (s *S3) readRetry() readRetry {
	return readRetry{attempts: s.opts.MaxAttempts, maxBackoff: s.opts.MaxBackoff, retryable: retryable}
}

func (s *S3) dropped(key string) dropError {
	return func(off int64, err error) error {
		return s.wrap("read", key, fmt.Errorf("download dropped at byte %d: %w", off, err))
	}
}

// opener reads ranges of key, of version *etag if set; an empty *etag is set from the first answer,
// so every later range reads the same version.
func (s *S3) opener(ctx context.Context, key, etag string) rangeOpener {
	return func(off, n int64) (io.ReadCloser, int64, error) {
		in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &key}
		if off > 0 || n >= 0 {
			r := fmt.Sprintf("bytes=%d-", off)
			if n >= 0 {
				r += fmt.Sprint(off + n - 1)
			}
			in.Range = &r
		}
		if etag != "" {
			in.IfMatch = aws.String(quote(etag))
		}
		out, err := s.client.GetObject(ctx, in)
		if err != nil {
			switch apiCode(err) {
			case "InvalidRange":
				return io.NopCloser(eofReader{}), -1, nil
			case "PreconditionFailed":
				return nil, -1, readChanged(s.URL(key))
			}
			return nil, -1, s.wrap("read", key, err)
		}
		if etag == "" {
			etag = unquote(aws.ToString(out.ETag))
		}
		size := int64(-1)
		if out.ContentLength != nil && n < 0 {
			size = off + *out.ContentLength
		}
		return out.Body, size, nil
	}
}

// Reader streams key from off, resuming with a ranged GET of the same version when the body drops.
func (s *S3) Reader(ctx context.Context, key string, off int64) (io.ReadCloser, error) {
	return newResumingReader(ctx, off, -1, s.opener(ctx, key, ""), s.dropped(key), s.readRetry())
}
