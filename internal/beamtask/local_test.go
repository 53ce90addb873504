package beamtask_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/beamtask"
	"github.com/hfload/hfload/internal/beamtask/beamtest"
	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/jobs"
)

// TestRunLocalSameBytes: the map and reduce tasks, run one after the other in this process, give the
// bytes `hfload run` gives, for every test job, with the records moved as run files or as record
// blocks grouped by (region, family) (the record shuffle, grouped in memory here).
func TestRunLocalSameBytes(t *testing.T) {
	for _, shuffle := range []string{beamtask.ShuffleFiles, beamtask.ShuffleBeam} {
		for _, c := range beamtest.Cases() {
			t.Run(shuffle+"/"+c.Name, func(t *testing.T) {
				var st *beamtask.Stats
				beamtest.Compare(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
					return beamtask.Loader(job, beamtest.Started, beamtask.RunLocal,
						beamtask.Options{Shuffle: shuffle, Stats: func(s *beamtask.Stats) { st = s }})
				})
				if st == nil || st.RunRecords == 0 || st.Targets == 0 || st.Shuffle != shuffle || (st.RunFiles == 0) != (shuffle == beamtask.ShuffleBeam) {
					t.Fatalf("stats %+v", st)
				}
				t.Logf("%+v", *st)
			})
		}
	}
}

// TestRunLocalToBucket: with the output in a bucket (the local S3 server), run files and summaries
// shared under the output's work prefix and the HFiles uploaded by the reduce tasks, the objects are
// those `hfload run --out s3://…` leaves, byte for byte, with no work file or upload left.
func TestRunLocalToBucket(t *testing.T) {
	b := beamtest.NewBucket(t, "s3", gw.Need(t))
	for _, c := range beamtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			var st *beamtask.Stats
			beamtest.CompareIn(t, c, b.Loc, func(job *jobs.Job) beamtest.BucketLoad {
				return beamtask.BucketLoader(job, beamtest.Started, beamtask.RunLocal, beamtask.Options{Stats: func(s *beamtask.Stats) { st = s }})
			})
			if st == nil || st.RunRecords == 0 || st.Targets == 0 || st.HFileBytes == 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

// TestBucketFailureLeavesNothing: a run whose pipeline fails after its reducers uploaded HFiles commits
// nothing and leaves no object and no upload under the prefix; the work files a killed run left there
// are removed by the next run.
func TestBucketFailureLeavesNothing(t *testing.T) {
	b := beamtest.NewBucket(t, "s3", gw.Need(t))
	ctx, st := context.Background(), b.Store
	const prefix = "out"
	killed := prefix + "/" + jobs.BucketWorkDir + "/20260101T000000Z-dead/runs/u000000-t000000.run"
	if err := st.Put(ctx, killed, []byte("left by a killed run"), storage.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	c := oneRegionCase()
	dir := t.TempDir()
	job := c.Job(t, c.Inputs(t, dir), b.URL()+"/"+prefix)
	job.TmpDir = t.TempDir()
	failing := func(ctx context.Context, task *beamtask.Task, spec *jobs.RunSpec) error {
		if err := beamtask.RunLocal(ctx, task, spec); err != nil {
			return err
		}
		return errors.New("worker 3 failed")
	}
	var notes []string
	_, err := jobs.Execute(ctx, job, jobs.ExecuteOptions{Now: func() time.Time { return beamtest.Started },
		Log: func(s string) { notes = append(notes, s) }, LoadBucket: beamtask.BucketLoader(job, beamtest.Started, failing, beamtask.Options{})})
	if err == nil || !strings.Contains(err.Error(), "worker 3 failed") {
		t.Fatalf("want the worker's error, got %v", err)
	}
	if objs, err := st.List(ctx, prefix+"/"); err != nil || len(objs) != 0 {
		t.Errorf("objects left under %s/: %+v %v", prefix, objs, err)
	}
	if ups, err := st.Uploads(ctx, prefix+"/"); err != nil || len(ups) != 0 {
		t.Errorf("uploads left under %s/: %+v %v", prefix, ups, err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "removed 1 work file of a killed distributed run") {
		t.Errorf("no note of the killed run's work files: %q", notes)
	}
}

// TestSubRanges: with a reduce size far below the targets' run-file bytes, every (region, family) is
// cut into sub-ranges, each merged and written by its own task into its own HFiles: the cells (in
// order), counts and rejects are those of `hfload run`, the files are cut differently (more of them)
// and none straddles its region. The plan reads only the runs' indexes, and each sub-range reads each
// run from the index entry before its first row to its last: the reducers together read the run files
// about once, not once per sub-range.
func TestSubRanges(t *testing.T) {
	for _, c := range beamtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			var st *beamtask.Stats
			want, got, _ := beamtest.Runs(t, c, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
				return beamtask.Loader(job, beamtest.Started, beamtask.RunLocal,
					beamtask.Options{ReduceSize: 2 << 10, Stats: func(s *beamtask.Stats) { st = s }})
			})
			nw, ng := beamtest.SameCells(t, want, got)
			if st == nil || st.SubRanged != st.Targets || st.ReduceTasks <= st.Targets || ng <= nw {
				t.Fatalf("no sub-ranges: %d files (hfload run %d), stats %+v", ng, nw, st)
			}
			// Every record is read at least once; a sub-range reads at most an index step (256 bytes
			// at this reduce size) and a record more of each run of its target than its own records,
			// far less than every sub-range reading every run.
			runsPerTarget := int64(st.RunFiles / st.Targets)
			extra := int64(st.ReduceTasks) * runsPerTarget * 512
			if st.ReadBytes < st.RunBytes || st.ReadBytes > st.RunBytes+extra || 2*st.ReadBytes > st.RunBytes*int64(st.ReduceTasks/st.Targets) ||
				st.PlanBytes == 0 || st.PlanBytes >= st.RunBytes {
				t.Fatalf("reducers read %d bytes of %d in run files, the plan %d of indexes: stats %+v", st.ReadBytes, st.RunBytes, st.PlanBytes, st)
			}
			t.Logf("%d files (hfload run %d), %d reduce tasks for %d targets; run files %d bytes, read %d, indexes read %d",
				ng, nw, st.ReduceTasks, st.Targets, st.RunBytes, st.ReadBytes, st.PlanBytes)
		})
	}
}

