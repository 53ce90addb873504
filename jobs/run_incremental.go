package jobs

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
)

// executeIncremental is Execute for a job with a state_dir:
//
//  1. take the job's lock (ErrLocked naming the holder; a crashed holder's
//     lock is taken over) and settle what a crashed run left in the state;
//  2. plan: inputs an earlier run loaded unchanged are skipped, new ones are
//     loaded, a changed one is ErrInputChanged unless reload; nothing to load
//     is a success with NothingToDo;
//  3. load only the planned inputs, filtered by the watermark if the job has
//     one, into <out>/<job>/.hfload-staging-<run>/ (a bucket: uploads to
//     <out>/<job>/<run-id>/, under the job's lock object, see bucketJob);
//  4. write the pending record, commit to <out>/<job>/<run-id>/ with the
//     manifest last, then record the run. A run that fails before the commit
//     leaves the state as it was.
func executeIncremental(ctx context.Context, job *Job, eo ExecuteOptions, now func() time.Time, logf func(string, ...any)) (*ExecuteResult, error) {
	res := &ExecuteResult{OutDir: job.RunParent()}
	st, err := job.OpenState()
	if err != nil {
		return res, err
	}
	bj, unlock, err := lockIncremental(ctx, job, st, logf)
	if err != nil {
		return res, err
	}
	defer unlock()

	started := now()
	spec, err := job.PrepareContext(ctx, started)
	if err != nil {
		return res, err
	}
	spec.Verify = eo.Verify
	if spec.Pipeline.Workers == 0 {
		spec.Pipeline.Workers = eo.DefaultWorkers
	}
	spec.Progress = eo.Progress

	plan, err := planInputs(ctx, st, spec.Inputs, job.Reload)
	if err != nil {
		return res, err
	}
	if plan.NoOp() {
		res.NothingToDo = true
		res.Message = strings.TrimPrefix(plan.Summary(), "nothing to do: ")
		return res, nil
	}
	logf("%s", plan.Summary())
	spec.Inputs = plannedInputs(spec.Inputs, plan)
	for _, c := range plan.Changed {
		logf("warning: reloading %s (loaded by run %s, changed since): its rows are loaded again", c.Now.Path, c.LoadedBy)
	}

	wf, prevWatermark, err := applyWatermark(job, spec, plan.Watermark, logf)
	if err != nil {
		return res, err
	}
	spec.NameSeed = incrementalNameSeed(spec.SettingsSeed, plan.Load, prevWatermark)
	warnOneRegion(spec, res, logf)

	runID := NewRunID(started)
	stg, err := incrementalOutput(ctx, job, spec, bj, runID)
	if err != nil {
		return res, err
	}
	if br, ok := stg.(*bucketRun); ok {
		br.loadBucket = eo.LoadBucket
	}
	for _, r := range stg.Recovered() {
		logf("%s", r)
	}
	committed := false
	defer func() {
		if !committed {
			stg.Abort()
		}
	}()
	res.OutDir = stg.Final()
	lr, err := stg.load(ctx, job, spec, res, eo.Load, logf)
	if err != nil {
		return res, err
	}
	if spec.SplitSample > 0 {
		res.CreateCommand = partition.CreateTableCommand(tableOr(job.Table), spec.Mapping.Families(), lr.Splits)
	}

	m, err := incrementalManifest(job, spec, lr, plan, wf, runID, started, now(), logf)
	if err != nil {
		return res, err
	}
	rec := RunRecord{RunID: runID, Started: m.Started, Finished: m.Finished, Inputs: plan.Load,
		Watermark: m.Watermark, Output: stg.Final(), Counts: m.Counts}
	for _, s := range plan.Skip {
		rec.Skipped = append(rec.Skipped, s.Path)
	}
	if err := st.Begin(rec); err != nil {
		return res, err
	}
	if err := stg.commit(ctx, res, m); err != nil {
		return res, err
	}
	committed = true
	res.Manifest = m
	if err := st.Record(rec); err != nil {
		return res, fmt.Errorf("run %s committed %s but recording it failed (the next run records it): %w", runID, stg.Final(), err)
	}
	return res, nil
}

// lockIncremental takes the job's locks: the output prefix's lock object when the output is a bucket
// (bj, nil otherwise), then the state directory's lock. unlock releases both.
func lockIncremental(ctx context.Context, job *Job, st *State, logf func(string, ...any)) (bj *bucketJob, unlock func(), err error) {
	if storage.IsRemote(job.Out) {
		if bj, err = openBucketJob(ctx, job); err != nil {
			return nil, nil, err
		}
		for _, n := range bj.notes {
			logf("note: %s: %s", bj.URL(), n)
		}
	}
	releaseBucket := func() {
		if bj != nil {
			bj.release(context.WithoutCancel(ctx))
		}
	}
	lock, notes, err := st.LockContext(ctx, "run "+job.Name)
	for _, n := range notes {
		logf("%s", n)
	}
	if err != nil {
		releaseBucket()
		return nil, nil, err
	}
	return bj, func() { lock.Release(); releaseBucket() }, nil
}

