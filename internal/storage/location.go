package storage

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Location is a parsed storage address: a local path, or a bucket and a key (or key prefix) in it.
type Location struct {
	Scheme string // "s3" for a bucket; "" for a local path
	Bucket string // S3 bucket name
	Key    string // S3: the key or prefix, no leading "/"; local: the path as given
}

// ErrUnsupportedScheme is returned by Parse for URLs of stores hfload does not talk to.
var ErrUnsupportedScheme = errors.New("unsupported storage URL")

// IsRemote reports whether s is an object-store URL (any "scheme://" prefix), as opposed to a local
// path. Parse tells whether hfload supports it.
func IsRemote(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	for _, c := range s[:i] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Parse parses "s3://bucket/key" (also "s3a://", Hadoop's name for the same bucket) or a local path.
// gs://, azblob:// and other schemes are refused (ErrUnsupportedScheme) with a message saying what to
// use instead.
func Parse(s string) (Location, error) {
	if !IsRemote(s) {
		return Location{Key: s}, nil
	}
	i := strings.Index(s, "://")
	scheme, rest := strings.ToLower(s[:i]), s[i+3:]
	switch scheme {
	case "s3", "s3a":
		bucket, key, _ := strings.Cut(rest, "/")
		if bucket == "" {
			return Location{}, fmt.Errorf("%s: no bucket name (want s3://bucket/prefix)", s)
		}
		if strings.ContainsAny(bucket, "@:") {
			return Location{}, fmt.Errorf("s3://%s: a bucket name holds no credentials or port; credentials come from the environment or the AWS profile, the endpoint from AWS_ENDPOINT_URL_S3", redactBucket(bucket))
		}
		return Location{Scheme: "s3", Bucket: bucket, Key: key}, nil
	case "gs":
		return Location{}, fmt.Errorf("%w %s: gs:// is not supported yet; Cloud Storage's XML API speaks S3: create an HMAC key, "+
			"set AWS_ENDPOINT_URL_S3=https://storage.googleapis.com with the HMAC id and secret as AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, "+
			"and use s3://%s", ErrUnsupportedScheme, s, rest)
	case "azblob", "az", "wasb", "wasbs", "abfs", "abfss":
		return Location{}, fmt.Errorf("%w %s: Azure Blob Storage is not supported yet; load from or to a local directory and copy with azcopy, "+
			"or put an S3-compatible gateway in front of the container and use s3://", ErrUnsupportedScheme, s)
	case "hdfs":
		return Location{}, fmt.Errorf("%w %s: HDFS is not supported; write to a local directory or a bucket and copy with `hadoop distcp`", ErrUnsupportedScheme, s)
	}
	return Location{}, fmt.Errorf("%w %s: hfload reads and writes local paths and s3:// only", ErrUnsupportedScheme, redactURL(s))
}

// String returns the location as a URL (or the local path).
func (l Location) String() string {
	if l.Scheme == "" {
		return l.Key
	}
	return l.Scheme + "://" + l.Bucket + "/" + l.Key
}

// IsRemote reports whether l is in a bucket.
func (l Location) IsRemote() bool { return l.Scheme != "" }

// Child returns l with elem joined to its key by "/".
func (l Location) Child(elem ...string) Location {
	if l.Scheme == "" {
		l.Key = path.Join(append([]string{l.Key}, elem...)...)
		return l
	}
	l.Key = JoinKey(append([]string{l.Key}, elem...)...)
	return l
}

// JoinKey joins key elements with single slashes, dropping empty ones (no path cleaning: S3 keys are
// names, not paths).
func JoinKey(elem ...string) string {
	var b strings.Builder
	for _, e := range elem {
		e = strings.Trim(e, "/")
		if e == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(e)
	}
	return b.String()
}

// redactURL drops anything between "://" and "@" (user info) so that an error never repeats a
// credential someone put into a URL.
func redactURL(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	host, _, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(host, "@"); at >= 0 {
		return s[:i+3] + "REDACTED@" + rest[at+1:]
	}
	return s
}

func redactBucket(b string) string {
	if at := strings.LastIndex(b, "@"); at >= 0 {
		return "REDACTED@" + b[at+1:]
	}
	return b
}
