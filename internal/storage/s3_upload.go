package storage

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"sort"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go/middleware"
)

// s3Upload is a multipart upload to its final key. Parts are sent while the next one fills, at most
// PartsInFlight at a time; Write blocks when they are all busy, so an upload holds at most
// PartsInFlight+1 buffers of PartSize bytes.
type s3Upload struct {
	s   *S3
	ctx context.Context
	p   Pending

	buf       []byte
	free      chan []byte // returned part buffers
	allocated int
	next      int32 // last part number used

	wg    sync.WaitGroup
	mu    sync.Mutex
	parts []Part
	err   error
	state int // 0 writing, 1 finished, 2 aborted
}

func (s *S3) Create(ctx context.Context, key string) (Upload, error) {
	in := &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key}
	if !s.plainUploads.Load() {
		in.ChecksumAlgorithm, in.ChecksumType = types.ChecksumAlgorithmCrc32, types.ChecksumTypeFullObject
	}
	out, err := s.client.CreateMultipartUpload(ctx, in)
	if err != nil && in.ChecksumType != "" && refusesChecksumType(err) {
		// A store without full-object checksums: plain uploads from now on (parts still carry
		// their CRC32, which it checks if it knows the header).
		s.plainUploads.Store(true)
		in.ChecksumAlgorithm, in.ChecksumType = "", ""
		out, err = s.client.CreateMultipartUpload(ctx, in)
	}
	if err != nil {
		return nil, s.wrap("upload", key, err)
	}
	return &s3Upload{
		s: s, ctx: ctx,
		p:    Pending{Key: key, ID: aws.ToString(out.UploadId), CRC32: in.ChecksumType != ""},
		free: make(chan []byte, s.opts.PartsInFlight+1),
	}, nil
}

// refusesChecksumType reports whether CreateMultipartUpload failed because the store does not take
// x-amz-checksum-algorithm / x-amz-checksum-type (an older S3-compatible server).
func refusesChecksumType(err error) bool {
	switch apiCode(err) {
	case "NotImplemented", "InvalidArgument", "InvalidRequest":
		return true
	}
	return httpStatus(err) == 501
}

func (u *s3Upload) failed() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.err
}

func (u *s3Upload) Write(b []byte) (int, error) {
	if u.state != 0 {
		return 0, u.s.wrap("upload", u.p.Key, errors.New("write after Finish or Abort"))
	}
	written := 0
	for len(b) > 0 {
		if err := u.failed(); err != nil {
			return written, err
		}
		if u.buf == nil {
			buf, err := u.buffer()
			if err != nil {
				return written, err
			}
			u.buf = buf
		}
		n := min(len(b), int(u.s.opts.PartSize)-len(u.buf))
		u.buf = append(u.buf, b[:n]...)
		b = b[n:]
		written += n
		u.p.Size += int64(n)
		if len(u.buf) == int(u.s.opts.PartSize) {
			u.send(u.buf)
			u.buf = nil
		}
	}
	return written, nil
}

// buffer returns an empty part buffer: a new one while fewer than PartsInFlight+1 exist, else one
// that a finished part gives back (waiting for it).
func (u *s3Upload) buffer() ([]byte, error) {
	select {
	case b := <-u.free:
		return b[:0], nil
	default:
	}
	if u.allocated < cap(u.free) {
		u.allocated++
		if b, ok := u.s.partBufs.Get().(*[]byte); ok {
			return (*b)[:0], nil
		}
		return make([]byte, 0, u.s.opts.PartSize), nil
	}
	select {
	case b := <-u.free:
		return b[:0], nil
	case <-u.ctx.Done():
		return nil, u.ctx.Err()
	}
}

// send uploads buf as the next part in the background.
func (u *s3Upload) send(buf []byte) {
	u.next++
	n := u.next
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		// The part's CRC32, computed here (the SDK would compute it too, reading the part once
		// more): the server checks it, and Complete combines the parts' CRCs into the object's.
		crc := crcBase64(crc32.ChecksumIEEE(buf))
		out, err := u.s.client.UploadPart(u.ctx, &s3.UploadPartInput{
			Bucket: &u.s.bucket, Key: &u.p.Key, UploadId: &u.p.ID,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(buf), ContentLength: aws.Int64(int64(len(buf))),
			ChecksumCRC32: &crc,
		}, s3.WithAPIOptions(unsignedPayload))
		u.mu.Lock()
		if err != nil {
			if u.err == nil {
				u.err = u.s.wrap("upload", u.p.Key, err)
			}
		} else {
			u.parts = append(u.parts, Part{Number: n, ETag: unquote(aws.ToString(out.ETag)), Size: int64(len(buf)), CRC32: crc})
		}
		u.mu.Unlock()
		u.free <- buf
	}()
}

func (u *s3Upload) Finish(ctx context.Context) (Pending, error) {
	if u.state != 0 {
		return Pending{}, u.s.wrap("upload", u.p.Key, errors.New("Finish after Finish or Abort"))
	}
	if u.buf != nil || u.next == 0 {
		u.send(u.buf) // the last part (S3 needs at least one)
		u.buf = nil
	}
	u.wg.Wait()
	u.recycle()
	if err := u.failed(); err != nil {
		return Pending{}, err
	}
	u.state = 1
	sort.Slice(u.parts, func(i, j int) bool { return u.parts[i].Number < u.parts[j].Number })
	p := u.p
	p.Parts = u.parts
	return p, nil
}

func (u *s3Upload) Abort(ctx context.Context) error {
	if u.state != 0 {
		return nil
	}
	u.state = 2
	u.wg.Wait()
	u.buf = nil
	u.recycle()
	return u.s.Abort(ctx, u.p)
}

// recycle gives the upload's part buffers (all returned: no part is in flight) to the store for the
// next upload.
func (u *s3Upload) recycle() {
	for {
		select {
		case b := <-u.free:
			u.s.partBufs.Put(&b)
		default:
			u.free = nil
			return
		}
	}
}

// unsignedPayload signs a request with UNSIGNED-PAYLOAD instead of the SHA-256 of its body, which the
// SDK computes for plain-HTTP endpoints (over HTTPS it sends unsigned payloads with a trailing checksum
// by default). A part's bytes stay protected end to end: the SDK still sends their CRC32
// (x-amz-checksum-crc32), which the server checks, and every HFile is verified as it streams. Hashing
// each part with SHA-256 took about a tenth of a load's CPU, and the server's as much again.
func unsignedPayload(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("hfloadUnsignedPayload",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			return next.HandleInitialize(v4.SetPayloadHash(ctx, "UNSIGNED-PAYLOAD"), in)
		}), middleware.After)
}
