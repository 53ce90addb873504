package beamtask_test

import (
	"context"
	"testing"

	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
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
