package storage_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/internal/storage/s3test"
)

func newS3(t *testing.T, srv *s3test.Server, opts storage.S3Options) (*storage.S3, string) {
	t.Helper()
	srv.Setenv(t)
	bucket, err := srv.NewBucket()
	must(t, err)
	st, err := storage.NewS3(context.Background(), bucket, opts)
	must(t, err)
	return st, bucket
}

func TestS3Errors(t *testing.T) {
	srv := gw.Need(t)
	ctx := context.Background()

	t.Run("missing-bucket", func(t *testing.T) {
		srv.Setenv(t)
		st, err := storage.NewS3(ctx, "no-such-bucket-hf", fast)
		must(t, err)
		_, err = st.List(ctx, "in/")
		wantKind(t, err, storage.KindNoBucket, "s3://no-such-bucket-hf/in/", "bucket does not exist")
		u, err := st.Create(ctx, "out/f/h")
		if u != nil {
			t.Fatal("upload into a missing bucket started")
		}
		wantKind(t, err, storage.KindNoBucket, "s3://no-such-bucket-hf/out/f/h", "bucket does not exist")
	})
	t.Run("wrong-credentials", func(t *testing.T) {
		st, bucket := newS3(t, srv, fast)
		must(t, st.Put(ctx, "k", []byte("x"), storage.PutOptions{}))
		t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-7d1f")
		bad, err := storage.NewS3(ctx, bucket, fast)
		must(t, err)
		_, err = bad.Stat(ctx, "k")
		wantKind(t, err, storage.KindCredentials, "s3://"+bucket+"/k", "rejected the credentials")
		_, err = bad.Reader(ctx, "k", 0)
		wantKind(t, err, storage.KindCredentials, "s3://"+bucket+"/k", "SignatureDoesNotMatch")
		for _, secret := range []string{"wrong-secret-7d1f", srv.SecretKey} {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error shows a secret: %v", err)
			}
		}
		t.Setenv("AWS_ACCESS_KEY_ID", "NOSUCHKEY")
		bad, err = storage.NewS3(ctx, bucket, fast)
		must(t, err)
		_, err = bad.List(ctx, "")
		wantKind(t, err, storage.KindCredentials, "s3://"+bucket+"/", "rejected the credentials")
	})
	t.Run("no-credentials", func(t *testing.T) {
		srv.Setenv(t)
		t.Setenv("AWS_ACCESS_KEY_ID", "")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "")
		st, err := storage.NewS3(ctx, "anything", fast)
		must(t, err)
		_, err = st.List(ctx, "x/")
		wantKind(t, err, storage.KindCredentials, "s3://anything/x/", "no credentials found")
	})
}
