package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3Options tune an S3 store. The zero value is the defaults.
type S3Options struct {
	// PartSize is the size of multipart upload parts (default 8 MiB; S3's minimum, 5 MiB, is enforced).
	PartSize int64
	// PartsInFlight is how many parts of one upload are sent at a time while the next is filled
	// (default 2). An upload holds at most PartsInFlight+1 part buffers.
	PartsInFlight int
	// MaxAttempts is how many times a request is tried before it fails (default 5).
	MaxAttempts int
	// MaxBackoff caps the exponential backoff between attempts (default 5 s).
	MaxBackoff time.Duration
}

const (
	minPartSize     = 5 << 20
	defaultPartSize = 8 << 20
	defaultRegion   = "us-east-1"
)

func (o S3Options) withDefaults() S3Options {
	if o.PartSize == 0 {
		o.PartSize = defaultPartSize
	}
	o.PartSize = max(o.PartSize, minPartSize)
	if o.PartsInFlight <= 0 {
		o.PartsInFlight = 2
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	return o
}

// S3 is a Store over one S3 bucket.
type S3 struct {
	client   *s3.Client
	bucket   string
	opts     S3Options
	partBufs sync.Pool // *[]byte of cap PartSize: part buffers that finished uploads gave back
	// plainUploads is set once the store refused an upload with a full-object checksum
	// (s3_checksum.go): later uploads are created without.
	plainUploads atomic.Bool
}

// UploadMemory is the most memory one upload holds while it is written: PartsInFlight+1 part buffers
// (one filling, the others being sent). A writer accounts it per file it has open.
func (s *S3) UploadMemory() int64 { return int64(s.opts.PartsInFlight+1) * s.opts.PartSize }

// UploadBuffering is a Store whose uploads hold part buffers (S3): UploadMemory is the most one
// upload holds.
type UploadBuffering interface {
	UploadMemory() int64
}

// NewS3 returns a Store for bucket with credentials, region and endpoint from the AWS SDK's standard
// chain. An endpoint set by AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or a profile's endpoint_url is
// addressed path-style (what S3-compatible servers expect); without a region, us-east-1 is used. It
// makes no request: a missing bucket or bad credentials show in the first operation's error.
func NewS3(ctx context.Context, bucket string, opts S3Options) (*S3, error) {
	opts = opts.withDefaults()
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = opts.MaxAttempts
				o.MaxBackoff = opts.MaxBackoff
				o.RateLimiter = ratelimit.None // never fail a request for lack of retry tokens
			})
		}))
	if err != nil {
		// The shared config could not be read (a bad profile name, a malformed file). The message
		// names files and profiles, not secrets.
		return nil, &Error{Op: "configure", URL: "s3://" + bucket, Kind: KindCredentials, Err: err}
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	bw := &bodyWriter{}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.HTTPClient = bw.httpClient(o.HTTPClient) // parts sent in larger writes (s3_conn.go)
		// Ranged GETs of many S3-compatible stores carry no checksum; the SDK would print a warning
		// to stderr for each. Every byte read is checked by its format (gzip/zstd CRCs, Parquet pages,
		// the manifest's SHA-256) instead.
		o.DisableLogOutputChecksumValidationSkipped = true
		// No "Expect: 100-continue" on parts: it costs a round trip before every part's body.
		o.ContinueHeaderThresholdBytes = -1
		if o.BaseEndpoint != nil || os.Getenv("AWS_ENDPOINT_URL_S3") != "" || os.Getenv("AWS_ENDPOINT_URL") != "" {
			o.UsePathStyle = true
		}
	})
	return &S3{client: client, bucket: bucket, opts: opts}, nil
}

func (s *S3) URL(key string) string { return "s3://" + s.bucket + "/" + key }

func (s *S3) Stat(ctx context.Context, key string) (Info, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		if httpStatus(err) == 403 || httpStatus(err) == 400 || httpStatus(err) == 404 {
			// A HEAD reply has no body, so "Forbidden" may be bad credentials as well as a policy,
			// and "Not Found" a missing bucket as well as a missing key: a one-byte GET says which.
			if _, gerr := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key, Range: aws.String("bytes=0-0")}); gerr != nil && apiCode(gerr) != "InvalidRange" {
				err = gerr
			}
		}
		return Info{}, s.wrap("stat", key, err)
	}
	return Info{Key: key, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified), ETag: unquote(aws.ToString(out.ETag))}, nil
}

