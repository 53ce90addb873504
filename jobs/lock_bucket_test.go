package jobs

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/storage"
	"github.com/hfload/hfload/internal/storage/cloudtest"
	"github.com/hfload/hfload/internal/storage/s3test"
)

// testServer is a real store server (a private one: jobs' other tests need none).
type testServer interface {
	Setenv(t interface{ Setenv(k, v string) })
	NewBucket() (string, error)
	Stop() error
}

// lockServers start the servers of the lease tests.
var lockServers = []struct {
	scheme string
	start  func(dir string) (testServer, error)
	hint   string
}{
	{"s3", func(dir string) (testServer, error) { return s3test.Start(dir) }, s3test.InstallHint},
	{"gs", func(dir string) (testServer, error) { return cloudtest.StartGCS(dir) }, cloudtest.GCSInstallHint},
	{"azblob", func(dir string) (testServer, error) { return cloudtest.StartAzurite(dir) }, cloudtest.AzuriteInstallHint},
}

// TestBucketLockLease: on each real server, a lock with a short lease is renewed by its holder (a
// second taker is refused past the lease, --break-lock too), taken over once its holder stops
// renewing it (the old holder learns it at confirm, and its release leaves the new holder's lock),
// and of two takers of one expired lock exactly one wins.
func TestBucketLockLease(t *testing.T) {
	onLockServers(t, leaseTest)
}

// onLockServers runs test against a fresh bucket on each real server of lockServers (skipped where a
// server cannot start, failed under CI).
func onLockServers(t *testing.T, test func(*testing.T, storage.Store)) {
	for _, ls := range lockServers {
		t.Run(ls.scheme, func(t *testing.T) {
			srv, err := ls.start(t.TempDir())
			if err != nil {
				if cloudtest.CI() {
					t.Fatalf("%v (CI: it must run; .ci/run installs it)", err)
				}
				t.Skipf("%v; %s", err, ls.hint)
			}
			t.Cleanup(func() { srv.Stop() })
			srv.Setenv(t)
			bucket, err := srv.NewBucket()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			st, err := storage.OpenBucket(ctx, storage.Location{Scheme: ls.scheme, Bucket: bucket}, storage.S3Options{})
			if err != nil {
				t.Fatal(err)
			}
			test(t, st)
		})
	}
}

func leaseTest(t *testing.T, st storage.Store) {
	ctx := context.Background()
	const key = "out/.hfload.lock"
	const lease = 2 * time.Second
	short := lockOptions{lease: lease}
	a, notes, err := takeBucketLock(ctx, st, key, "run a", short)
	if err != nil || len(notes) != 0 {
		t.Fatalf("take: %v %v", notes, err)
	}
	// Judged as of the moment the take returned: under load the status read can come more than the 2 s
	// lease after the write, which would (rightly) report the lease as run out.
	took := time.Now()
	defer a.release(ctx)
	first := stat(t, st, key)
	if s, err := bucketLockStatus(ctx, st, key, took); err != nil || !s.Held || s.Holder.PID != os.Getpid() || s.Holder.Purpose != "run a" ||
		s.LeaseSeconds != lease.Seconds() || !s.Expires.Equal(s.Written.Add(lease)) || s.Expired || s.Lock != st.URL(key) {
		t.Fatalf("status of a held lock: %+v %v", s, err)
	}

	// Past a whole lease, a is renewing: b is refused, with and without --break-lock.
	time.Sleep(lease + lease/2)
	if v := stat(t, st, key); v.ETag == first.ETag {
		t.Fatalf("the lock was not renewed in %s (lease %s)", lease+lease/2, lease)
	}
	_, _, err = takeBucketLock(ctx, st, key, "run b", short)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "renewed") {
		t.Fatalf("second taker of a renewed lock: %v", err)
	}
	_, _, err = takeBucketLock(ctx, st, key, "run b", lockOptions{lease: lease, breakLock: true})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "--break-lock refused") {
		t.Fatalf("--break-lock of a fresh lock: %v", err)
	}
	if err := a.confirm(ctx); err != nil {
		t.Fatalf("confirm while holding: %v", err)
	}

	// a stops renewing (as a holder that hangs or dies on another host): after its lease, b takes over.
	a.stop()
	<-a.done
	time.Sleep(lease + 500*time.Millisecond)
	if s, err := bucketLockStatus(ctx, st, key, time.Now()); err != nil || !s.Held || !s.Expired {
		t.Fatalf("status of a lock not renewed for its lease: %+v %v", s, err)
	}
	b, notes, err := takeBucketLock(ctx, st, key, "run b", short)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "not renewed for") {
		t.Fatalf("take over an expired lease: %v %v", notes, err)
	}
	if err := a.confirm(ctx); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "taken over by another run") {
		t.Fatalf("confirm by the holder whose lock was taken over: %v", err)
	}
	a.release(ctx)
	held, err := readBucketLock(ctx, st, key)
	if err != nil || held.holder.Purpose != "run b" {
		t.Fatalf("after the old holder's release: %+v %v", held, err)
	}

	// b stops renewing; two takers of its expired lock: exactly one wins.
	b.stop()
	<-b.done
	time.Sleep(lease + 500*time.Millisecond)
	var wg sync.WaitGroup
	locks := make([]*bucketLock, 2)
	errs := make([]error, 2)
	for i := range locks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			locks[i], _, errs[i] = takeBucketLock(ctx, st, key, "run c", short)
		}()
	}
	wg.Wait()
	won := 0
	for i := range locks {
		switch {
		case errs[i] == nil:
			won++
			defer locks[i].release(ctx)
		case !errors.Is(errs[i], ErrLocked):
			t.Errorf("taker %d: %v", i, errs[i])
		}
	}
	if won != 1 {
		t.Fatalf("%d of 2 takers of one expired lock won: %v", won, errs)
	}
	b.release(ctx) // lost: leaves the winner's lock
	if _, err := st.Stat(ctx, key); err != nil {
		t.Fatalf("the winner's lock is gone: %v", err)
	}
	for _, l := range locks {
		if l != nil {
			l.release(ctx)
		}
	}
	if _, err := st.Stat(ctx, key); !errors.Is(err, storage.ErrNotExist) {
		t.Fatalf("after release: %v", err)
	}
	if s, err := bucketLockStatus(ctx, st, key, time.Now()); err != nil || s.Held || s.Holder != nil {
		t.Fatalf("status after release: %+v %v", s, err)
	}
}