// applyWatermark makes spec's inputs skip the rows at or below the previous run's watermark (prev, from
// the plan) when the job has a watermark column, and returns the filter (nil without a watermark) and
// the watermark it filters by (nil when every row is loaded: the first run, or the column or its type
// changed).
func applyWatermark(job *Job, spec *RunSpec, prev *Watermark, logf func(string, ...any)) (*watermarkFilter, *Watermark, error) {
	w := job.Incremental.Watermark
	if w == "" {
		return nil, nil, nil
	}
	if typ := orString(job.Incremental.WatermarkType); prev != nil && (prev.Column != w || orString(prev.Type) != typ) {
		logf("warning: the watermark changed from %s (%s) to %s (%s): loading every row of the new inputs", prev.Column, orString(prev.Type), w, typ)
		prev = nil
	}
	idx, err := watermarkIndex(job, w)
	if err != nil {
		return nil, nil, err
	}
	wf, err := newWatermarkFilter(w, job.Incremental.WatermarkType, idx, prev)
	if err != nil {
		return nil, nil, err
	}
	spec.Inputs = wf.wrap(spec.Inputs)
	spec.watermark = wf
	if prev != nil {
		logf("loading rows with %s > %s", w, prev.Value)
	}
	return wf, prev, nil
}

// incrementalOutput opens the run's output: uploads under the bucket job bj, or a local staging
// directory.
func incrementalOutput(ctx context.Context, job *Job, spec *RunSpec, bj *bucketJob, runID string) (runOutput, error) {
	if bj != nil {
		if err := checkBucketVerify(spec); err != nil {
			return nil, err
		}
		return bj.stage(ctx, job, runID)
	}
	local, err := job.Stage(runID)
	if err != nil {
		return nil, err
	}
	return localRun{local}, nil
}

// incrementalManifest builds the run's manifest, reconciled: its inputs are the fingerprints (with
// checksums) the plan took before reading (buildManifest would hash every input once more), and with a
// watermark its counts include the filtered rows and it records the new watermark.
func incrementalManifest(job *Job, spec *RunSpec, lr *LoadResult, plan *Plan, wf *watermarkFilter, runID string,
	started, finished time.Time, logf func(string, ...any)) (*Manifest, error) {
	spec.Inputs = nil
	m, err := buildManifest(job, spec, lr, runID, started, finished)
	if err != nil {
		return nil, err
	}
	m.Inputs = plan.Load
	if wf != nil {
		m.Counts.RowsFiltered = wf.Filtered()
		m.Counts.RowsRead += m.Counts.RowsFiltered
		m.Watermark = wf.Result()
		if m.Watermark != nil && plan.Watermark != nil {
			logf("%d rows at or below the previous watermark skipped; new watermark %s = %s", m.Counts.RowsFiltered, m.Watermark.Column, m.Watermark.Value)
		}
	}
	if err := m.Reconcile(); err != nil {
		return nil, fmt.Errorf("internal error, refusing to commit: %w", err)
	}
	return m, nil
}

func orString(typ string) string {
	if typ == "" {
		return "string"
	}
	return typ
}

// planInputs runs State.Plan over the expanded inputs' paths.
func planInputs(ctx context.Context, st *State, ins []pipeline.Input, reload bool) (*Plan, error) {
	paths := make([]string, len(ins))
	for i, in := range ins {
		paths[i] = in.Path
	}
	return st.Plan(ctx, paths, reload)
}

// plannedInputs keeps the inputs the plan loads, in their original order
// (and with their original indexes, so row ordinals stay distinct).
func plannedInputs(ins []pipeline.Input, plan *Plan) []pipeline.Input {
	load := map[string]bool{}
	for _, l := range plan.Load {
		load[l.Path] = true
	}
	var out []pipeline.Input
	for _, in := range ins {
		abs, err := absInput(in.Path)
		if err == nil && load[abs] {
			out = append(out, in)
			delete(load, abs) // a path listed twice is loaded once
		}
	}
	return out
}

// watermarkIndex is the position of the watermark column for inputs without
// a header: the index a mapping column of that name gives, or the column
// itself when it is a number; -1 when only the header can tell.
func watermarkIndex(job *Job, column string) (int, error) {
	if n, err := strconv.Atoi(column); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("%w: incremental.watermark: position %d is negative", ErrConfig, n)
		}
		return n, nil
	}
	cfg, err := job.MappingConfig()
	if err != nil {
		return 0, err
	}
	for _, c := range cfg.Columns {
		if c.Name == column && c.Index != nil {
			return *c.Index, nil
		}
	}
	return -1, nil
}
