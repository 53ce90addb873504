package beamtask_test

import (
	"context"
	"testing"

	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
)

// bucketMaker is an emulator that makes buckets.
type bucketMaker interface {
	Setenv(t interface{ Setenv(k, v string) })
	NewBucket() (string, error)
}

// TestRunLocalCloudBuckets: hfload-beam's tasks, run in this process, with the inputs and the output
// in Cloud Storage and in Azure Blob Storage (their emulators): each map task reads its object from
// the bucket, run files and summaries are shared under the output's work prefix, the reducers upload
// the HFiles (staged objects) and the launcher commits. The objects are those `hfload run --out
// gs://… / azblob://…` leaves, byte for byte, with nothing else left.
func TestRunLocalCloudBuckets(t *testing.T) {
	for _, e := range []struct {
		scheme string
		need   func(t testing.TB) bucketMaker
	}{
		{"gs", func(t testing.TB) bucketMaker { return emu.NeedGCS(t) }},
		{"azblob", func(t testing.TB) bucketMaker { return emu.NeedAzure(t) }},
	} {
		t.Run(e.scheme, func(t *testing.T) {
			srv := e.need(t)
			srv.Setenv(t)
			bucket, err := srv.NewBucket()
			if err != nil {
				t.Fatal(err)
			}
			loc := storage.Location{Scheme: e.scheme, Bucket: bucket}
			st, err := storage.OpenBucket(context.Background(), loc, storage.S3Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range beamtest.Cases() {
				if c.Name != "csv-dups-rejects-sample" && c.Name != "parquet-row-groups" {
					continue
				}
				t.Run(c.Name, func(t *testing.T) {
					c = beamtest.InputsIn(c, st, e.scheme+"://"+bucket)
					var stats *beamtask.Stats
					beamtest.CompareIn(t, c, loc, func(job *jobs.Job) beamtest.BucketLoad {
						return beamtask.BucketLoader(job, beamtest.Started, beamtask.RunLocal, beamtask.Options{Stats: func(s *beamtask.Stats) { stats = s }})
					})
					if stats == nil || stats.InputBytes == 0 || stats.RunRecords == 0 || stats.HFileBytes == 0 {
						t.Fatalf("stats %+v", stats)
					}
				})
			}
		})
	}
}
