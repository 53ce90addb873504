package beamrun_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hfload/hfload/internal/beamrun"
	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/jobs"
)

// TestPrismS3Inputs reads the inputs from the local S3 server (a private Versity gateway) through the
// pipeline: every unit's map task reads its object from the bucket. The output is local (hfload-beam
// does not write to buckets yet) and byte-identical to `hfload run` of the same objects.
func TestPrismS3Inputs(t *testing.T) {
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
					key := c.Name + "/" + filepath.Base(p)
					b, err := os.ReadFile(p)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.MkdirAll(filepath.Join(srv.Dir, bucket, c.Name), 0o755); err != nil {
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
			beamtest.Compare(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
				return beamtask.Loader(job, beamtest.Started, beamrun.Runner("prism"), func(s *beamtask.Stats) { st = s })
			})
			if st == nil || st.InputBytes == 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}
