package storage_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/hfload/hfload/internal/storage"
)

// TestS3UploadFullObjectCRC: uploads are created with a full-object CRC32, the server checks what
// Complete sends (a wrong part CRC is refused and nothing becomes visible), and the completed object
// carries the CRC32 of its bytes.
func TestS3UploadFullObjectCRC(t *testing.T) {
	srv := gw.Need(t)
	ctx := context.Background()
	st, bucket := newS3(t, srv, storage.S3Options{PartSize: 5 << 20, PartsInFlight: 1})
	data := pattern(10<<20+999, 7) // parts of 5 MiB, 5 MiB, 999 bytes
	p := upload(t, st, "out/f/h", data)
	if !p.CRC32 || len(p.Parts) != 3 || p.Parts[2].Size != 999 || p.Parts[0].CRC32 == "" {
		t.Fatalf("pending upload without part CRCs: %+v", p)
	}

	bad := p
	bad.Parts = append([]storage.Part(nil), p.Parts...)
	bad.Parts[1].CRC32 = crcOf([]byte("not the part"))
	if err := st.Complete(ctx, bad); err == nil {
		t.Fatal("Complete with a wrong part CRC32 succeeded: the server does not check it")
	}
	if _, err := st.Stat(ctx, "out/f/h"); err == nil {
		t.Fatal("the object is visible after a refused Complete")
	}
	must(t, st.Complete(ctx, p))
	if got := read(t, st, "out/f/h"); got != string(data) {
		t.Fatalf("completed object differs (%d bytes)", len(got))
	}
	head := headChecksum(t, bucket, "out/f/h")
	if head.ChecksumType != types.ChecksumTypeFullObject || aws.ToString(head.ChecksumCRC32) != crcOf(data) {
		t.Fatalf("object checksum %s %q, want FULL_OBJECT %q", head.ChecksumType, aws.ToString(head.ChecksumCRC32), crcOf(data))
	}

	// Completed from the key and id alone (a killed run's commit rolled forward): the parts and their
	// CRCs are listed from the server.
	q := upload(t, st, "out/f/h2", data[:6<<20])
	must(t, st.Complete(ctx, storage.Pending{Key: q.Key, ID: q.ID}))
	if head := headChecksum(t, bucket, "out/f/h2"); aws.ToString(head.ChecksumCRC32) != crcOf(data[:6<<20]) {
		t.Fatalf("listed-parts object checksum %q", aws.ToString(head.ChecksumCRC32))
	}
	e := upload(t, st, "out/f/empty", nil) // one empty part
	must(t, st.Complete(ctx, e))
	if got := read(t, st, "out/f/empty"); got != "" {
		t.Fatalf("empty object holds %q", got)
	}
}

// TestS3UploadWithoutChecksumType: a store that refuses x-amz-checksum-type (older S3-compatible
// servers; here an HTTP proxy in front of the real gateway answers it 501) gets plain uploads, asked
// once per store, and they complete.
func TestS3UploadWithoutChecksumType(t *testing.T) {
	srv := gw.Need(t)
	ctx := context.Background()
	_, bucket := newS3(t, srv, storage.S3Options{})
	target, err := url.Parse(srv.Endpoint)
	must(t, err)
	var refused atomic.Int32
	rp := httputil.NewSingleHostReverseProxy(target)
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Checksum-Type") != "" {
			refused.Add(1)
			w.WriteHeader(http.StatusNotImplemented)
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>checksum type</Message></Error>`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	t.Setenv("AWS_ENDPOINT_URL_S3", proxy.URL)
	st, err := storage.NewS3(ctx, bucket, storage.S3Options{})
	must(t, err)
	for _, key := range []string{"out/f/a", "out/f/b"} {
		p := upload(t, st, key, pattern(6<<20, 3))
		if p.CRC32 {
			t.Fatalf("%s: a full-object CRC upload through a store that refuses it", key)
		}
		must(t, st.Complete(ctx, p))
		if got := read(t, st, key); got != string(pattern(6<<20, 3)) {
			t.Fatalf("%s differs", key)
		}
	}
	if refused.Load() != 1 {
		t.Fatalf("the store refused %d uploads with a checksum type, want 1 (asked once)", refused.Load())
	}
}

func upload(t *testing.T, st *storage.S3, key string, data []byte) storage.Pending {
	t.Helper()
	u, err := st.Create(context.Background(), key)
	must(t, err)
	_, err = u.Write(data)
	must(t, err)
	p, err := u.Finish(context.Background())
	must(t, err)
	return p
}

func crcOf(b []byte) string {
	var c [4]byte
	binary.BigEndian.PutUint32(c[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(c[:])
}

// headChecksum asks the server for the object's stored checksum (a client of its own, from the
// environment newS3 set).
func headChecksum(t *testing.T, bucket, key string) *s3.HeadObjectOutput {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background())
	must(t, err)
	c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	out, err := c.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &bucket, Key: &key, ChecksumMode: types.ChecksumModeEnabled})
	must(t, err)
	return out
}
