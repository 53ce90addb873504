package storage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/storage"
)

// remote is an object store whose tests run on its real server (or emulator) on loopback.
type remote struct {
	scheme string
	// open sets the environment for the package's server and returns a store on a fresh bucket.
	open func(t *testing.T, opts storage.S3Options) (storage.Store, string)
	// server sets the environment for the package's server and returns its address (host:port).
	server func(t *testing.T) string
	// via points the environment at addr instead (a proxy in front of the server, or a closed port),
	// with the same account and credentials.
	via func(t *testing.T, addr string)
}

var remotes = []remote{
	{
		scheme: "s3",
		open: func(t *testing.T, opts storage.S3Options) (storage.Store, string) {
			return newS3(t, gw.Need(t), opts)
		},
		server: func(t *testing.T) string {
			srv := gw.Need(t)
			srv.Setenv(t)
			return strings.TrimPrefix(srv.Endpoint, "http://")
		},
		via: func(t *testing.T, addr string) { t.Setenv("AWS_ENDPOINT_URL_S3", "http://"+addr) },
	},
	{
		scheme: "gs",
		open:   newGCS,
		server: func(t *testing.T) string { return serve(t, emu.NeedGCS(t)) },
		via:    func(t *testing.T, addr string) { t.Setenv("STORAGE_EMULATOR_HOST", addr) },
	},
	{
		scheme: "azblob",
		open:   newAzure,
		server: func(t *testing.T) string { return serve(t, emu.NeedAzure(t)) },
		via: func(t *testing.T, addr string) {
			a := emu.NeedAzure(t)
			t.Setenv("AZURE_STORAGE_CONNECTION_STRING", strings.Replace(a.ConnectionString(), a.Addr(), addr, 1))
		},
	},
}

// serve sets the environment for emulator e and returns its address.
func serve(t *testing.T, e interface {
	Setenv(t interface{ Setenv(k, v string) })
	Addr() string
}) string {
	e.Setenv(t)
	return e.Addr()
}

// reopen opens bucket with a new client, from the environment as it is now.
func (r remote) reopen(t *testing.T, bucket string, opts storage.S3Options) storage.Store {
	t.Helper()
	return openBucket(t, r.scheme, bucket, opts)
}

func openBucket(t *testing.T, scheme, bucket string, opts storage.S3Options) storage.Store {
	t.Helper()
	st, err := storage.OpenBucket(context.Background(), storage.Location{Scheme: scheme, Bucket: bucket}, opts)
	must(t, err)
	return st
}

// bucketMaker is a test server that makes buckets (s3test.Server, cloudtest.GCS and Azurite).
type bucketMaker interface {
	Setenv(t interface{ Setenv(k, v string) })
	NewBucket() (string, error)
}

// freshBucket sets srv's environment and opens a new bucket of it.
func freshBucket(t *testing.T, scheme string, srv bucketMaker, opts storage.S3Options) (storage.Store, string) {
	t.Helper()
	srv.Setenv(t)
	bucket, err := srv.NewBucket()
	must(t, err)
	return openBucket(t, scheme, bucket, opts), bucket
}

func newGCS(t *testing.T, opts storage.S3Options) (storage.Store, string) {
	return freshBucket(t, "gs", emu.NeedGCS(t), opts)
}

func newAzure(t *testing.T, opts storage.S3Options) (storage.Store, string) {
	return freshBucket(t, "azblob", emu.NeedAzure(t), opts)
}

// TestRemoteConformance: the Store contract (the one the local directory passes), conditional writes,
// and for Cloud Storage and Azure the staged uploads, on each real server.
func TestRemoteConformance(t *testing.T) {
	for _, r := range remotes {
		t.Run(r.scheme, func(t *testing.T) {
			st, _ := r.open(t, storage.S3Options{PartSize: 5 << 20})
			conformance(t, st)
			versioned(t, st)
			if r.scheme != "s3" {
				stagedUploadsHidden(t, st)
			}
		})
	}
}

var fast = storage.S3Options{MaxAttempts: 2, MaxBackoff: 50 * time.Millisecond}

// TestRemoteMissingBucketAndEndpointDown: errors every store reports alike, naming the object.
func TestRemoteMissingBucketAndEndpointDown(t *testing.T) {
	ctx := context.Background()
	for _, r := range remotes {
		t.Run(r.scheme+"/missing-bucket", func(t *testing.T) {
			r.server(t)
			st := r.reopen(t, "no-such-bucket-hf", fast)
			_, err := st.List(ctx, "in/")
			wantKind(t, err, storage.KindNoBucket, r.scheme+"://no-such-bucket-hf/in/", "bucket does not exist")
			_, err = st.Stat(ctx, "in/a.csv")
			wantKind(t, err, storage.KindNoBucket, r.scheme+"://no-such-bucket-hf/in/a.csv", "bucket does not exist")
		})
		t.Run(r.scheme+"/endpoint-down", func(t *testing.T) {
			r.server(t)
			l, err := net.Listen("tcp", "127.0.0.1:0")
			must(t, err)
			addr := l.Addr().String()
			l.Close()
			r.via(t, addr)
			st := r.reopen(t, "bkt", fast)
			_, err = st.Stat(ctx, "in/a.csv")
			wantKind(t, err, storage.KindUnreachable, r.scheme+"://bkt/in/a.csv", "cannot reach the storage endpoint")
		})
	}
}

