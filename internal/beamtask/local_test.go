package beamtask_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
)

// TestRunLocalSameBytes: the map and reduce tasks, run one after the other in this process, give the
// bytes `hfload run` gives, for every test job.
func TestRunLocalSameBytes(t *testing.T) {
	for _, c := range beamtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			var st *beamtask.Stats
			beamtest.Compare(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
				return beamtask.Loader(job, beamtest.Started, beamtask.RunLocal, func(s *beamtask.Stats) { st = s })
			})
			if st == nil || st.RunRecords == 0 || st.Targets == 0 {
				t.Fatalf("stats %+v", st)
			}
			t.Logf("%+v", *st)
		})
	}
}

// TestRunLocalToBucket: with the output in a bucket (the local S3 server), run files and summaries
// shared under the output's work prefix and the HFiles uploaded by the reduce tasks, the objects are
// those `hfload run --out s3://…` leaves, byte for byte, with no work file or upload left.
func TestRunLocalToBucket(t *testing.T) {
	srv := gw.Need(t)
	srv.Setenv(t)
	bucket, err := srv.NewBucket()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range beamtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			var st *beamtask.Stats
			beamtest.CompareBucket(t, c, bucket, func(job *jobs.Job) beamtest.BucketLoad {
				return beamtask.BucketLoader(job, beamtest.Started, beamtask.RunLocal, func(s *beamtask.Stats) { st = s })
			})
			if st == nil || st.RunRecords == 0 || st.Targets == 0 || st.HFileBytes == 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestBucketFailureLeavesNothing: a run whose pipeline fails after its reducers uploaded HFiles commits
// nothing and leaves no object and no upload under the prefix; the work files a killed run left there
// are removed by the next run.
func TestBucketFailureLeavesNothing(t *testing.T) {
	srv := gw.Need(t)
	srv.Setenv(t)
	bucket, err := srv.NewBucket()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := storage.NewS3(ctx, bucket, storage.S3Options{})
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "out"
	killed := prefix + "/" + jobs.BucketWorkDir + "/20260101T000000Z-dead/runs/u000000-t000000.run"
	if err := st.Put(ctx, killed, []byte("left by a killed run"), storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	c := beamtest.Cases()[0]
	dir := t.TempDir()
	job := c.Job(t, c.Inputs(t, dir), "s3://"+bucket+"/"+prefix)
	job.TmpDir = t.TempDir()
	failing := func(ctx context.Context, task *beamtask.Task, spec *jobs.RunSpec) error {
		if err := beamtask.RunLocal(ctx, task, spec); err != nil {
			return err
		}
		return errors.New("worker 3 failed")
	}
	var notes []string
	_, err = jobs.Execute(ctx, job, jobs.ExecuteOptions{Now: func() time.Time { return beamtest.Started },
		Log: func(s string) { notes = append(notes, s) }, LoadBucket: beamtask.BucketLoader(job, beamtest.Started, failing, nil)})
	if err == nil || !strings.Contains(err.Error(), "worker 3 failed") {
		t.Fatalf("want the worker's error, got %v", err)
	}
	if objs, err := st.List(ctx, prefix+"/"); err != nil || len(objs) != 0 {
		t.Errorf("objects left under %s/: %+v %v", prefix, objs, err)
	}
	if ups, err := st.Uploads(ctx, prefix+"/"); err != nil || len(ups) != 0 {
		t.Errorf("uploads left under %s/: %+v %v", prefix, ups, err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "removed 1 work file of a killed distributed run") {
		t.Errorf("no note of the killed run's work files: %q", notes)
	}
}
