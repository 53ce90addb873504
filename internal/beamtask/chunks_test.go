package beamtask_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/jobs"
)

// chunkSize is a chunk size for beamtest.ChunkCase's first input whose cuts all fall where a record
// starts (joins) or one of them inside a quoted line break (!joins).
func chunkSize(t *testing.T, joins bool) int64 {
	c := beamtest.ChunkCase()
	size := beamtest.ChunkSize(t, c.Inputs(t, t.TempDir())[0], 1500, 4000, joins)
	if size == 0 {
		t.Fatalf("no chunk size with joins=%v", joins)
	}
	return size
}

// TestRunLocalChunks: a CSV file cut into chunks, each its own map task, gives the bytes of `hfload
// run` (HFiles, rejects with their line numbers, manifest): duplicates across chunks resolve by the
// whole file's row order, split_sample samples every chunk, a gzipped input stays whole. Both ways of
// moving the records: sorted run files, and blocks through the runner's shuffle (each block names its
// unit, so the reducer numbers a chunk's rows as the whole file does).
func TestRunLocalChunks(t *testing.T) {
	c := beamtest.ChunkCase()
	size := chunkSize(t, true)
	for _, shuffle := range []string{beamtask.ShuffleFiles, beamtask.ShuffleBeam} {
		t.Run(shuffle, func(t *testing.T) {
			var st *beamtask.Stats
			res := beamtest.Compare(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
				return beamtask.Loader(job, beamtest.Started, beamtask.RunLocal,
					beamtask.Options{CSVUnitSize: size, Shuffle: shuffle, Stats: func(s *beamtask.Stats) { st = s }})
			})
			if st == nil || st.Units < 10 || st.Shuffle != shuffle {
				t.Fatalf("chunk size %d: stats %+v", size, st)
			}
			if res.Manifest.Counts.RowsRejected == 0 || res.Manifest.Counts.Duplicates == 0 {
				t.Fatalf("the case has no rejects or duplicates: %+v", res)
			}
			t.Logf("chunk size %d: %d units, %d rejects, %d duplicates", size, st.Units, res.Manifest.Counts.RowsRejected, res.Manifest.Counts.Duplicates)
		})
	}
}

// TestChunkAcrossQuotedLineBreak: when a cut falls inside a quoted field's line break, the chunk
// after it starts inside a record; the reducers refuse to run on it, and the launcher runs again
// without that cut: the bytes of `hfload run` all the same, with either shuffle.
func TestChunkAcrossQuotedLineBreak(t *testing.T) {
	c := beamtest.ChunkCase()
	size := chunkSize(t, false)
	for _, shuffle := range []string{beamtask.ShuffleFiles, beamtask.ShuffleBeam} {
		t.Run(shuffle, func(t *testing.T) {
			var st *beamtask.Stats
			beamtest.Compare(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
				return beamtask.Loader(job, beamtest.Started, beamtask.RunLocal,
					beamtask.Options{CSVUnitSize: size, Shuffle: shuffle, Stats: func(s *beamtask.Stats) { st = s }})
			})
			if st == nil || st.Recuts == 0 || st.Units < 10 {
				t.Fatalf("chunk size %d: stats %+v", size, st)
			}
			t.Logf("chunk size %d: %d units after %d recuts", size, st.Units, st.Recuts)
		})
	}
}

// TestChunksRejectLimit: over the reject limit, a run over chunks of one file fails at the same reject
// with the same message as `hfload run`, whichever chunk holds it. (A whole file's unit stops at the
// limit on its own rejects: with rejects in several files, the run may name a later one.)
func TestChunksRejectLimit(t *testing.T) {
	c := beamtest.ChunkCase()
	size := chunkSize(t, true)
	for _, max := range []string{"0", "7"} {
		c.YAML = strings.Replace(beamtest.ChunkCase().YAML, "max_rejects: -1", "max_rejects: "+max, 1)
		dir := t.TempDir()
		ins := c.Inputs(t, filepath.Join(dir, "in"))[:1]
		now := func() time.Time { return beamtest.Started }
		_, want := jobs.Execute(context.Background(), c.Job(t, ins, filepath.Join(dir, "want")), jobs.ExecuteOptions{Now: now})
		job := c.Job(t, ins, filepath.Join(dir, "got"))
		_, got := jobs.Execute(context.Background(), job, jobs.ExecuteOptions{Now: now,
			Load: beamtask.Loader(job, beamtest.Started, beamtask.RunLocal, beamtask.Options{CSVUnitSize: size})})
		if want == nil || got == nil || got.Error() != strings.Replace(want.Error(), "/want", "/got", -1) || jobs.ExitCode(got) != jobs.ExitCode(want) {
			t.Fatalf("max_rejects %s:\n got %v\nwant %v", max, got, want)
		}
		t.Logf("max_rejects %s: %v", max, got)
	}
}
