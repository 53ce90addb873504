package beamtask_test

import (
	"context"
	"testing"

	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/jobs"
)

// TestMapCombine: an aggregating job's maps fold the cells of equal keys of their unit before the
// shuffle (6 files, 6 map units; a job with count cells keeps its CSV files whole: the _one column
// is added by a wrapper that a byte range would not have): the output is `hfload run`'s byte for byte (HFiles,
// manifest with its combined count), with either shuffle, and the same as with the combiner off,
// while the records shuffled are several times fewer. A job with a sum of doubles is not folded at
// the maps (the rounding would depend on the units), and is still `hfload run`'s bytes.
func TestMapCombine(t *testing.T) {
	run := func(t *testing.T, c beamtest.Case, o beamtask.Options) (*beamtask.Stats, *jobs.ExecuteResult) {
		var st *beamtask.Stats
		o.Stats = func(s *beamtask.Stats) { st = s }
		res := beamtest.Compare(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
			return beamtask.Loader(job, beamtest.Started, beamtask.RunLocal, o)
		})
		if st == nil || st.Units != 6 || st.Targets != 6 {
			t.Fatalf("stats %+v: want 6 units and 6 regions·families", st)
		}
		return st, res
	}
	for _, shuffle := range []string{beamtask.ShuffleFiles, beamtask.ShuffleBeam} {
		t.Run(shuffle, func(t *testing.T) {
			c := beamtest.AggregateCase(false)
			on, res := run(t, c, beamtask.Options{Shuffle: shuffle})
			off, _ := run(t, c, beamtask.Options{Shuffle: shuffle, NoMapCombine: true})
			combined := res.Manifest.Counts.Combined
			if off.MapCombined != 0 || on.MapCombined == 0 || on.MapCombined > combined {
				t.Fatalf("maps folded %d cells (off: %d), the run %d", on.MapCombined, off.MapCombined, combined)
			}
			if off.RunRecords < res.Manifest.Counts.RowsKeyed*2 || 2*on.RunRecords > off.RunRecords || 2*on.RunBytes > off.RunBytes {
				t.Fatalf("records shuffled: %d (%d bytes) with the maps combining, %d (%d bytes) without, %d rows keyed",
					on.RunRecords, on.RunBytes, off.RunRecords, off.RunBytes, res.Manifest.Counts.RowsKeyed)
			}
			t.Logf("%d units; shuffled %d records, %d bytes with the maps combining (%d cells folded of %d combined) vs %d records, %d bytes without",
				on.Units, on.RunRecords, on.RunBytes, on.MapCombined, combined, off.RunRecords, off.RunBytes)
		})
	}
	t.Run("double-sum", func(t *testing.T) {
		st, res := run(t, beamtest.AggregateCase(true), beamtask.Options{})
		if st.MapCombined != 0 || res.Manifest.Counts.Combined == 0 || st.RunRecords < res.Manifest.Counts.RowsKeyed*2 {
			t.Fatalf("a sum of doubles was folded at the maps: stats %+v, counts %+v", st, res.Manifest.Counts)
		}
	})
}
