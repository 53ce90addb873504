package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hfload/hfload/internal/storage"
)

// runOutput is where a run writes its HFiles and commits them: a local staging directory (Staging) or
// uploads into a bucket prefix (BucketStaging). Abort is safe to defer: it does nothing after a
// successful commit.
type runOutput interface {
	// Final is where the output is once committed: a directory or an s3:// URL.
	Final() string
	// Recovered says what the preparation found of a killed run and did about it.
	Recovered() []string
	// load runs the load into the output; load, when not nil, replaces the engine (ExecuteOptions.Load).
	load(ctx context.Context, job *Job, spec *RunSpec, res *ExecuteResult,
		load func(context.Context, *RunSpec, string) (*LoadResult, error), logf func(string, ...any)) (*LoadResult, error)
	// commit makes the loaded output visible with m written last, and accounts the time it took.
	commit(ctx context.Context, res *ExecuteResult, m *Manifest) error
	Abort() error
}

// localRun is a run into a local directory: staged next to its final place, committed by rename.
type localRun struct{ *Staging }

func (l localRun) load(ctx context.Context, job *Job, spec *RunSpec, res *ExecuteResult,
	load func(context.Context, *RunSpec, string) (*LoadResult, error), logf func(string, ...any)) (*LoadResult, error) {
	return loadStaged(ctx, job, spec, l.Staging, l.Final(), res, load, logf)
}

func (l localRun) commit(_ context.Context, res *ExecuteResult, m *Manifest) error {
	m.SetCommands(l.Final())
	return res.commit(l.Staging, m)
}

// bucketRun is a run into a bucket prefix: HFiles uploaded as they are written, spills and the rejects
// file in a local scratch directory (tmp_dir, else the system temp dir) until the commit.
type bucketRun struct {
	*BucketStaging
	work       string
	ownRejects bool // the job's rejects key names a local file: no _rejects.jsonl in the bucket
	// loadBucket, when not nil, replaces the engine (ExecuteOptions.LoadBucket: a distributed driver).
	loadBucket func(context.Context, *RunSpec, *BucketStaging, string) (*LoadResult, error)
}

func newBucketRun(stg *BucketStaging, job *Job) (*bucketRun, error) {
	tmp := job.TmpDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	work, err := os.MkdirTemp(tmp, ".hfload-"+stg.runID+"-")
	if err != nil {
		stg.Abort()
		return nil, fmt.Errorf("%w: tmp_dir: %w", ErrIO, err)
	}
	return &bucketRun{BucketStaging: stg, work: work, ownRejects: job.Rejects != ""}, nil
}

func (b *bucketRun) Final() string { return b.URL() }

func (b *bucketRun) load(ctx context.Context, job *Job, spec *RunSpec, res *ExecuteResult,
	load func(context.Context, *RunSpec, string) (*LoadResult, error), logf func(string, ...any)) (*LoadResult, error) {
	if b.loadBucket != nil {
		load = func(ctx context.Context, spec *RunSpec, work string) (*LoadResult, error) {
			return b.loadBucket(ctx, spec, b.BucketStaging, work)
		}
		return loadInto(ctx, job, spec, b.work, b.Sink(), b.URL(), res, load, logf, nil)
	}
	if load != nil {
		return nil, fmt.Errorf("%w: this driver cannot write into a bucket (%s) yet: write to a local directory", ErrConfig, b.URL())
	}
	return loadInto(ctx, job, spec, b.work, b.Sink(), b.URL(), res, nil, logf, nil)
}

func (b *bucketRun) commit(ctx context.Context, res *ExecuteResult, m *Manifest) error {
	rejects := filepath.Join(b.work, "_rejects.jsonl")
	if m.Counts.RowsRejected == 0 || b.ownRejects {
		rejects = "" // none, or written where the job's rejects key says
	}
	t := time.Now()
	if err := b.Commit(ctx, m, rejects); err != nil {
		return fmt.Errorf("commit %s: %w", b.URL(), err)
	}
	res.CommitSeconds = time.Since(t).Seconds()
	res.Seconds += res.CommitSeconds
	os.RemoveAll(b.work)
	return nil
}

func (b *bucketRun) Abort() error {
	err := b.BucketStaging.Abort()
	os.RemoveAll(b.work)
	return err
}

// joinOut joins name to an output directory or URL.
func joinOut(out, name string) string {
	if storage.IsRemote(out) {
		return strings.TrimSuffix(out, "/") + "/" + name
	}
	return filepath.Join(out, name)
}
