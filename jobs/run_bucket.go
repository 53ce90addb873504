package jobs

import (
	"context"
	"fmt"
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
	if err := checkBucketVerify(spec); err != nil {
		return res, err
	}
	stg, err := NewBucketStaging(ctx, job, runID, bucketOptions(spec.Memory))
	if err != nil {
		return res, err
	}
	for _, r := range stg.Recovered() {
		logf("note: %s: %s", stg.URL(), r)
	}
	out, err := newBucketRun(stg, job)
	if err != nil {
		return res, err
	}
	out.loadBucket = loadBucket
	committed := false
	defer func() {
		if !committed {
			out.Abort()
		}
	}()
	lr, err := out.load(ctx, job, spec, res, nil, logf)
	if err != nil {
		return res, err
	}
	m, err := res.manifestFor(job, spec, lr, runID, started, now())
	if err != nil {
		return res, err
	}
	if err := out.commit(ctx, res, m); err != nil {
		return res, err
	}
	committed = true
	res.Manifest = m
	return res, nil
}

// checkBucketVerify refuses the verify modes that re-read files: a bucket shows nothing before the
// commit.
func checkBucketVerify(spec *RunSpec) error {
	if spec.Verify != "" && spec.Verify != VerifyStream && spec.Verify != VerifyNone {
		return fmt.Errorf("%w: --verify %s re-reads every file, which a bucket cannot before the commit makes it visible; use --verify stream (the default: every byte is checked as it is uploaded)", ErrConfig, spec.Verify)
	}
	return nil
}

// bucketOptions sizes the uploads for a --memory budget (0: the default): parts of 8 MiB, two in
// flight per file while the next fills, so a file being written holds 24 MiB; with less than 512 MiB,
// the 5 MiB minimum and one in flight (10 MiB a file).
func bucketOptions(memory int64) storage.S3Options {
	if memory > 0 && memory < 512<<20 {
		return storage.S3Options{PartSize: 5 << 20, PartsInFlight: 1}
	}
	return storage.S3Options{PartSize: 8 << 20, PartsInFlight: 2}
}
