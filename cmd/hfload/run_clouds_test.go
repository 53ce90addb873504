package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/internal/storage/cloudtest"
	"github.com/hfload/hfload/internal/storage/s3test"
	"github.com/hfload/hfload/jobs"
)

// Issue 20 on S3 (the Versity gateway), Cloud Storage (gs://, on fake-gcs-server) and Azure Blob
// Storage (azblob://, on Azurite): the same guarantees, shown the same way on each.

// emulator is what these tests need of fake-gcs-server and Azurite.
type emulator interface {
	Setenv(t interface{ Setenv(k, v string) })
	NewBucket() (string, error)
	Stop() error
	Restart() error
}

type cloud struct {
	scheme string
	shared func(t *testing.T) emulator                    // the package's emulator
	start  func(dir string) (emulator, error)             // a private one, to stop mid-run
	hadoop func(e emulator, bucket, prefix string) string // what completebulkload is given
}

var clouds = []cloud{
	{
		scheme: "gs",
		shared: func(t *testing.T) emulator { return emu.NeedGCS(t) },
		start:  func(dir string) (emulator, error) { return cloudtest.StartGCS(dir) },
		hadoop: func(_ emulator, bucket, prefix string) string { return "gs://" + bucket + "/" + prefix },
	},
	{
		scheme: "azblob",
		shared: func(t *testing.T) emulator { return emu.NeedAzure(t) },
		start:  func(dir string) (emulator, error) { return cloudtest.StartAzurite(dir) },
		hadoop: func(e emulator, bucket, prefix string) string {
			return "abfss://" + bucket + "@" + e.(*cloudtest.Azurite).Account + ".dfs.core.windows.net/" + prefix
		},
	},
}

// s3Cloud is the S3 gateway as a cloud: the tests that run alike on every store range over stores.
var s3Cloud = cloud{
	scheme: "s3",
	shared: func(t *testing.T) emulator { return gw.Need(t) },
	start:  func(dir string) (emulator, error) { return s3test.Start(dir) },
	hadoop: func(_ emulator, bucket, prefix string) string { return "s3a://" + bucket + "/" + prefix },
}

// stores are S3, Cloud Storage and Azure.
var stores = append([]cloud{s3Cloud}, clouds...)

