package jobs

import (
	"fmt"
	"strings"
	"time"
)

// Lease lengths a job may choose for its bucket lock (job key lock_lease, flag --lock-lease).
//
// The holder rewrites the lock every quarter of its lease; another run takes the lock over once the
// server's modification time of the lock object, seen from the taker's clock, is older than the
// lease. So a live holder keeps its lock as long as (a) one of its renewals gets through within
// three quarters of the lease after the last one, and (b) no taker's clock runs ahead of the
// server's by more than three quarters of the lease. The minimum keeps (b) at 22.5 s and (a) at
// three renewals of 7.5 s each; the maximum bounds how long a lock of a holder that died on
// another host blocks the prefix (a dead holder on the taker's own host is seen at once).
const (
	MinBucketLease = 30 * time.Second
	MaxBucketLease = 24 * time.Hour
)

// ParseLockLease parses a lock_lease value: a Go duration ("90s", "5m", "1h30m") between
// MinBucketLease and MaxBucketLease; "" is the default (bucketLease, 2 minutes).
func ParseLockLease(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return bucketLease, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 90s, 5m, 1h)", s)
	}
	if d < MinBucketLease || d > MaxBucketLease {
		return 0, fmt.Errorf("%s is outside %s..%s: a lease shorter than %s lets a taker whose clock runs %s ahead of the "+
			"storage server's take over a live holder (see README: Bucket locks and leases)", d, MinBucketLease, MaxBucketLease,
			MinBucketLease, MinBucketLease*3/4)
	}
	return d, nil
}

// validateLockLease checks lock_lease (any job: it matters only for an output in a bucket).
func (j *Job) validateLockLease(p *problems) {
	if _, err := ParseLockLease(j.LockLease); err != nil {
		p.add("lock_lease: %v", err)
	}
}

// bucketLockOptions are the options of the job's bucket lock: lock_lease and break_lock.
func (j *Job) bucketLockOptions() (lockOptions, error) {
	lease, err := ParseLockLease(j.LockLease)
	if err != nil {
		return lockOptions{}, fmt.Errorf("%w: lock_lease: %w", ErrConfig, err)
	}
	return lockOptions{lease: lease, breakLock: j.BreakLock}, nil
}
