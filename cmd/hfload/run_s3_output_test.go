package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/storage"
)

// bucketSums lists "<family>/<file> <sha256>" of the HFiles under prefix/ in the bucket, sorted.
func bucketSums(t *testing.T, st storage.Store, prefix string) []string {
	t.Helper()
	ctx := context.Background()
	objs, err := st.List(ctx, prefix+"/")
	if err != nil {
		t.Fatal(err)
	}
	var sums []string
	for _, o := range objs {
		rel := strings.TrimPrefix(o.Key, prefix+"/")
		if !strings.Contains(rel, "/") || strings.HasPrefix(rel, ".") {
			continue
		}
		r, err := st.Reader(ctx, o.Key, 0)
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		if _, err := io.Copy(h, r); err != nil {
			t.Fatal(err)
		}
		r.Close()
		sums = append(sums, rel+" "+hex.EncodeToString(h.Sum(nil)))
	}
	sort.Strings(sums)
	return sums
}

// bulkLoadable lists what HBase's bulk load would take under prefix/ (BulkLoadHFilesTool.visitBulkHFiles:
// a directory with a legal family name, in it files not starting with "_").
func bulkLoadable(t *testing.T, st storage.Store, prefix string) []string {
	t.Helper()
	objs, err := st.List(context.Background(), prefix+"/")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range objs {
		fam, file, ok := strings.Cut(strings.TrimPrefix(o.Key, prefix+"/"), "/")
		if ok && fam != "" && !strings.HasPrefix(fam, ".") && fam != "recovered.edits" && !strings.HasPrefix(file, "_") {
			out = append(out, o.Key)
		}
	}
	return out
}

func bucketStore(t *testing.T, bucket string) storage.Store {
	t.Helper()
	st, err := storage.NewS3(context.Background(), bucket, storage.S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func readObject(t *testing.T, st storage.Store, key string) string {
	t.Helper()
	r, err := st.Reader(context.Background(), key, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ordersJob writes a ~size CSV export and a job over it into dir.
func ordersJob(t *testing.T, dir string, size int64) (job string, rows int64) {
	t.Helper()
	in := filepath.Join(dir, "orders.csv")
	rows = writeOrdersTo(t, in, size, 7)
	job = filepath.Join(dir, "orders.yaml")
	os.WriteFile(job, []byte("input: ["+in+"]\n"+s3OrdersMapping+"memory: 256MiB\n"), 0o644)
	return job, rows
}

// startRun starts hfload in the background and returns a channel that yields its exit error.
func startRun(t *testing.T, args ...string) (*exec.Cmd, chan error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		if err != nil {
			err = errors.Join(err, errors.New(stderr.String()))
		}
		exited <- err
	}()
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, exited
}

// waitUploads waits until a multipart upload is in progress under prefix/.
func waitUploads(t *testing.T, st storage.Store, prefix string, exited chan error) {
	t.Helper()
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			t.Fatalf("the run ended before any upload started: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
		if ups, err := st.Uploads(context.Background(), prefix+"/"); err == nil && len(ups) > 0 {
			return
		}
	}
	t.Fatal("no upload started within 120 s")
}
