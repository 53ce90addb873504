package beamrun_test

import (
	"context"
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/hfload/hfload/internal/beamrun"
	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/internal/storage/s3test"
	"github.com/hfload/hfload/jobs"
)

// TestPrismInProcessSameBytes runs every test job as a Beam pipeline on Prism in this process (loopback
// worker) and compares its output with `hfload run`'s, byte for byte.
func TestPrismInProcessSameBytes(t *testing.T) {
	for _, c := range beamtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			var st *beamtask.Stats
			beamtest.Compare(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
				return beamtask.Loader(job, beamtest.Started, beamrun.Runner("prism"), func(s *beamtask.Stats) { st = s })
			})
			if st == nil || st.Targets == 0 {
				t.Fatalf("stats %+v", st)
			}
			t.Logf("%+v", *st)
		})
	}
}

// gw is the package's S3 server (s3test), started once for the tests that need it.
var gw s3test.Gateway

func TestMain(m *testing.M) {
	beam.Init()
	os.Exit(s3test.Main(m, &gw))
}
