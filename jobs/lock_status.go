package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/hfload/hfload/internal/storage"
)

// LockStatus is one of a job's locks as `hfload status` and `hfload runs` show it: who holds it and,
// for a lock object in a bucket, its lease and when that runs out.
type LockStatus struct {
	Lock   string    `json:"lock"` // the lock file or object
	Held   bool      `json:"held"`
	Holder *LockInfo `json:"holder,omitempty"`
	// A bucket lock only: when the server last stored it (the holder's last renewal), the holder's
	// lease, and when that runs out (Written + lease): from then on the next run takes the lock over.
	Written      time.Time `json:"written,omitzero"`
	LeaseSeconds float64   `json:"lease_s,omitempty"`
	Expires      time.Time `json:"expires,omitzero"`
	Expired      bool      `json:"expired,omitempty"`
}

// Locks reads the job's locks without taking them: the state's flock (state_dir) and the lock object
// of a bucket output's prefix (<out>/<job>/.hfload.lock for an incremental job, <out>/.hfload.lock
// otherwise). now is this host's clock, against which a lease's end is judged, as a run taking the
// lock over judges it.
func (j *Job) Locks(ctx context.Context, now time.Time) ([]LockStatus, error) {
	var out []LockStatus
	if j.StateDir != "" {
		if err := ValidJobName(j.Name); err != nil {
			return nil, classify(ErrConfig, fmt.Errorf("job name: %w", err))
		}
		path := filepath.Join(j.StateDir, j.Name, "lock")
		info, held, err := ReadLock(path)
		if err != nil {
			return nil, classify(ErrIO, err)
		}
		s := LockStatus{Lock: path, Held: held}
		if held {
			s.Holder = &info
		}
		out = append(out, s)
	}
	if storage.IsRemote(j.Out) {
		loc, err := storage.Parse(j.Out)
		if err != nil {
			return nil, fmt.Errorf("%w: out: %w", ErrConfig, err)
		}
		st, err := storage.OpenBucket(ctx, loc, storage.S3Options{})
		if err != nil {
			return nil, err
		}
		key := storage.JoinKey(loc.Key, bucketLockName)
		if j.StateDir != "" {
			key = storage.JoinKey(loc.Key, j.Name, bucketLockName)
		}
		s, err := bucketLockStatus(ctx, st, key, now)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// bucketLockStatus reads the lock object key of st.
func bucketLockStatus(ctx context.Context, st storage.Store, key string, now time.Time) (LockStatus, error) {
	s := LockStatus{Lock: st.URL(key)}
	for attempt := 0; ; attempt++ {
		cur, err := readBucketLock(ctx, st, key)
		switch {
		case errors.Is(err, storage.ErrChanged) && attempt < 3:
			continue // renewed while it was read
		case errors.Is(err, storage.ErrNotExist) && !storage.IsKind(err, storage.KindNoBucket):
			return s, nil
		case err != nil:
			return s, err
		}
		s.Held, s.Holder, s.Written = true, &cur.holder, cur.mtime.UTC()
		if lease := time.Duration(cur.holder.LeaseSeconds * float64(time.Second)); lease > 0 {
			s.LeaseSeconds = lease.Seconds()
			s.Expires = s.Written.Add(lease)
			s.Expired = now.After(s.Expires)
		}
		return s, nil
	}
}

// WriteLocks prints locks one line each, as `hfload status` and `hfload runs` show them.
func WriteLocks(w io.Writer, locks []LockStatus, now time.Time) error {
	for _, l := range locks {
		if _, err := fmt.Fprintf(w, "lock %s: %s\n", l.Lock, l.describe(now)); err != nil {
			return fmt.Errorf("write locks: %w", err)
		}
	}
	return nil
}

// describe says who holds l and, for a bucket lock, until when.
func (l LockStatus) describe(now time.Time) string {
	if !l.Held {
		return "free"
	}
	s := "held by " + l.Holder.String()
	if l.Written.IsZero() {
		return s // a flock: held while its holder runs
	}
	age := max(now.Sub(l.Written), 0).Round(time.Second) // a server clock ahead of this host's: "0s ago"
	lease := time.Duration(l.LeaseSeconds * float64(time.Second))
	switch {
	case lease == 0:
		return fmt.Sprintf("%s; no lease (an hfload before leases), written %s ago: if that process is no longer running, "+
			"a run with --break-lock takes it over once it is unchanged for %s", s, age, bucketLease)
	case l.Expired:
		return fmt.Sprintf("%s; lease %s, renewed %s ago: the lease ran out at %s, the next run takes the lock over",
			s, lease, age, l.Expires.Format(time.RFC3339))
	}
	return fmt.Sprintf("%s; lease %s, renewed %s ago: expires at %s (in %s) unless renewed",
		s, lease, age, l.Expires.Format(time.RFC3339), l.Expires.Sub(now).Round(time.Second))
}
