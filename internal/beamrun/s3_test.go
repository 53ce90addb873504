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
			local := c.Inputs
			c.Inputs = func(t testing.TB, dir string) []string {
				// A posix-backed bucket is a directory: the objects are written straight into it.
				var urls []string
				for _, p := range local(t, dir) {
					key := "in/" + c.Name + "/" + filepath.Base(p)
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.MkdirAll(filepath.Join(srv.Dir, bucket, "in", c.Name), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(srv.Dir, bucket, key), b, 0o644); err != nil {
						t.Fatal(err)
					}
					urls = append(urls, "s3://"+bucket+"/"+key)
				}
				return urls
			}
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
