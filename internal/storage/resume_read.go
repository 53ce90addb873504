package storage

import (
	"context"
	"io"
	"time"
)

// readRetry is how a store retries a read that failed for a passing reason: a dropped body, an
// unreachable endpoint, a 5xx. A read that makes progress starts its count again.
type readRetry struct {
	attempts   int           // failures in a row without progress before giving up
	maxBackoff time.Duration // the longest wait between two attempts
	retryable  func(error) bool
}

// wait sleeps before attempt fails+1, or returns err when the attempts are used up (or ctx's error).
func (p readRetry) wait(ctx context.Context, fails int, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if fails >= p.attempts {
		return err
	}
	return sleepBackoff(ctx, fails, p.maxBackoff)
}

// rangeOpener opens n bytes of an object from off (n < 0: to the end). size is the object's whole size
// when the answer tells it, -1 otherwise.
type rangeOpener func(off, n int64) (body io.ReadCloser, size int64, err error)

// dropError makes a store's error for a body that stopped at byte off with err.
type dropError func(off int64, err error) error

// readFullAt fills buf with the bytes at off, each attempt one ranged read of what is still missing.
func readFullAt(ctx context.Context, buf []byte, off int64, open rangeOpener, dropped dropError, p readRetry) (int, error) {
	done, fails := 0, 0
	for done < len(buf) {
		body, _, err := open(off+int64(done), int64(len(buf)-done))
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
			err = dropped(off+int64(done), err)
		} else if !p.retryable(err) {
			return done, err
		}
		fails++
		if werr := p.wait(ctx, fails, err); werr != nil {
			return done, werr
		}
	}
	return done, nil
}

// resumingReader streams an object from an offset; when the body drops (or ends before the object's
// size) it opens the rest at the byte it stopped at. The opener pins the version it read first.
type resumingReader struct {
	ctx     context.Context
	open    rangeOpener
	dropped dropError
	retry   readRetry
	off     int64
	size    int64 // -1 until known
	body    io.ReadCloser
	fails   int
}

// newResumingReader opens the object at off; size is its size if known (-1 otherwise).
func newResumingReader(ctx context.Context, off, size int64, open rangeOpener, dropped dropError, retry readRetry) (*resumingReader, error) {
	r := &resumingReader{ctx: ctx, open: open, dropped: dropped, retry: retry, off: off, size: size}
	if err := r.reopen(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *resumingReader) reopen() error {
	if r.size >= 0 && r.off >= r.size {
		r.body = io.NopCloser(eofReader{})
		return nil
	}
	body, size, err := r.open(r.off, -1)
	if err != nil {
		return err
	}
	if r.size < 0 && size >= 0 {
		r.size = size
	}
	r.body = body
	return nil
}

func (r *resumingReader) Read(p []byte) (int, error) {
	for {
		if r.body == nil {
			if err := r.reopen(); err != nil {
				if !r.retry.retryable(err) {
					return 0, err
				}
				r.fails++
				if err := r.retry.wait(r.ctx, r.fails, err); err != nil {
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
		if err == nil || (err == io.EOF && (r.size < 0 || r.off >= r.size)) {
			return n, err
		}
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // ended before the object's size: resume
		}
		r.body.Close()
		r.body = nil
		if n > 0 {
			return n, nil
		}
		r.fails++
		if werr := r.retry.wait(r.ctx, r.fails, r.dropped(r.off, err)); werr != nil {
			return 0, werr
		}
	}
}

func (r *resumingReader) Close() error {
	if r.body != nil {
		err := r.body.Close()
		r.body = nil
		return err
	}
	return nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// sleepBackoff waits before retry number attempt: 200 ms, doubling, at most maxWait.
func sleepBackoff(ctx context.Context, attempt int, maxWait time.Duration) error {
	return sleepCtx(ctx, min(time.Duration(100<<min(attempt, 10))*time.Millisecond, maxWait))
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
