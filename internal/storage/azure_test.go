package storage_test

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/storage"
)

func TestAzureErrors(t *testing.T) {
	ctx := context.Background()
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
}
