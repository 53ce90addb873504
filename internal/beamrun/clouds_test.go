package beamrun_test

import (
	"context"
	"testing"

	"github.com/hfload/hfload/internal/beamrun"
	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
)

// TestPrismCloudBuckets runs the pipeline on Prism with its inputs and its output in Cloud Storage and
// in Azure Blob Storage (their emulators), as TestPrismS3 does on S3: the objects are those `hfload run
// --out gs://… / azblob://…` leaves, byte for byte.
func TestPrismCloudBuckets(t *testing.T) {
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
			store, err := storage.OpenBucket(context.Background(), loc, storage.S3Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := beamtest.InputsIn(beamtest.Cases()[0], store, e.scheme+"://"+bucket) // csv-dups-rejects-sample
			var st *beamtask.Stats
			beamtest.CompareIn(t, c, loc, func(job *jobs.Job) beamtest.BucketLoad {
				return beamtask.BucketLoader(job, beamtest.Started, beamrun.Runner("prism"), beamtask.Options{Stats: func(s *beamtask.Stats) { st = s }})
			})
			if st == nil || st.InputBytes == 0 || st.HFileBytes == 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// bucketMaker is an emulator that makes buckets.
type bucketMaker interface {
	Setenv(t interface{ Setenv(k, v string) })
	NewBucket() (string, error)
}
