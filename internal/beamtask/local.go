package beamtask

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/hfload/hfload/jobs"
	"github.com/hfload/hfload/partition"
)

// RunLocal runs every task of t in this process, one after the other, as the Beam pipeline runs them
// on workers: sample and merge (split_sample), map, group run files by target, name seed, plan, reduce. It is the
// reference the Beam pipeline is tested against and a driver without Beam. Collect follows.
func RunLocal(ctx context.Context, t *Task, spec *jobs.RunSpec) error {
	if t.Watermark != nil {
		// The launcher's inputs filter into the launcher's own watermark filter, which Collect fills
		// from the units' reports: the tasks prepare their RunSpec from t, as a worker does.
		var err error
		if spec, err = t.Spec(ctx); err != nil {
			return err
		}
	}
	splitsEnc := EncodeSplits(t.splits())
	if spec.SplitSample > 0 {
		var merged []byte
		for u := range t.Units {
			s, err := Sample(ctx, t, spec, u)
			if err != nil {
				return err
			}
			if merged, err = MergeSamples(merged, s); err != nil {
				return err
			}
		}
		var err error
		if splitsEnc, err = SplitsFromSample(ctx, t, spec, merged); err != nil {
			return err
		}
	}
	splits, err := DecodeSplits(splitsEnc)
	if err != nil {
		return err
	}
	if t.shuffleBeam() {
		return runLocalRecords(ctx, t, spec, splits)
	}
	byTarget := map[int][]string{}
	var sums []InputSum
	for u := range t.Units {
		refs, sum, err := Map(ctx, t, spec, u, splits)
		if err != nil {
			return err
		}
		if sum != nil {
			sums = append(sums, *sum)
		}
		for _, r := range refs {
			byTarget[r.Target] = append(byTarget[r.Target], r.Path)
		}
	}
	targets := make([]int, 0, len(byTarget))
	for k := range byTarget {
		targets = append(targets, k)
	}
	sort.Ints(targets)
	for _, target := range targets {
		tasks, err := Plan(ctx, t, spec, splits, target, byTarget[target])
		if err != nil {
			return err
		}
		for _, task := range tasks {
			if err := Reduce(ctx, t, spec, splits, task, sums); err != nil {
				return err
			}
		}
	}
	return nil
}

// runLocalRecords is RunLocal for the record shuffle (ShuffleBeam): the blocks are grouped in memory.
func runLocalRecords(ctx context.Context, t *Task, spec *jobs.RunSpec, splits partition.Splits) error {
	byTarget := map[int][][]byte{}
	var sums []InputSum
	for u := range t.Units {
		sum, err := MapRecords(ctx, t, spec, u, splits, func(target int, b []byte) { byTarget[target] = append(byTarget[target], b) })
		if err != nil {
			return err
		}
		if sum != nil {
			sums = append(sums, *sum)
		}
	}
	targets := make([]int, 0, len(byTarget))
	for k := range byTarget {
		targets = append(targets, k)
	}
	sort.Ints(targets)
	for _, target := range targets {
		blocks := byTarget[target]
		next := func(b *[]byte) bool {
			if len(blocks) == 0 {
				return false
			}
			*b, blocks = blocks[0], blocks[1:]
			return true
		}
		if err := ReduceRecords(ctx, t, spec, splits, target, next, sums); err != nil {
			return err
		}
	}
	return nil
}

// RunFunc runs every task of t (RunLocal, or a Beam pipeline).
type RunFunc func(ctx context.Context, t *Task, spec *jobs.RunSpec) error

// Options are a distributed load's settings that are not the job's. The zero value is the defaults.
type Options struct {
	// ReduceSize: see Task.ReduceSize (0: the job's max_file_size).
	ReduceSize int64
	// CSVUnitSize cuts uncompressed CSV files of more bytes into work units of this many (Task.SplitCSV);
	// 0: one unit per file.
	CSVUnitSize int64
	// Stats, if not nil, receives the run's data-movement figures.
	Stats func(*Stats)
	// Shuffle: see Task.Shuffle ("": run files).
	Shuffle string
	// NoMapCombine: see Task.NoMapCombine (false: maps fold an aggregating job's equal keys).
	NoMapCombine bool
}

