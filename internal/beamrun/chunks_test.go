package beamrun_test

import (
	"context"
	"testing"

	"github.com/hfload/hfload/internal/beamrun"
	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/jobs"
)

// TestPrismChunks: on Prism, a CSV file cut into chunks (each a map task; the chunks' row and line
// offsets reach the reducers as a side input) gives the bytes of `hfload run`: HFiles, rejects with
// their line numbers, manifest; duplicates, split_sample, quoted line breaks inside chunks.
func TestPrismChunks(t *testing.T) {
	c := beamtest.ChunkCase()
	size := beamtest.ChunkSize(t, c.Inputs(t, t.TempDir())[0], 4000, 8000, true)
	if size == 0 {
		t.Fatal("no chunk size whose cuts all fall at record starts")
	}
	var st *beamtask.Stats
	beamtest.Compare(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
		return beamtask.Loader(job, beamtest.Started, beamrun.Runner("prism"),
			beamtask.Options{CSVUnitSize: size, Stats: func(s *beamtask.Stats) { st = s }})
	})
	if st == nil || st.Units < 5 {
		t.Fatalf("chunk size %d: stats %+v", size, st)
	}
	t.Logf("chunk size %d: %+v", size, *st)
}

// TestPrismChunkRecut: on Prism, a cut inside a quoted line break makes the reducers fail the
// pipeline (the chunk after it started inside a record); the launcher runs it again without that cut
// and the bytes are `hfload run`'s.
func TestPrismChunkRecut(t *testing.T) {
	c := beamtest.ChunkCase()
	size := beamtest.ChunkSize(t, c.Inputs(t, t.TempDir())[0], 4000, 8000, false)
	if size == 0 {
		t.Fatal("no chunk size with a cut inside a quoted line break")
	}
	var st *beamtask.Stats
	beamtest.Compare(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
		return beamtask.Loader(job, beamtest.Started, beamrun.Runner("prism"),
			beamtask.Options{CSVUnitSize: size, Stats: func(s *beamtask.Stats) { st = s }})
	})
	if st == nil || st.Recuts == 0 {
		t.Fatalf("chunk size %d: stats %+v", size, st)
	}
	t.Logf("chunk size %d: %d units after %d recuts", size, st.Units, st.Recuts)
}
