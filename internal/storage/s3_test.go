package storage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

func TestS3Conformance(t *testing.T) {
	srv := gw.Need(t)
	st, _ := newS3(t, srv, storage.S3Options{PartSize: 5 << 20})
	conformance(t, st)
}

func TestS3Errors(t *testing.T) {
	srv := gw.Need(t)
	ctx := context.Background()
	fast := storage.S3Options{MaxAttempts: 2, MaxBackoff: 50 * time.Millisecond}

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
	t.Run("endpoint-down", func(t *testing.T) {
		srv.Setenv(t)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		addr := l.Addr().String()
		l.Close()
		t.Setenv("AWS_ENDPOINT_URL_S3", "http://"+addr)
		st, err := storage.NewS3(ctx, "bkt", fast)
		must(t, err)
		_, err = st.Stat(ctx, "in/a.csv")
		wantKind(t, err, storage.KindUnreachable, "s3://bkt/in/a.csv", "cannot reach the storage endpoint")
	})
}

func wantKind(t *testing.T, err error, k storage.Kind, url, text string) {
	t.Helper()
	var se *storage.Error
	if !errors.As(err, &se) || se.Kind != k {
		t.Fatalf("want kind %d, got %#v (%v)", k, err, err)
	}
	if msg := err.Error(); !strings.Contains(msg, url) || !strings.Contains(msg, text) {
		t.Fatalf("message %q does not name %s / say %q", msg, url, text)
	}
	if !storage.IsStorageError(err) {
		t.Fatal("not a storage error")
	}
}

// TestS3ReaderResumes reads through a loopback TCP proxy that cuts the first connections after 300 KB
// of response: the stream and the ranged reads resume with ranged GETs and return the exact bytes.
func TestS3ReaderResumes(t *testing.T) {
	srv := gw.Need(t)
	ctx := context.Background()
	st, bucket := newS3(t, srv, storage.S3Options{})
	data := pattern(2<<20, 9)
	must(t, st.Put(ctx, "big.csv", data, storage.PutOptions{}))

	cuts := atomic.Int32{}
	cuts.Store(3)
	proxy := cuttingProxy(t, strings.TrimPrefix(srv.Endpoint, "http://"), 300_000, &cuts)
	t.Setenv("AWS_ENDPOINT_URL_S3", "http://"+proxy)
	viaProxy, err := storage.NewS3(ctx, bucket, storage.S3Options{MaxBackoff: 10 * time.Millisecond})
	must(t, err)
	r, err := viaProxy.Reader(ctx, "big.csv", 0)
	must(t, err)
	got, err := io.ReadAll(r)
	must(t, err)
	r.Close()
	if !bytes.Equal(got, data) {
		t.Fatalf("resumed stream differs: %d bytes", len(got))
	}
	if cuts.Load() > 0 {
		t.Fatalf("the proxy cut no connection (%d cuts left): the test proves nothing", cuts.Load())
	}
	cuts.Store(1)
	obj, err := viaProxy.Open(ctx, "big.csv")
	must(t, err)
	buf := make([]byte, 1<<20)
	n, err := obj.ReadAt(buf, 4096)
	if err != nil || n != len(buf) || !bytes.Equal(buf, data[4096:4096+len(buf)]) {
		t.Fatalf("resumed ReadAt: n=%d err=%v", n, err)
	}
}

// cuttingProxy forwards loopback TCP to target; while cuts > 0, each connection is closed after limit
// bytes of response.
func cuttingProxy(t *testing.T, target string, limit int64, cuts *atomic.Int32) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				if cuts.Add(-1) >= 0 {
					io.CopyN(c, up, limit)
					return
				}
				io.Copy(c, up)
			}()
		}
	}()
	return l.Addr().String()
}
