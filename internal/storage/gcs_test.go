package storage_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/storage"
)

func TestGCSErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("missing-object", func(t *testing.T) {
		st, bucket := newGCS(t, fast)
		_, err := st.Reader(ctx, "in/nope.csv", 0)
		wantKind(t, err, storage.KindNotFound, "gs://"+bucket+"/in/nope.csv", "no such object")
	})
	// fake-gcs-server checks no credentials, so rejected ones cannot be shown on it; what hfload can
	// show is a credentials file that cannot be used, reported before any request is sent.
	t.Run("bad-credentials-file", func(t *testing.T) {
		t.Setenv("STORAGE_EMULATOR_HOST", "")
		bad := filepath.Join(t.TempDir(), "key.json")
		must(t, os.WriteFile(bad, []byte(`{"type":"service_account","private_key":"-----BEGIN SECRET-7d1f","client_email":"x@y"}`), 0o600))
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", bad)
		st, err := storage.OpenBucket(ctx, storage.Location{Scheme: "gs", Bucket: "bkt"}, fast)
		if err == nil { // the client reads the file lazily: the first request fails, before it is sent
			_, err = st.Stat(ctx, "in/a.csv")
		}
		wantKind(t, err, storage.KindCredentials, "gs://bkt", "GOOGLE_APPLICATION_CREDENTIALS")
		if strings.Contains(err.Error(), "SECRET-7d1f") {
			t.Fatalf("error shows the key: %v", err)
		}
	})
}

// stagedUploadsHidden checks what a bulk load and a listing see of an upload that is finished but
// not completed: a staged object whose name BulkLoadHFilesTool skips ("_" first), which List hides
// and Uploads returns.
func stagedUploadsHidden(t *testing.T, st storage.Store) {
	ctx := context.Background()
	u, err := st.Create(ctx, "hidden/cf/hfile1")
	must(t, err)
	_, err = u.Write(pattern(1000, 5))
	must(t, err)
	p, err := u.Finish(ctx)
	must(t, err)
	if l, _ := st.List(ctx, "hidden/"); len(l) != 0 {
		t.Fatalf("a staged upload is listed: %s", keys(l))
	}
	ups, err := st.Uploads(ctx, "hidden/")
	must(t, err)
	if len(ups) != 1 || ups[0].Key != "hidden/cf/hfile1" || ups[0].Size != 1000 {
		t.Fatalf("Uploads: %+v", ups)
	}
	if staged := storage.StagedKey(p); !strings.HasPrefix(staged, "hidden/cf/_") {
		t.Fatalf("staged object %s: its name must start with _ in the family directory", staged)
	}
	must(t, st.Abort(ctx, ups[0]))
	if ups, _ := st.Uploads(ctx, "hidden/"); len(ups) != 0 {
		t.Fatalf("Uploads after Abort: %+v", ups)
	}
}
