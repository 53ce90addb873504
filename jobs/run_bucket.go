package jobs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hfload/hfload/internal/storage"
)

// executeToBucket is Execute for an output in a bucket (see BucketStaging): the HFiles are uploaded as
// they are written and verified as they stream (--verify stream), spills and the rejects file stay
// in local scratch (tmp_dir, else the system temp dir), and the commit completes the uploads with the
// manifest last.
func executeToBucket(ctx context.Context, job *Job, spec *RunSpec, res *ExecuteResult, runID string, started time.Time,
	now func() time.Time, logf func(string, ...any),
	loadBucket func(context.Context, *RunSpec, *BucketStaging, string) (*LoadResult, error)) (*ExecuteResult, error) {
	if spec.Verify != "" && spec.Verify != VerifyStream && spec.Verify != VerifyNone {
		return res, fmt.Errorf("%w: --verify %s re-reads every file, which a bucket cannot before the commit makes it visible; use --verify stream (the default: every byte is checked as it is uploaded)", ErrConfig, spec.Verify)
	}
	stg, err := NewBucketStaging(ctx, job.Out, runID, bucketOptions(spec))
	if err != nil {
		return res, err
	}
	for _, r := range stg.Recovered() {
		logf("note: %s: %s", stg.URL(), r)
	}
	committed := false
	defer func() {
		if !committed {
			stg.Abort()
		}
	}()
	tmp := job.TmpDir
	if tmp == "" {
		tmp = os.TempDir()
	}
	work, err := os.MkdirTemp(tmp, ".hfload-"+runID+"-")
	if err != nil {
		return res, fmt.Errorf("%w: tmp_dir: %w", ErrIO, err)
	}
	defer os.RemoveAll(work)
	var load func(context.Context, *RunSpec, string) (*LoadResult, error)
	if loadBucket != nil { // a distributed driver (ExecuteOptions.LoadBucket)
		load = func(ctx context.Context, spec *RunSpec, work string) (*LoadResult, error) {
			return loadBucket(ctx, spec, stg, work)
		}
	}
	lr, err := loadInto(ctx, job, spec, work, stg.Sink(), stg.URL(), res, load, logf)
	if err != nil {
		return res, err
	}
	m, err := res.manifestFor(job, spec, lr, runID, started, now())
	if err != nil {
		return res, err
	}
	rejects := ""
	if lr.Counts.RowsRejected > 0 && job.Rejects == "" {
		rejects = filepath.Join(work, "_rejects.jsonl")
	}
	t := time.Now()
	if err := stg.Commit(ctx, m, rejects); err != nil {
		return res, fmt.Errorf("commit %s: %w", stg.URL(), err)
	}
	committed = true
	res.CommitSeconds = time.Since(t).Seconds()
	res.Seconds += res.CommitSeconds
	res.Manifest = m
	return res, nil
}

// bucketOptions sizes the uploads: parts of 8 MiB, two in flight per file while the next fills, so a
// file being written holds 24 MiB; with less than 512 MiB of --memory, the 5 MiB minimum and one in
// flight (10 MiB a file).
func bucketOptions(spec *RunSpec) storage.S3Options {
	if spec.Memory > 0 && spec.Memory < 512<<20 {
		return storage.S3Options{PartSize: 5 << 20, PartsInFlight: 1}
	}
	return storage.S3Options{PartSize: 8 << 20, PartsInFlight: 2}
}
