package beamrun_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hfload/hfload/internal/beamrun"
	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
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
	for _, c := range beamtest.Cases() {
		if c.Name == "csv-aggregate" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			c.Inputs = inBucket(srv.Dir, bucket, c)
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

// inBucket is c's inputs written into the bucket (a posix-backed bucket is a directory under srvDir:
// the objects are written straight into it), as s3:// URLs.
func inBucket(srvDir, bucket string, c beamtest.Case) func(t testing.TB, dir string) []string {
	local := c.Inputs
	return func(t testing.TB, dir string) []string {
		var urls []string
		for _, p := range local(t, dir) {
			key := "in/" + c.Name + "/" + filepath.Base(p)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(srvDir, bucket, "in", c.Name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(srvDir, bucket, key), b, 0o644); err != nil {
				t.Fatal(err)
			}
			urls = append(urls, "s3://"+bucket+"/"+key)
		}
		return urls
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
	c := beamtest.ChunkCase()
	size := beamtest.ChunkSize(t, c.Inputs(t, t.TempDir())[0], 4000, 8000, true)
	if size == 0 {
		t.Fatal("no chunk size whose cuts all fall at record starts")
	}
	c.Inputs = inBucket(srv.Dir, bucket, c)
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