// newCloudBucket sets the emulator's environment (inherited by hfload child processes) and makes a
// bucket; it returns the bucket and its store.
func newCloudBucket(t *testing.T, c cloud, e emulator) (string, storage.Store) {
	t.Helper()
	e.Setenv(t)
	bucket, err := e.NewBucket()
	if err != nil {
		t.Fatal(err)
	}
	st, err := storage.OpenBucket(context.Background(), storage.Location{Scheme: c.scheme, Bucket: bucket}, storage.S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	return bucket, st
}

// CSV (.gz/.zst, a rejected row) and Parquet from the bucket to HFiles in the bucket: byte-identical
// to the same load on local disk, manifest and rejects there, nothing else left, the bulk-load
// command names the Hadoop URL.
func TestRunCloudMatchesLocal(t *testing.T) {
	for _, c := range stores {
		t.Run(c.scheme, func(t *testing.T) {
			e := c.shared(t)
			dir := t.TempDir()
			bucket, st := newCloudBucket(t, c, e)
			putInputs(t, st, dir)
			base := c.scheme + "://" + bucket
			for _, in := range []struct{ name, local, remote string }{
				{"csv", filepath.Join(dir, "in"), base + "/in/"},
				{"parquet", filepath.Join(dir, "pq", "orders.parquet"), base + "/pq/orders.parquet"},
			} {
				t.Run(in.name, func(t *testing.T) {
					job := filepath.Join(dir, in.name+".yaml")
					os.WriteFile(job, []byte(s3OrdersMapping), 0o644)
					outL := filepath.Join(dir, in.name+"-local")
					if code, _, stderr := hfload(t, "run", job, "--no-progress", "--input", in.local, "--out", outL); code != 0 {
						t.Fatalf("local run: exit %d: %s", code, stderr)
					}
					prefix := "out/" + in.name
					code, stdout, stderr := hfload(t, "run", job, "--no-progress", "--input", in.remote, "--out", base+"/"+prefix, "--tmp-dir", t.TempDir())
					if code != 0 {
						t.Fatalf("bucket run: exit %d: %s", code, stderr)
					}
					if want := "hbase completebulkload " + c.hadoop(e, bucket, prefix) + " orders"; !strings.Contains(strings.ReplaceAll(stdout, "'", ""), want) {
						t.Errorf("no %q in: %s", want, stdout)
					}
					l, r := hfileSums(t, outL), bucketSums(t, st, prefix)
					if len(l) == 0 || strings.Join(l, "\n") != strings.Join(r, "\n") {
						t.Fatalf("HFiles differ:\nlocal  %v\nbucket %v", l, r)
					}
					ml := readManifest(t, outL)
					mr, err := jobs.ReadManifest(strings.NewReader(readObject(t, st, prefix+"/"+jobs.ManifestName)))
					if err != nil {
						t.Fatal(err)
					}
					if ml.Counts != mr.Counts || len(ml.Files) != len(mr.Files) || len(ml.Inputs) != len(mr.Inputs) {
						t.Fatalf("manifest: local %+v, bucket %+v", ml.Counts, mr.Counts)
					}
					for i := range ml.Inputs {
						if ml.Inputs[i].Checksum != mr.Inputs[i].Checksum || ml.Inputs[i].Size != mr.Inputs[i].Size {
							t.Errorf("input %d: local %+v, bucket %+v", i, ml.Inputs[i], mr.Inputs[i])
						}
					}
					if in.name == "csv" {
						if mr.Counts.RowsRejected == 0 {
							t.Fatal("the rejected row is not counted")
						}
						rl, _ := os.ReadFile(filepath.Join(outL, "_rejects.jsonl"))
						if rr := readObject(t, st, prefix+"/_rejects.jsonl"); rr == "" || strings.Count(rr, "\n") != strings.Count(string(rl), "\n") {
							t.Fatalf("rejects: local %q, bucket %q", rl, rr)
						}
					}
					if ups, _ := st.Uploads(context.Background(), prefix+"/"); len(ups) != 0 {
						t.Errorf("staged uploads left: %+v", ups)
					}
					all, _ := st.List(context.Background(), prefix+"/")
					for _, o := range all {
						if name := strings.TrimPrefix(o.Key, prefix+"/"); strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_hfload") {
							t.Errorf("left in the bucket: %s", o.Key)
						}
					}
					// A second run into the same prefix is refused: it holds a load.
					if code, _, stderr := hfload(t, "run", job, "--no-progress", "--input", in.local, "--out", base+"/"+prefix); code != 1 || !strings.Contains(stderr, "write to an empty prefix") {
						t.Fatalf("run into a loaded prefix: exit %d: %s", code, stderr)
					}
				})
			}
		})
	}
}

