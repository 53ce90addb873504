package storage

import (
	"bytes"
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// PutIf is PutObject with If-None-Match: * (match "") or If-Match: "match". AWS S3 has honoured both
// since 2024; versitygw v1.8.0 evaluates them under its per-object publish lock
// (backend/posix/objlock.go), so two conditional writers of one key cannot both win.
func (s *S3) PutIf(ctx context.Context, key string, data []byte, match string) (Info, error) {
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
	if match == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(quote(match))
	}
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		switch {
		case apiCode(err) == "NotImplemented" || httpStatus(err) == 501:
			return Info{}, &Error{Op: "put", URL: s.URL(key), Kind: KindNoConditionalWrites, Err: err}
		case apiCode(err) == "ConditionalRequestConflict": // AWS: a concurrent conditional write won
			return Info{}, &Error{Op: "put", URL: s.URL(key), Kind: KindChanged, Err: err}
		}
		return Info{}, conditionFailed(s.wrap("put", key, err), match)
	}
	return Info{Key: key, Size: int64(len(data)), ETag: unquote(aws.ToString(out.ETag))}, nil
}

// DeleteIf is DeleteObject with If-Match. A store that does not implement conditional deletes
// (501) gets a Stat, a comparison and a plain delete instead: not atomic, but a lock's holder deletes
// only its own fresh version, which no taker replaces.
func (s *S3) DeleteIf(ctx context.Context, key, match string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key, IfMatch: aws.String(quote(match))})
	if err != nil && (apiCode(err) == "NotImplemented" || httpStatus(err) == 501) {
		info, serr := s.Stat(ctx, key)
		if serr != nil {
			if IsKind(serr, KindNotFound) {
				return nil
			}
			return serr
		}
		if info.ETag != match {
			return &Error{Op: "delete", URL: s.URL(key), Kind: KindChanged, Err: ErrChanged}
		}
		return s.Delete(ctx, key)
	}
	err = s.wrap("delete", key, err)
	if IsKind(err, KindNotFound) {
		return nil
	}
	return absentIsDeleted(ctx, s, key, conditionFailed(err, match))
}

var _ Versioned = (*S3)(nil)