func stat(t *testing.T, st storage.Store, key string) storage.Info {
	t.Helper()
	info, err := st.Stat(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestTakeOverRules: which locks another run may take over, and what it says when it may not.
func TestTakeOverRules(t *testing.T) {
	host, _ := os.Hostname()
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	other := LockInfo{PID: 42, Host: "other-host", Started: now.Add(-time.Hour), Purpose: "run x"}
	leased := other
	leased.LeaseSeconds = 120
	dead := LockInfo{PID: 1 << 30, Host: host, Started: now.Add(-time.Hour)} // no such pid
	for _, c := range []struct {
		name      string
		holder    LockInfo
		age       time.Duration
		breakLock bool
		take      string // a note to expect, or "" for a refusal
		refusal   string
	}{
		{"dead-process-here", dead, time.Second, false, "no longer running", ""},
		{"lease-expired", leased, 121 * time.Second, false, "not renewed for 2m1s, its lease is 2m0s", ""},
		{"lease-fresh", leased, 30 * time.Second, false, "", "renewed 30s ago, it is taken over if not renewed for its lease of 2m0s"},
		{"lease-fresh-break", leased, 30 * time.Second, true, "", "--break-lock refused: the lock was renewed 30s ago and its lease is 2m0s"},
		{"no-lease", other, time.Hour, false, "", "rerun with --break-lock"},
		{"no-lease-break-fresh", other, time.Minute, true, "", "--break-lock refused: the lock was written 1m0s ago; it may be broken once unchanged for 2m0s"},
		{"no-lease-break", other, 3 * time.Minute, true, "broke the lock of pid 42 on other-host", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			note, err := takeOver("s3://b/out/.hfload.lock", lockObject{holder: c.holder, mtime: now.Add(-c.age)}, c.breakLock, now)
			if c.take != "" {
				if err != nil || !strings.Contains(note, c.take) {
					t.Fatalf("want a take-over saying %q, got %q, %v", c.take, note, err)
				}
				return
			}
			if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), c.refusal) || !strings.Contains(err.Error(), "s3://b/out/.hfload.lock: held by") {
				t.Fatalf("want a refusal saying %q, got %q, %v", c.refusal, note, err)
			}
		})
	}
}

// TestBucketLockClockSkew: the clock-skew rule of lock_lease.go on each real server, with the taker's
// clock set ahead of the server's (the server is not faked: its modification times are its own). A
// holder renews every lease/4, so a taker sees the lock at most lease/4 after a renewal; a taker
// whose clock runs ahead by just under 3/4 lease then judges its age just under the lease. Judged right
// after a renewal, that is a clock lease-2s ahead: refused. A clock more than a whole lease ahead takes
// a live holder's lock over (what the minimum lease guards against), and the holder learns it at its
// next renewal, before its commit.
func TestBucketLockClockSkew(t *testing.T) {
	onLockServers(t, skewTest)
}

func skewTest(t *testing.T, st storage.Store) {
	ctx := context.Background()
	const key = "out/.hfload.lock"
	const lease = MinBucketLease
	a, _, err := takeBucketLock(ctx, st, key, "run a", lockOptions{lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	defer a.release(ctx)
	if err := a.confirm(ctx); err != nil { // a renewal now
		t.Fatal(err)
	}
	// 3/4 lease - 2 s ahead, a quarter lease after the renewal (2 s of margin for the requests).
	ahead := lease*3/4 - 2*time.Second + lease/4
	_, _, err = takeBucketLock(ctx, st, key, "run b", lockOptions{lease: lease, clockAhead: ahead})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "renewed") {
		t.Fatalf("a taker %s ahead of the server took a live holder's lock: %v", ahead, err)
	}
	if err := a.confirm(ctx); err != nil {
		t.Fatalf("the holder after a refused taker: %v", err)
	}
	// More than a whole lease ahead: the live holder's lock looks expired to this taker.
	ahead = lease + time.Second
	b, notes, err := takeBucketLock(ctx, st, key, "run b", lockOptions{lease: lease, clockAhead: ahead})
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "not renewed for") {
		t.Fatalf("a taker %s ahead of the server: %v %v", ahead, notes, err)
	}
	defer b.release(ctx)
	if err := a.confirm(ctx); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "taken over by another run") {
		t.Fatalf("the holder whose lock a skewed clock took over must learn it before its commit: %v", err)
	}
}