// TestTooManyFilesPerRegion: a load whose files for one region and family would exceed HBase's bulk
// load limit (32) is refused with a clear error, and nothing is committed.
func TestTooManyFilesPerRegion(t *testing.T) {
	c := oneRegionCase()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	job := c.Job(t, c.Inputs(t, filepath.Join(dir, "in")), out)
	rollEveryRow := func(ctx context.Context, task *beamtask.Task, spec *jobs.RunSpec) error {
		spec.MaxFileSize = 1 // a file per row: more than 32 for the region, in sub-ranges or not
		return beamtask.RunLocal(ctx, task, spec)
	}
	_, err := jobs.Execute(context.Background(), job, jobs.ExecuteOptions{Now: func() time.Time { return beamtest.Started },
		Load: beamtask.Loader(job, beamtest.Started, rollEveryRow, beamtask.Options{ReduceSize: -1})})
	if !errors.Is(err, jobs.ErrConfig) || !strings.Contains(err.Error(), "hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily") {
		t.Fatalf("want the 32-files error, got %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		if ents, _ := os.ReadDir(out); len(ents) > 0 {
			t.Fatalf("left in %s: %v", out, ents)
		}
	}
}

// oneRegionCase is a small CSV job (about 45 distinct rows) whose cells all fall in one region.
func oneRegionCase() beamtest.Case {
	return beamtest.Case{Name: "one-region", YAML: `
table: t
header: true
duplicates: last
mapping:
  columns:
    - {name: id}
    - {name: name, cell: "d:name"}
    - {name: n, cell: "d:n"}
    - {name: tag, cell: "d:tag"}
  rowkey: [id]
`, Inputs: beamtest.CSVInputs(1, 80, false)}
}

// TestRunLocalIncrementalChunks: incremental runs (state_dir, watermark) whose CSV inputs are cut into
// chunks commit what `hfload run` commits, run after run (each chunk filters its rows by the mark and
// reports what it kept; the launcher's plan skips loaded files), with either shuffle.
func TestRunLocalIncrementalChunks(t *testing.T) {
	for _, shuffle := range []string{beamtask.ShuffleFiles, beamtask.ShuffleBeam} {
		t.Run(shuffle, func(t *testing.T) {
			units := 0
			beamtest.CompareIncremental(t, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
				return beamtask.Loader(job, beamtest.Started, beamtask.RunLocal, beamtask.Options{CSVUnitSize: 1500, Shuffle: shuffle,
					Stats: func(s *beamtask.Stats) { units = max(units, s.Units) }})
			})
			if units < 4 { // run 2 loads b.csv (7 KB): cut into chunks of 1500 bytes
				t.Fatalf("at most %d units in a run: the inputs were not cut", units)
			}
			t.Logf("up to %d units in a run", units)
		})
	}
}

// TestRunLocalIncremental: incremental runs (state_dir, watermark) through the map and reduce tasks
// commit what `hfload run`'s commit, run after run: skipped inputs, filtered rows, counts, watermark,
// HFile names (seeded with the planned inputs and the previous mark) and bytes.
func TestRunLocalIncremental(t *testing.T) {
	beamtest.CompareIncremental(t, func(job *jobs.Job) func(context.Context, *jobs.RunSpec, string) (*jobs.LoadResult, error) {
		return beamtask.Loader(job, beamtest.Started, beamtask.RunLocal, beamtask.Options{})
	})
}

// TestRunLocalIncrementalToBucket: incremental runs into a bucket (state_dir local, out s3://) through
// the map and reduce tasks commit the objects `hfload run`'s commit, run after run, and leave no work
// file and no upload.
func TestRunLocalIncrementalToBucket(t *testing.T) {
	b := beamtest.NewBucket(t, "s3", gw.Need(t))
	beamtest.CompareIncrementalBucket(t, b.Name(), func(job *jobs.Job) beamtest.BucketLoad {
		return beamtask.BucketLoader(job, beamtest.Started, beamtask.RunLocal, beamtask.Options{})
	})
}
