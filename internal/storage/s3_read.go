package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

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
	want := p
	if rest := o.info.Size - off; int64(len(want)) > rest {
		want = want[:rest]
	}
	n, err := o.s.readRange(o.ctx, o.info.Key, o.info.ETag, off, want)
	if err == nil && n < len(p) {
		err = io.EOF
	}
	return n, err
}

// readRange fills buf from key at off (version etag, if set). A body that drops is resumed from where
// it stopped, with backoff, up to MaxAttempts times in a row without progress.
func (s *S3) readRange(ctx context.Context, key, etag string, off int64, buf []byte) (int, error) {
	done, fails := 0, 0
	for done < len(buf) {
		body, _, err := s.get(ctx, key, etag, off+int64(done), off+int64(len(buf))-1)
		if err == nil {
			var n int
			n, err = io.ReadFull(body, buf[done:])
			body.Close()
			done += n
			if n > 0 {
				fails = 0
			}
			if err == nil {
				break
			}
			err = s.wrap("read", key, fmt.Errorf("download dropped at byte %d: %w", off+int64(done), err))
		} else if !retryable(err) {
			return done, err
		}
		fails++
		if fails >= s.opts.MaxAttempts {
			return done, err
		}
		if werr := s.backoff(ctx, fails); werr != nil {
			return done, werr
		}
	}
	return done, nil
}

// get starts a GET of key from byte off to end (inclusive; -1: to the end), of version etag if set.
func (s *S3) get(ctx context.Context, key, etag string, off, end int64) (io.ReadCloser, string, error) {
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &key}
	if off > 0 || end >= 0 {
		r := fmt.Sprintf("bytes=%d-", off)
		if end >= 0 {
			r += fmt.Sprint(end)
		}
		in.Range = &r
	}
	if etag != "" {
		in.IfMatch = aws.String(quote(etag))
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		if apiCode(err) == "PreconditionFailed" {
			return nil, "", s.wrap("read", key, errors.New("the object was replaced while it was read"))
		}
		return nil, "", s.wrap("read", key, err)
	}
	return out.Body, unquote(aws.ToString(out.ETag)), nil
}

func (s *S3) backoff(ctx context.Context, attempt int) error {
	d := min(time.Duration(100<<min(attempt, 10))*time.Millisecond, s.opts.MaxBackoff)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// s3Reader streams an object, resuming with a ranged GET of the same version when the body drops.
type s3Reader struct {
	s     *S3
	ctx   context.Context
	key   string
	etag  string
	off   int64
	size  int64 // -1 until known
	body  io.ReadCloser
	fails int
}

func (s *S3) Reader(ctx context.Context, key string, off int64) (io.ReadCloser, error) {
	r := &s3Reader{s: s, ctx: ctx, key: key, off: off, size: -1}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *s3Reader) open() error {
	if r.size >= 0 && r.off >= r.size {
		r.body = io.NopCloser(eofReader{})
		return nil
	}
	in := &s3.GetObjectInput{Bucket: &r.s.bucket, Key: &r.key}
	if r.off > 0 {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", r.off))
	}
	if r.etag != "" {
		in.IfMatch = aws.String(quote(r.etag))
	}
	out, err := r.s.client.GetObject(r.ctx, in)
	if err != nil {
		switch apiCode(err) {
		case "InvalidRange":
			r.body = io.NopCloser(eofReader{})
			return nil
		case "PreconditionFailed":
			return r.s.wrap("read", r.key, errors.New("the object was replaced while it was read"))
		}
		return r.s.wrap("read", r.key, err)
	}
	if r.etag == "" {
		r.etag = unquote(aws.ToString(out.ETag))
	}
	if r.size < 0 && out.ContentLength != nil {
		r.size = r.off + *out.ContentLength
	}
	r.body = out.Body
	return nil
}

func (r *s3Reader) Read(p []byte) (int, error) {
	for {
		if r.body == nil {
			if err := r.open(); err != nil {
				if !retryable(err) {
					return 0, err
				}
				if err := r.retry(err); err != nil {
					return 0, err
				}
				continue
			}
		}
		n, err := r.body.Read(p)
		r.off += int64(n)
		if n > 0 {
			r.fails = 0
		}
		if err == nil || err == io.EOF {
			if err == io.EOF && r.size >= 0 && r.off < r.size {
				err = io.ErrUnexpectedEOF // fall through to resume
			} else {
				return n, err
			}
		}
		r.body.Close()
		r.body = nil
		if n > 0 {
			return n, nil
		}
		if rerr := r.retry(r.s.wrap("read", r.key, fmt.Errorf("download dropped at byte %d: %w", r.off, err))); rerr != nil {
			return 0, rerr
		}
	}
}

func (r *s3Reader) retry(err error) error {
	if r.ctx.Err() != nil {
		return r.ctx.Err()
	}
	r.fails++
	if r.fails >= r.s.opts.MaxAttempts {
		return err
	}
	return r.s.backoff(r.ctx, r.fails)
}

func (r *s3Reader) Close() error {
	if r.body != nil {
		err := r.body.Close()
		r.body = nil
		return err
	}
	return nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