// kill -9 while HFiles upload: nothing a bulk load would take, no manifest; the rerun removes what
// the killed run staged and writes the same HFiles as a local run.
func TestRunCloudKilledMidUpload(t *testing.T) {
	for _, c := range stores {
		t.Run(c.scheme, func(t *testing.T) {
			e := c.shared(t)
			dir := t.TempDir()
			job, _ := ordersJob(t, dir, 12<<20)
			bucket, st := newCloudBucket(t, c, e)
			out := c.scheme + "://" + bucket + "/orders"
			cmd, exited := startRun(t, "run", job, "--no-progress", "--out", out)
			waitUploads(t, st, "orders", exited) // a file is staged: the others are on their way
			cmd.Process.Signal(syscall.SIGKILL)
			err := <-exited
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the run was not killed (it finished first?): %v", err)
			}
			// The run is fast enough that the kill may come during the commit, after the commit record
			// (written before any upload is completed): the README's contract is then that the rerun rolls
			// the commit forward and refuses to load again into the committed prefix (the bucket must still
			// end up as the local run, below). Before the record, nothing may be visible to a bulk load.
			_, recErr := st.Stat(context.Background(), "orders/_hfload-commit.json")
			committing := recErr == nil
			if got := bulkLoadable(t, st, "orders"); len(got) != 0 && !committing {
				t.Fatalf("a bulk load would take, after the kill, with no commit record: %v (%v)", got, recErr)
			} else if committing {
				t.Logf("killed during the commit (%d files final): the rerun rolls it forward", len(got))
			}
			if _, err := st.Stat(context.Background(), "orders/"+jobs.ManifestName); !errors.Is(err, storage.ErrNotExist) && !committing {
				t.Fatalf("manifest after the kill, with no commit record: %v", err)
			}
			left, _ := st.Uploads(context.Background(), "orders/")
			if len(left) == 0 && !committing {
				t.Fatal("the killed run left no staged upload: the test proves nothing")
			}
			code, _, stderr := hfload(t, "run", job, "--no-progress", "--out", out)
			switch {
			case committing && code == 1 && strings.Contains(stderr, jobs.ManifestName) && strings.Contains(stderr, "write to an empty prefix"):
				t.Logf("rerun rolled the commit forward and refused to load again: %s", strings.TrimSpace(stderr))
			case code != 0:
				t.Fatalf("rerun: exit %d: %s", code, stderr)
			case !committing && !strings.Contains(stderr, "incomplete uploads"):
				t.Errorf("the rerun did not say it cleaned up: %s", stderr)
			}
			if _, err := st.Stat(context.Background(), "orders/"+jobs.ManifestName); err != nil {
				t.Fatalf("no manifest after the rerun: %v", err)
			}
			if ups, _ := st.Uploads(context.Background(), "orders/"); len(ups) != 0 {
				t.Errorf("staged uploads left after the rerun: %+v", ups)
			}
			local := filepath.Join(dir, "local")
			if code, _, stderr := hfload(t, "run", job, "--no-progress", "--out", local); code != 0 {
				t.Fatalf("local run: exit %d: %s", code, stderr)
			}
			if l, r := hfileSums(t, local), bucketSums(t, st, "orders"); len(l) == 0 || strings.Join(l, "\n") != strings.Join(r, "\n") {
				t.Fatalf("rerun differs from the local run:\nlocal  %v\nbucket %v", l, r)
			}
		})
	}
}

