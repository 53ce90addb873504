package beamtask_test

import (
	"testing"

	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/jobs"
)

// TestRunLocalCloudBuckets: hfload-beam's tasks, run in this process, with the inputs and the output
// in Cloud Storage and in Azure Blob Storage (their emulators): each map task reads its object from
// the bucket, run files and summaries are shared under the output's work prefix, the reducers upload
// the HFiles (staged objects) and the launcher commits. The objects are those `hfload run --out
// gs://… / azblob://…` leaves, byte for byte, with nothing else left.
func TestRunLocalCloudBuckets(t *testing.T) {
	beamtest.CloudBuckets(t, &emu, func(t *testing.T, b beamtest.Bucket) {
		for _, c := range beamtest.Cases() {
			if c.Name != "csv-dups-rejects-sample" && c.Name != "parquet-row-groups" {
				continue
			}
			t.Run(c.Name, func(t *testing.T) {
				c = beamtest.InputsIn(c, b.Store, b.URL())
				var stats *beamtask.Stats
				beamtest.CompareIn(t, c, b.Loc, func(job *jobs.Job) beamtest.BucketLoad {
					return beamtask.BucketLoader(job, beamtest.Started, beamtask.RunLocal, beamtask.Options{Stats: func(s *beamtask.Stats) { stats = s }})
				})
				if stats == nil || stats.InputBytes == 0 || stats.RunRecords == 0 || stats.HFileBytes == 0 {
					t.Fatalf("stats %+v", stats)
				}
			})
		}
	})
}