func (s *S3) List(ctx context.Context, prefix string) ([]Info, error) {
	var out []Info
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, s.wrap("list", prefix, err)
		}
		for _, o := range page.Contents {
			out = append(out, Info{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified), ETag: unquote(aws.ToString(o.ETag))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (s *S3) Put(ctx context.Context, key string, data []byte, opts PutOptions) error {
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
	if opts.IfAbsent {
		in.IfNoneMatch = aws.String("*")
	}
	_, err := s.client.PutObject(ctx, in)
	if opts.IfAbsent && err != nil && (apiCode(err) == "NotImplemented" || httpStatus(err) == 501) {
		// Stores that do not implement conditional writes say so instead of ignoring the header.
		return &Error{Op: "put", URL: s.URL(key), Kind: KindNoConditionalWrites, Err: err}
	}
	return s.wrap("put", key, err)
}

func (s *S3) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	if err = s.wrap("delete", key, err); errors.Is(err, ErrNotExist) && !IsKind(err, KindNoBucket) {
		return nil
	}
	return err
}

func (s *S3) Uploads(ctx context.Context, prefix string) ([]Pending, error) {
	var out []Pending
	in := &s3.ListMultipartUploadsInput{Bucket: &s.bucket, Prefix: &prefix}
	for {
		page, err := s.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return nil, s.wrap("list uploads", prefix, err)
		}
		for _, u := range page.Uploads {
			out = append(out, Pending{Key: aws.ToString(u.Key), ID: aws.ToString(u.UploadId)})
		}
		if !aws.ToBool(page.IsTruncated) || (page.NextKeyMarker == nil && page.NextUploadIdMarker == nil) {
			break
		}
		in.KeyMarker, in.UploadIdMarker = page.NextKeyMarker, page.NextUploadIdMarker
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// parts lists the stored parts of an upload (to complete an upload another process finished), and
// whether it was created with a full-object CRC32.
func (s *S3) parts(ctx context.Context, p Pending) ([]Part, bool, error) {
	var out []Part
	var fullCRC bool
	in := &s3.ListPartsInput{Bucket: &s.bucket, Key: &p.Key, UploadId: &p.ID}
	for {
		page, err := s.client.ListParts(ctx, in)
		if err != nil {
			return nil, false, err
		}
		fullCRC = page.ChecksumType == types.ChecksumTypeFullObject && page.ChecksumAlgorithm == types.ChecksumAlgorithmCrc32
		for _, pt := range page.Parts {
			out = append(out, Part{Number: aws.ToInt32(pt.PartNumber), ETag: unquote(aws.ToString(pt.ETag)),
				Size: aws.ToInt64(pt.Size), CRC32: aws.ToString(pt.ChecksumCRC32)})
		}
		if !aws.ToBool(page.IsTruncated) || page.NextPartNumberMarker == nil {
			break
		}
		in.PartNumberMarker = page.NextPartNumberMarker
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out, fullCRC, nil
}

func (s *S3) Complete(ctx context.Context, p Pending) error {
	parts := p.Parts
	if len(parts) == 0 {
		var err error
		if parts, p.CRC32, err = s.parts(ctx, p); err != nil {
			return s.completedBefore(ctx, p, err)
		}
	}
	in := &s3.CompleteMultipartUploadInput{Bucket: &s.bucket, Key: &p.Key, UploadId: &p.ID}
	done := make([]types.CompletedPart, len(parts))
	var size int64
	for i, pt := range parts {
		done[i] = types.CompletedPart{PartNumber: aws.Int32(pt.Number), ETag: aws.String(quote(pt.ETag))}
		if p.CRC32 {
			done[i].ChecksumCRC32 = aws.String(pt.CRC32)
		}
		size += pt.Size
	}
	in.MultipartUpload = &types.CompletedMultipartUpload{Parts: done}
	if p.CRC32 {
		// The server checks the parts' CRCs, the object's size and its CRC (the parts' combined).
		crc, ok := objectCRC(parts)
		if !ok {
			return s.wrap("complete", p.Key, errors.New("a part of the upload has no CRC32"))
		}
		in.ChecksumType, in.ChecksumCRC32, in.MpuObjectSize = types.ChecksumTypeFullObject, &crc, &size
	}
	if _, err := s.client.CompleteMultipartUpload(ctx, in); err != nil {
		return s.completedBefore(ctx, p, err)
	}
	return nil
}

// completedBefore turns a NoSuchUpload error of Complete into success when the object is there (the
// upload was completed by an earlier attempt whose reply was lost, or by a run that was killed).
func (s *S3) completedBefore(ctx context.Context, p Pending, err error) error {
	if apiCode(err) == "NoSuchUpload" {
		if info, serr := s.Stat(ctx, p.Key); serr == nil && (p.Size == 0 || info.Size == p.Size) {
			return nil
		}
	}
	return s.wrap("complete", p.Key, err)
}

func (s *S3) Abort(ctx context.Context, p Pending) error {
	_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &p.Key, UploadId: &p.ID})
	if err != nil && apiCode(err) != "NoSuchUpload" {
		return s.wrap("abort upload of", p.Key, err)
	}
	return nil
}

func unquote(etag string) string { return strings.Trim(etag, `"`) }

func quote(etag string) string {
	if strings.HasPrefix(etag, `"`) {
		return etag
	}
	return `"` + etag + `"`
}

// IsKind reports whether err is a storage *Error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

var _ Store = (*S3)(nil)
var _ Store = (*Local)(nil)

// String names the store for messages.
func (s *S3) String() string { return fmt.Sprintf("s3://%s", s.bucket) }
