package jobs

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hfload/hfload/internal/storage"
)

// An incremental job into a bucket (out: s3://bucket/prefix, state_dir a local directory):
//
//	<prefix>/<job>/.hfload.lock                   while a run of the job writes (If-None-Match: *)
//	<prefix>/<job>/<run-id>/<family>/<hfile>      one directory per run, as on local disk
//	<prefix>/<job>/<run-id>/_manifest.json        last
//
// The state (run records, watermark) stays in state_dir, under its flock: a lock that dies with its
// holder, which no bucket has. The lock object guards the job's prefix in the bucket: while it is held
// no other run of the job writes there (from another host or another state_dir), so the recovery of
// killed runs, which rolls their commits forward and aborts every incomplete upload under the
// prefix, never touches a live run. It is taken before the state's lock and released after it.
type bucketJob struct {
	st     storage.Store
	prefix string // <prefix>/<job>, no trailing "/"
	lock   *bucketLock
	notes  []string
}

// openBucketJob takes the lock of job's prefix in the bucket and recovers what killed runs left.
func openBucketJob(ctx context.Context, job *Job) (*bucketJob, error) {
	lo, err := job.bucketLockOptions()
	if err != nil {
		return nil, err
	}
	loc, err := storage.Parse(job.Out)
	if err != nil {
		return nil, fmt.Errorf("%w: out: %w", ErrConfig, err)
	}
	st, err := storage.OpenBucket(ctx, loc, bucketOptions(int64(job.Memory)))
	if err != nil {
		return nil, err
	}
	j := &bucketJob{st: st, prefix: storage.JoinKey(loc.Key, job.Name)}
	j.lock, j.notes, err = takeBucketLock(ctx, st, j.key(bucketLockName), "run "+job.Name, lo)
	if err != nil {
		return nil, err
	}
	if err := j.recover(ctx); err != nil {
		j.release(context.WithoutCancel(ctx))
		return nil, err
	}
	return j, nil
}

func (j *bucketJob) key(name string) string { return storage.JoinKey(j.prefix, name) }

// URL is the job's prefix.
func (j *bucketJob) URL() string { return j.st.URL(j.prefix) }

// release drops the job's lock.
func (j *bucketJob) release(ctx context.Context) { j.lock.release(ctx) }

// stage prepares the output of run runID: <prefix>/<job>/<run-id>/, under the job's lock.
func (j *bucketJob) stage(ctx context.Context, job *Job, runID string) (*bucketRun, error) {
	stg, err := newBucketStaging(ctx, j.st, j.key(runID), runID, j.lock, lockOptions{})
	if err != nil {
		return nil, err
	}
	return newBucketRun(stg, job)
}

// recover rolls forward every commit a killed run left (its record names the uploads to complete),
// aborts every incomplete upload under the prefix, and deletes the rejects file a run killed before
// its commit record uploaded. Run directories with a manifest are committed loads and stay as they are.
func (j *bucketJob) recover(ctx context.Context) error {
	objs, err := j.st.List(ctx, j.prefix+"/")
	if err != nil {
		return err
	}
	runs := map[string]map[string]bool{} // run directory → the plain objects directly in it
	work := map[string]bool{}            // run directories with a distributed run's work files
	for _, o := range objs {
		run, name, ok := strings.Cut(strings.TrimPrefix(o.Key, j.prefix+"/"), "/")
		if ok && run != "" && strings.HasPrefix(name, BucketWorkDir+"/") {
			work[run] = true
		}
		if !ok || run == "" || strings.Contains(name, "/") {
			continue
		}
		if runs[run] == nil {
			runs[run] = map[string]bool{}
		}
		runs[run][name] = true
	}
	// A killed distributed run (hfload-beam) left its work files under its run directory (a directory
	// a bulk load skips, see BucketWorkDir): removed, as the non-incremental recover removes them.
	killed := make([]string, 0, len(work))
	for id := range work {
		killed = append(killed, id)
	}
	sort.Strings(killed)
	for _, id := range killed {
		b := &BucketStaging{st: j.st, prefix: j.key(id), runID: id}
		if err := b.removeKilledWork(ctx); err != nil {
			return err
		}
		for _, r := range b.recovered {
			j.notes = append(j.notes, fmt.Sprintf("run %s: %s", id, r))
		}
	}
	ids := make([]string, 0, len(runs))
	for id := range runs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		names := runs[id]
		b := &BucketStaging{st: j.st, prefix: j.key(id), runID: id}
		switch {
		case names[bucketCommitName]:
			rec, err := b.readCommit(ctx)
			if err != nil {
				return err
			}
			if err := b.finish(ctx, rec); err != nil {
				return fmt.Errorf("completing the commit of run %s: %w", rec.RunID, err)
			}
			j.notes = append(j.notes, fmt.Sprintf("completed the interrupted commit of run %s (%d files)", rec.RunID, len(rec.Uploads)))
		case names[ManifestName]:
		case names["_rejects.jsonl"]:
			if err := j.st.Delete(ctx, b.key("_rejects.jsonl")); err != nil {
				return err
			}
			j.notes = append(j.notes, fmt.Sprintf("removed the rejects file of run %s, killed before its commit", id))
		}
	}
	ups, err := j.st.Uploads(ctx, j.prefix+"/")
	if err != nil {
		return err
	}
	for _, u := range ups {
		if err := j.st.Abort(ctx, u); err != nil {
			return err
		}
	}
	if len(ups) > 0 {
		j.notes = append(j.notes, fmt.Sprintf("aborted %d incomplete uploads of killed runs", len(ups)))
	}
	return nil
}
