package jobs

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestParseLockLease: lock_lease is a Go duration within MinBucketLease..MaxBucketLease; "" is 2m;
// a job with a lease out of range or not a duration is refused by Validate, naming the key.
func TestParseLockLease(t *testing.T) {
	for in, want := range map[string]time.Duration{"": 2 * time.Minute, "30s": 30 * time.Second, " 5m ": 5 * time.Minute, "24h": 24 * time.Hour} {
		if d, err := ParseLockLease(in); err != nil || d != want {
			t.Errorf("ParseLockLease(%q) = %s, %v; want %s", in, d, err, want)
		}
	}
	for in, want := range map[string]string{"29s": "outside 30s..24h0m0s", "25h": "outside", "-1m": "outside", "2": "not a duration", "soon": "not a duration"} {
		if _, err := ParseLockLease(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseLockLease(%q): %v; want an error saying %q", in, err, want)
		}
		j := &Job{Input: []string{"a.csv"}, Table: "t", Out: "s3://b/p", Columns: "HBASE_ROW_KEY,d:a", LockLease: in}
		if err := j.Validate(); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "lock_lease: ") {
			t.Errorf("Validate with lock_lease %q: %v", in, err)
		}
		if _, err := j.bucketLockOptions(); !errors.Is(err, ErrConfig) {
			t.Errorf("bucketLockOptions with lock_lease %q: %v", in, err)
		}
	}
	j := &Job{LockLease: "45s", BreakLock: true}
	if o, err := j.bucketLockOptions(); err != nil || o != (lockOptions{lease: 45 * time.Second, breakLock: true}) {
		t.Fatalf("bucketLockOptions: %+v %v", o, err)
	}
}

// TestWriteLocks: one line per lock, saying who holds it and, for a bucket lock, when its lease runs out.
func TestWriteLocks(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	holder := &LockInfo{PID: 42, Host: "h1", Started: now.Add(-time.Hour), Purpose: "run inc", LeaseSeconds: 120}
	old := &LockInfo{PID: 43, Host: "h2", Started: now.Add(-time.Hour)}
	locks := []LockStatus{
		{Lock: "/state/inc/lock"},
		{Lock: "/state/inc/lock", Held: true, Holder: old},
		{Lock: "s3://b/out/inc/.hfload.lock", Held: true, Holder: holder, Written: now.Add(-20 * time.Second), LeaseSeconds: 120,
			Expires: now.Add(100 * time.Second)},
		{Lock: "s3://b/out/inc/.hfload.lock", Held: true, Holder: holder, Written: now.Add(-3 * time.Minute), LeaseSeconds: 120,
			Expires: now.Add(-time.Minute), Expired: true},
		{Lock: "gs://b/out/.hfload.lock", Held: true, Holder: old, Written: now.Add(-time.Minute)},
	}
	var b bytes.Buffer
	if err := WriteLocks(&b, locks, now); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"lock /state/inc/lock: free",
		"lock /state/inc/lock: held by pid 43 on h2 since 2026-11-27T11:00:00Z",
		"lock s3://b/out/inc/.hfload.lock: held by pid 42 on h1 since 2026-11-27T11:00:00Z (run inc); lease 2m0s, renewed 20s ago: expires at 2026-11-27T12:01:40Z (in 1m40s) unless renewed",
		"lock s3://b/out/inc/.hfload.lock: held by pid 42 on h1 since 2026-11-27T11:00:00Z (run inc); lease 2m0s, renewed 3m0s ago: the lease ran out at 2026-11-27T11:59:00Z, the next run takes the lock over",
		"lock gs://b/out/.hfload.lock: held by pid 43 on h2 since 2026-11-27T11:00:00Z; no lease (an hfload before leases), written 1m0s ago: if that process is no longer running, a run with --break-lock takes it over once it is unchanged for 2m0s",
	}
	if got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