// TestRemoteReaderResumes reads through a loopback TCP proxy that cuts the first connections after
// 300 KB of response: the stream and the ranged reads resume with ranged reads of the same version
// and return the exact bytes.
func TestRemoteReaderResumes(t *testing.T) {
	ctx := context.Background()
	for _, r := range remotes {
		t.Run(r.scheme, func(t *testing.T) {
			st, bucket := r.open(t, storage.S3Options{})
			data := pattern(2<<20, 9)
			must(t, st.Put(ctx, "big.csv", data, storage.PutOptions{}))

			cuts := atomic.Int32{}
			proxy, drop := cuttingProxy(t, r.server(t), 300_000, &cuts)
			r.via(t, proxy)
			viaProxy := r.reopen(t, bucket, storage.S3Options{MaxBackoff: 10 * time.Millisecond})
			cuts.Store(3)
			rd, err := viaProxy.Reader(ctx, "big.csv", 0)
			must(t, err)
			got, err := io.ReadAll(rd)
			must(t, err)
			rd.Close()
			if !bytes.Equal(got, data) {
				t.Fatalf("resumed stream differs: %d bytes", len(got))
			}
			if cuts.Load() > 0 {
				t.Fatalf("the proxy cut no connection (%d cuts left): the test proves nothing", cuts.Load())
			}
			obj, err := viaProxy.Open(ctx, "big.csv")
			must(t, err)
			drop()
			cuts.Store(1)
			buf := make([]byte, 1<<20)
			n, err := obj.ReadAt(buf, 4096)
			if err != nil || n != len(buf) || !bytes.Equal(buf, data[4096:4096+len(buf)]) {
				t.Fatalf("resumed ReadAt: n=%d err=%v", n, err)
			}
			if cuts.Load() > 0 {
				t.Fatal("the proxy cut no ranged read")
			}
		})
	}
}

// versioned checks conditional writes and deletes (storage.Versioned), which bucket locks with leases
// stand on: create only if absent, replace and delete only the version read, and of several writers
// replacing one version at once exactly one wins.
func versioned(t *testing.T, st storage.Store) {
	ctx := context.Background()
	vs, ok := st.(storage.Versioned)
	if !ok {
		t.Fatalf("%T does not implement storage.Versioned", st)
	}
	const key = "lease/.lock"
	v1, err := vs.PutIf(ctx, key, []byte("one"), "")
	must(t, err)
	if _, err := vs.PutIf(ctx, key, []byte("two"), ""); !errors.Is(err, storage.ErrExists) {
		t.Fatalf("create of an existing key: %v", err)
	}
	if _, err := vs.PutIf(ctx, key, []byte("two"), "1"); !errors.Is(err, storage.ErrChanged) || !storage.IsKind(err, storage.KindChanged) {
		t.Fatalf("replace of another version: %v", err)
	}
	v2, err := vs.PutIf(ctx, key, []byte("two"), v1.ETag)
	must(t, err)
	if info, err := st.Stat(ctx, key); err != nil || info.ETag != v2.ETag || v2.ETag == v1.ETag || read(t, st, key) != "two" {
		t.Fatalf("after replacing %q: stat %+v (%v), PutIf said %q", v1.ETag, info, err, v2.ETag)
	}
	if _, err := vs.PutIf(ctx, key, []byte("three"), v1.ETag); !errors.Is(err, storage.ErrChanged) {
		t.Fatalf("replace of the old version: %v", err)
	}
	if err := vs.DeleteIf(ctx, key, v1.ETag); !errors.Is(err, storage.ErrChanged) {
		t.Fatalf("delete of the old version: %v", err)
	}
	if got := read(t, st, key); got != "two" {
		t.Fatalf("after refused writes: %q", got)
	}
	if _, err := vs.PutIf(ctx, "lease/absent", []byte("x"), v2.ETag); !errors.Is(err, storage.ErrChanged) {
		t.Fatalf("replace of an absent key: %v", err)
	}

	// Takers of one stale version: exactly one wins.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := vs.PutIf(ctx, key, []byte{'t', byte('0' + i)}, v2.ETag)
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, storage.ErrChanged):
				t.Errorf("taker %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d of 6 takers of one version won", wins.Load())
	}
	info, err := st.Stat(ctx, key)
	must(t, err)
	must(t, vs.DeleteIf(ctx, key, info.ETag))
	if _, err := st.Stat(ctx, key); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("after DeleteIf of its version: %v", err)
	}
	must(t, vs.DeleteIf(ctx, key, info.ETag)) // absent: not an error
}

// cuttingProxy forwards loopback TCP to target; while cuts > 0, each new connection is closed after
// limit bytes of response. drop closes the connections open now (clients keep idle ones), so that the
// next request opens a new one.
func cuttingProxy(t *testing.T, target string, limit int64, cuts *atomic.Int32) (addr string, drop func()) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	t.Cleanup(func() { l.Close() })
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open[c] = true
			mu.Unlock()
			go func() {
				defer func() {
					c.Close()
					mu.Lock()
					delete(open, c)
					mu.Unlock()
				}()
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
	return l.Addr().String(), func() {
		mu.Lock()
		defer mu.Unlock()
		for c := range open {
			c.Close()
		}
	}
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
