package beamtest

import (
	"context"
	"testing"

	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/internal/storage/cloudtest"
)

// BucketMaker is a test server that makes buckets: s3test.Server, cloudtest.GCS or cloudtest.Azurite.
type BucketMaker interface {
	Setenv(t interface{ Setenv(k, v string) })
	NewBucket() (string, error)
}

// Bucket is a fresh bucket of a test server and the store opened on it.
type Bucket struct {
	Loc   storage.Location
	Store storage.Store
}

// Name is the bucket's name.
func (b Bucket) Name() string { return b.Loc.Bucket }

// URL is the bucket's URL, scheme://bucket, without a trailing slash.
func (b Bucket) URL() string { return b.Loc.Scheme + "://" + b.Loc.Bucket }

// NewBucket sets srv's endpoint and credentials in t's environment, makes a bucket and opens it as a
// store of scheme (s3, gs, azblob).
func NewBucket(t testing.TB, scheme string, srv BucketMaker) Bucket {
	t.Helper()
	srv.Setenv(t)
	name, err := srv.NewBucket()
	if err != nil {
		t.Fatalf("%s: new bucket: %v", scheme, err)
	}
	loc := storage.Location{Scheme: scheme, Bucket: name}
	st, err := storage.OpenBucket(context.Background(), loc, storage.S3Options{})
	if err != nil {
		t.Fatalf("%s: open bucket %s: %v", scheme, name, err)
	}
	return Bucket{Loc: loc, Store: st}
}

// CloudBuckets runs body as two subtests, gs and azblob, each with a fresh bucket of emu's Cloud
// Storage or Azure Blob Storage emulator (a subtest skips where its emulator could not start, and
// fails under CI).
func CloudBuckets(t *testing.T, emu *cloudtest.Emulators, body func(t *testing.T, b Bucket)) {
	t.Helper()
	for _, e := range []struct {
		scheme string
		need   func(t testing.TB) BucketMaker
	}{
		{"gs", func(t testing.TB) BucketMaker { return emu.NeedGCS(t) }},
		{"azblob", func(t testing.TB) BucketMaker { return emu.NeedAzure(t) }},
	} {
		t.Run(e.scheme, func(t *testing.T) {
			body(t, NewBucket(t, e.scheme, e.need(t)))
		})
	}
}
