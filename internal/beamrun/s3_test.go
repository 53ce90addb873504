package beamrun_test

import (
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
	b := beamtest.NewBucket(t, "s3", gw.Need(t))
	for _, c := range beamtest.Cases() {
		if c.Name == "csv-aggregate" {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			st := comparePrismBucket(t, b, c, beamtask.Options{})
			if st.InputBytes == 0 || st.HFileBytes == 0 {
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
	b := beamtest.NewBucket(t, "s3", gw.Need(t))
	c := beamtest.ChunkCase()
	size := beamtest.ChunkSize(t, c.Inputs(t, t.TempDir())[0], 4000, 8000, true)
	if size == 0 {
		t.Fatal("no chunk size whose cuts all fall at record starts")
	}
	st := comparePrismBucket(t, b, c, beamtask.Options{CSVUnitSize: size})
	if st.Units < 5 || st.Recuts != 0 || st.HFileBytes == 0 {
		t.Fatalf("chunk size %d: stats %+v", size, st)
	}
	t.Logf("chunk size %d: %d units, run files %d bytes, read %d", size, st.Units, st.RunBytes, st.ReadBytes)
}

// comparePrismBucket stores c's inputs in b and compares the pipeline on Prism (with opts), reading
// them and writing into b, with `hfload run --out <b>/…` (beamtest.CompareIn). It returns the
// pipeline's stats.
func comparePrismBucket(t *testing.T, b beamtest.Bucket, c beamtest.Case, opts beamtask.Options) *beamtask.Stats {
	t.Helper()
	var st *beamtask.Stats
	opts.Stats = func(s *beamtask.Stats) { st = s }
	beamtest.CompareIn(t, beamtest.InputsIn(c, b.Store, b.URL()), b.Loc, func(job *jobs.Job) beamtest.BucketLoad {
		return beamtask.BucketLoader(job, beamtest.Started, beamrun.Runner("prism"), opts)
	})
	if st == nil {
		t.Fatal("the pipeline reported no stats")
	}
	return st
}