// The server stopped mid-run: exit 3 naming the object, nothing committed; back up, the next run
// cleans up and commits. Wrong credentials: exit 3, a clear message, no secret printed. Each scheme
// runs a private emulator, so stopping it disturbs no other test.
func TestRunCloudServerStoppedAndBadCredentials(t *testing.T) {
	for _, c := range stores {
		t.Run(c.scheme, func(t *testing.T) {
			c.shared(t) // skips (or fails under CI) where the emulator cannot run
			e, err := c.start(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer e.Stop()
			dir := t.TempDir()
			job, _ := ordersJob(t, dir, 12<<20)
			bucket, st := newCloudBucket(t, c, e)
			out := c.scheme + "://" + bucket + "/orders"

			t.Run("wrong-credentials", func(t *testing.T) {
				secret := "SECRET-5e2"
				switch a := e.(type) {
				case *s3test.Server:
					secret = "wrong-secret-5e2"
					t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
				case *cloudtest.Azurite:
					secret = "d3Jvbmcta2V5LTVlMi13cm9uZy1rZXk="
					t.Setenv("AZURE_STORAGE_CONNECTION_STRING", strings.Replace(a.ConnectionString(), a.Key, secret, 1))
				default: // fake-gcs-server checks no credentials: an unusable key file, found before any request
					t.Setenv("STORAGE_EMULATOR_HOST", "")
					key := filepath.Join(t.TempDir(), "key.json")
					os.WriteFile(key, []byte(`{"type":"service_account","client_email":"x@y","private_key":"-----BEGIN PRIVATE KEY-----\n`+secret+`\n-----END PRIVATE KEY-----\n"}`), 0o600)
					t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", key)
				}
				code, stdout, stderr := hfload(t, "run", job, "--no-progress", "--out", out)
				if code != 3 || !strings.Contains(stderr, out+"/") || !strings.Contains(stderr, "credentials") {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if strings.Contains(stdout+stderr, secret) {
					t.Fatal("a secret was printed")
				}
				if srv, ok := e.(*s3test.Server); ok && strings.Contains(stdout+stderr, srv.SecretKey) {
					t.Fatal("the server's secret was printed")
				}
				t.Logf("message: %s", strings.TrimSpace(stderr))
			})

			t.Run("verify-full-refused", func(t *testing.T) {
				code, _, stderr := hfload(t, "run", job, "--no-progress", "--out", out, "--verify", "full")
				if code != 1 || !strings.Contains(stderr, "--verify stream") {
					t.Fatalf("exit %d: %s", code, stderr)
				}
			})

			cmd, exited := startRun(t, "run", job, "--no-progress", "--out", out)
			_ = cmd
			waitUploads(t, st, "orders", exited)
			e.Stop()
			start := time.Now()
			err = <-exited
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 || !strings.Contains(err.Error(), out+"/") ||
				!strings.Contains(err.Error(), "cannot reach the storage endpoint") {
				t.Fatalf("want exit 3 naming the object, got %v", err)
			}
			t.Logf("failed %.1fs after the server stopped: %v", time.Since(start).Seconds(), err)
			if err := e.Restart(); err != nil {
				t.Fatal(err)
			}
			// The run is fast enough that the server may stop during the commit, after the commit record
			// (written before any upload is completed) and part of the copies: the README's contract is then
			// that the rerun rolls the commit forward (checked below: the bucket ends up as the local run).
			// Before the record, nothing may be visible to a bulk load.
			_, recErr := st.Stat(context.Background(), "orders/_hfload-commit.json")
			if got := bulkLoadable(t, st, "orders"); len(got) != 0 && recErr != nil {
				t.Fatalf("committed despite the failure, with no commit record: %v (%v)", got, recErr)
			} else if recErr == nil {
				t.Logf("the server stopped during the commit (%d files final): the rerun rolls it forward", len(got))
			}
			if _, err := st.Stat(context.Background(), "orders/"+jobs.ManifestName); !errors.Is(err, storage.ErrNotExist) {
				t.Fatalf("manifest despite the failure: %v", err)
			}
			// The server may have stopped after the commit record was stored (the run is fast): then
			// the rerun rolls that commit forward, and refuses to load again into the committed prefix.
			code, _, stderr := hfload(t, "run", job, "--no-progress", "--out", out)
			if code != 0 && !(code == 1 && strings.Contains(stderr, jobs.ManifestName) && strings.Contains(stderr, "write to an empty prefix")) {
				t.Fatalf("rerun: exit %d: %s", code, stderr)
			}
			t.Logf("rerun: exit %d", code)
			if ups, _ := st.Uploads(context.Background(), "orders/"); len(ups) != 0 {
				t.Errorf("staged uploads left after the rerun: %+v", ups)
			}
			if _, err := st.Stat(context.Background(), "orders/"+jobs.ManifestName); err != nil {
				t.Fatalf("no manifest after the rerun: %v", err)
			}
			local := filepath.Join(dir, "local")
			if code, _, stderr := hfload(t, "run", job, "--no-progress", "--out", local); code != 0 {
				t.Fatalf("local run: exit %d: %s", code, stderr)
			}
			if l, r := hfileSums(t, local), bucketSums(t, st, "orders"); len(l) == 0 || strings.Join(l, "\n") != strings.Join(r, "\n") {
				t.Fatalf("committed HFiles differ from the local run:\nlocal  %v\nbucket %v", l, r)
			}
		})
	}
}
