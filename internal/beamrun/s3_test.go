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

// TestPrismS3 runs the pipeline with its inputs and its output in the local S3 server (a private
// Versity gateway): every unit's map task reads its object from the bucket, run files and summaries
// are shared under the output's work prefix, reducers upload the HFiles and the launcher commits. The
// objects are those `hfload run --out s3://…` leaves, byte for byte.
func TestPrismS3(t *testing.T) {
	srv := gw.Need(t)
	srv.Setenv(t)
	bucket, err := srv.NewBucket()
	if err != nil {
		t.Fatal(err)
	}
	store, err := storage.NewS3(context.Background(), bucket, storage.S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range beamtest.Cases() {
		if c.Name == "csv-aggregate" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			c = beamtest.InputsIn(c, store, "s3://"+bucket)
			var st *beamtask.Stats
			beamtest.CompareBucket(t, c, bucket, func(job *jobs.Job) beamtest.BucketLoad {
				return beamtask.BucketLoader(job, beamtest.Started, beamrun.Runner("prism"), beamtask.Options{Stats: func(s *beamtask.Stats) { st = s }})
			})
			if st == nil || st.InputBytes == 0 || st.HFileBytes == 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestPrismS3Chunks: a CSV object in the local S3 server cut into chunks, each map task reading its
// byte range with a ranged GET (and past its end to finish its last record), with the output in the
// bucket too: the objects are those `hfload run --out s3://…` leaves, byte for byte (HFiles, rejects
// with their line numbers, manifest).
func TestPrismS3Chunks(t *testing.T) {
	srv := gw.Need(t)
	srv.Setenv(t)
	bucket, err := srv.NewBucket()
	if err != nil {
		t.Fatal(err)
	}
	store, err := storage.NewS3(context.Background(), bucket, storage.S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := beamtest.ChunkCase()
	size := beamtest.ChunkSize(t, c.Inputs(t, t.TempDir())[0], 4000, 8000, true)
	if size == 0 {
		t.Fatal("no chunk size whose cuts all fall at record starts")
	}
	c = beamtest.InputsIn(c, store, "s3://"+bucket)
	var st *beamtask.Stats
	beamtest.CompareBucket(t, c, bucket, func(job *jobs.Job) beamtest.BucketLoad {
		return beamtask.BucketLoader(job, beamtest.Started, beamrun.Runner("prism"),
			beamtask.Options{CSVUnitSize: size, Stats: func(s *beamtask.Stats) { st = s }})
	})
	if st == nil || st.Units < 5 || st.Recuts != 0 || st.HFileBytes == 0 {
		t.Fatalf("chunk size %d: stats %+v", size, st)
	}
	t.Logf("chunk size %d: %d units, run files %d bytes, read %d", size, st.Units, st.RunBytes, st.ReadBytes)
}
