package storage

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Location is a parsed storage address: a local path, or a bucket and a key (or key prefix) in it.
type Location struct {
	Scheme string // "s3", "gs" or "azblob" for a bucket (an Azure container); "" for a local path
	Bucket string // the bucket (Azure: the container)
	// Account is the Azure storage account when the URL names it (abfs://container@account.dfs…);
	// empty otherwise (azblob:// takes it from the environment).
	Account string
	Key     string // in a bucket: the key or prefix, no leading "/"; local: the path as given
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

// Parse parses "s3://bucket/key" (also "s3a://", Hadoop's name for the same bucket), "gs://bucket/key",
// "azblob://container/key" (also Hadoop's abfs[s]://container@account.dfs.core.windows.net/key and
// wasb[s]://container@account.blob.core.windows.net/key) or a local path. Other schemes are refused
// (ErrUnsupportedScheme) with a message saying what to use instead.
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
		bucket, key, _ := strings.Cut(rest, "/")
		if bucket == "" || strings.ContainsAny(bucket, "@:") {
			return Location{}, fmt.Errorf("%s: want gs://bucket/prefix (credentials come from Application Default Credentials, not the URL)", redactURL(s))
		}
		return Location{Scheme: "gs", Bucket: bucket, Key: key}, nil
	case "azblob":
		container, key, _ := strings.Cut(rest, "/")
		if container == "" || strings.ContainsAny(container, "@:") {
			return Location{}, fmt.Errorf("%s: want azblob://container/prefix (the account and its credentials come from AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT, not the URL)", redactURL(s))
		}
		return Location{Scheme: "azblob", Bucket: container, Key: key}, nil
	case "abfs", "abfss", "wasb", "wasbs":
		// Hadoop's names for a container: abfs[s]://container@account.dfs.core.windows.net/path,
		// wasb[s]://container@account.blob.core.windows.net/path.
		host, key, _ := strings.Cut(rest, "/")
		container, acctHost, ok := strings.Cut(host, "@")
		account, _, _ := strings.Cut(acctHost, ".")
		if !ok || container == "" || account == "" || strings.Contains(container, ":") {
			return Location{}, fmt.Errorf("%s: want %s://container@account.%s.core.windows.net/prefix, or azblob://container/prefix", redactURL(s), scheme, map[bool]string{true: "dfs", false: "blob"}[strings.HasPrefix(scheme, "abfs")])
		}
		return Location{Scheme: "azblob", Bucket: container, Account: account, Key: key}, nil
	case "az":
		return Location{}, fmt.Errorf("%w %s: write Azure Blob Storage URLs as azblob://container/prefix (or Hadoop's abfs://container@account.dfs.core.windows.net/prefix)", ErrUnsupportedScheme, redactURL(s))
	case "hdfs":
		return Location{}, fmt.Errorf("%w %s: HDFS is not supported; write to a local directory or a bucket and copy with `hadoop distcp`", ErrUnsupportedScheme, s)
	}
	return Location{}, fmt.Errorf("%w %s: hfload reads and writes local paths, s3://, gs:// and azblob:// only", ErrUnsupportedScheme, redactURL(s))
}

// String returns the location as a URL (or the local path).
func (l Location) String() string {
	if l.Scheme == "" {
		return l.Key
	}
	if l.Account != "" {
		return "abfss://" + l.Bucket + "@" + l.Account + ".dfs.core.windows.net/" + l.Key
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
