package beamrun_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	"github.com/hfload/hfload/internal/beamrun"
	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/internal/storage/cloudtest"
	"github.com/hfload/hfload/internal/storage/s3test"
	"github.com/hfload/hfload/jobs"
)

// TestPrismInProcessSameBytes runs every test job as a Beam pipeline on Prism in this process (loopback
// worker) and compares its output with `hfload run`'s, byte for byte.
// With --shuffle beam the records themselves go through Prism's GroupByKey (blocks of framed records
// keyed by region and family) instead of run files: the same bytes.
func TestPrismInProcessSameBytes(t *testing.T) {
	for _, shuffle := range []string{beamtask.ShuffleFiles, beamtask.ShuffleBeam} {
		for _, c := range beamtest.Cases() {
			t.Run(shuffle+"/"+c.Name, func(t *testing.T) {
				var st *beamtask.Stats
				beamtest.Compare(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
					return beamtask.Loader(job, beamtest.Started, beamrun.Runner("prism"),
						beamtask.Options{Shuffle: shuffle, Stats: func(s *beamtask.Stats) { st = s }})
				})
				if st == nil || st.Targets == 0 || st.Shuffle != shuffle || (st.RunFiles == 0) != (shuffle == beamtask.ShuffleBeam) {
					t.Fatalf("stats %+v", st)
				}
				t.Logf("%+v", *st)
			})
		}
	}
}

var (
	// gw is the package's S3 server (s3test), started once for the tests that need it.
	gw s3test.Gateway
	// emu are its Cloud Storage and Azure emulators (clouds_test.go).
	emu cloudtest.Emulators
)

func TestMain(m *testing.M) {
	beam.Init()
	// The in-process pipelines' loopback placeholders (see PrivateTempDir) go with this directory.
	cleanup, err := beamrun.PrivateTempDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := cloudtest.Main(func() int { return s3test.Main(m, &gw) }, &emu)
	cleanup()
	os.Exit(code)
}

// TestPrismSubRanges: with a small reduce size the plan stage cuts every (region, family) into
// sub-ranges, each a reduce task of its own after a reshuffle: the cells, counts and rejects are
// those of `hfload run`, the files cut at the sub-ranges.
func TestPrismSubRanges(t *testing.T) {
	c := beamtest.Cases()[1] // csv-aggregate: the smallest
	var st *beamtask.Stats
	want, got, _ := beamtest.Runs(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
		return beamtask.Loader(job, beamtest.Started, beamrun.Runner("prism"),
			beamtask.Options{ReduceSize: 2 << 10, Stats: func(s *beamtask.Stats) { st = s }})
	})
	nw, ng := beamtest.SameCells(t, want, got)
	if st == nil || st.SubRanged == 0 || ng <= nw {
		t.Fatalf("no sub-ranges: %d files (hfload run %d), stats %+v", ng, nw, st)
	}
}

// TestPrismIncremental: incremental runs (state_dir, watermark, split_sample) as Beam pipelines on
// Prism commit what `hfload run`'s commit, run after run (beamtest.CompareIncremental).
func TestPrismIncremental(t *testing.T) {
	beamtest.CompareIncremental(t, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
		return beamtask.Loader(job, beamtest.Started, beamrun.Runner("prism"), beamtask.Options{})
	})
}

// TestPrismMapCombine: on Prism, an aggregating job's maps fold equal keys before the shuffle, with
// either shuffle: `hfload run`'s bytes, and fewer records shuffled than maps without their combiner
// would send (one per row and family: 12,000 here).
func TestPrismMapCombine(t *testing.T) {
	for _, shuffle := range []string{beamtask.ShuffleFiles, beamtask.ShuffleBeam} {
		t.Run(shuffle, func(t *testing.T) {
			var st *beamtask.Stats
			res := beamtest.Compare(t, beamtest.AggregateCase(false), func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
				return beamtask.Loader(job, beamtest.Started, beamrun.Runner("prism"),
					beamtask.Options{Shuffle: shuffle, Stats: func(s *beamtask.Stats) { st = s }})
			})
			if st == nil || st.MapCombined == 0 || st.MapCombined > res.Manifest.Counts.Combined || 2*st.RunRecords > res.Manifest.Counts.RowsKeyed*2 {
				t.Fatalf("stats %+v, counts %+v", st, res.Manifest.Counts)
			}
			t.Logf("%d records (%d bytes) shuffled, %d cells folded by the maps of %d combined", st.RunRecords, st.RunBytes, st.MapCombined, res.Manifest.Counts.Combined)
		})
	}
}