// Loader returns a jobs.ExecuteOptions.Load that runs the load through run and Collect, with the shared
// files in the staging directory (removed before the commit). job and started must be
// the job and start time jobs.Execute is given (ExecuteOptions.Now).
func Loader(job *jobs.Job, started time.Time, run RunFunc, o Options) func(ctx context.Context, spec *jobs.RunSpec, dir string) (*jobs.LoadResult, error) {
	return func(ctx context.Context, spec *jobs.RunSpec, dir string) (*jobs.LoadResult, error) {
		// Inside the staging directory, which every worker shares (spec.TempDir may be local: tmp_dir).
		work := filepath.Join(dir, ".beam")
		defer os.RemoveAll(work)
		t, err := NewTask(job, started, spec, dir, work)
		if err != nil {
			return nil, err
		}
		t.ReduceSize, t.Shuffle, t.NoMapCombine = o.ReduceSize, o.Shuffle, o.NoMapCombine
		if err := t.SplitCSV(ctx, spec, o.CSVUnitSize); err != nil {
			return nil, err
		}
		c, err := runCollect(ctx, t, spec, run, o.Stats)
		return c.Load, err
	}
}

// BucketLoader is Loader for an output in a bucket (jobs.ExecuteOptions.LoadBucket): the workers share
// files under out's work prefix (removed before the commit) and upload the HFiles to their final keys;
// the uploads are adopted into out, whose commit completes them, and those of failed or repeated
// attempts are aborted.
func BucketLoader(job *jobs.Job, started time.Time, run RunFunc, o Options) func(ctx context.Context, spec *jobs.RunSpec, out *jobs.BucketStaging, work string) (*jobs.LoadResult, error) {
	return func(ctx context.Context, spec *jobs.RunSpec, out *jobs.BucketStaging, work string) (lr *jobs.LoadResult, err error) {
		t, err := NewTask(job, started, spec, "", out.WorkURL())
		if err != nil {
			return nil, err
		}
		t.Out, t.TmpDir = out.URL(), job.TmpDir
		defer func() {
			ctx := context.WithoutCancel(ctx)
			if err != nil {
				out.AbortUnadopted(ctx) // best effort: the next run aborts what is left
			}
			if rerr := out.RemoveWork(ctx); err == nil && rerr != nil {
				lr, err = nil, fmt.Errorf("%w: removing the work files: %w", jobs.ErrIO, rerr)
			}
		}()
		t.ReduceSize, t.Shuffle, t.NoMapCombine = o.ReduceSize, o.Shuffle, o.NoMapCombine
		if err := t.SplitCSV(ctx, spec, o.CSVUnitSize); err != nil {
			return nil, err
		}
		c, err := runCollect(ctx, t, spec, run, o.Stats)
		if err != nil {
			return c.Load, err
		}
		if err := out.Adopt(c.Uploads); err != nil {
			return nil, err
		}
		if err := out.AbortUnadopted(ctx); err != nil {
			return nil, err
		}
		return c.Load, nil
	}
}

func runCollect(ctx context.Context, t *Task, spec *jobs.RunSpec, run RunFunc, stats func(*Stats)) (*Collected, error) {
	start := time.Now()
	var c *Collected
	var err error
	for pass := 1; ; pass++ {
		err = run(ctx, t, spec)
		if err == nil {
			if c, err = Collect(ctx, t, spec); !errors.As(err, new(*cutError)) {
				break
			}
		}
		// A CSV chunk that started inside a record fails the reducers (they check the chunks' spans
		// first) or Collect: run again without the cuts that missed (see Task.Recut).
		again, rerr := t.Recut(ctx, spec, pass)
		if rerr != nil {
			return &Collected{}, errors.Join(err, rerr)
		}
		if !again {
			return &Collected{}, err
		}
	}
	if c.Load != nil {
		c.Load.Elapsed = time.Since(start)
		c.Load.ReadTime = c.Load.Elapsed
	}
	if c.Stats != nil {
		c.Stats.Recuts = t.Recuts
	}
	if stats != nil && c.Stats != nil {
		stats(c.Stats)
	}
	return c, err
}
