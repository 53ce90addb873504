package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hfload/hfload/internal/storage"
)

// bucketLock is a lock object in a bucket, held by a lease. A bucket has no flock that dies with its
// holder, so the holder proves it is alive by renewing the object:
//
//   - taking: a conditional create (If-None-Match: *; Cloud Storage ifGenerationMatch=0), which exactly
//     one of two concurrent takers wins;
//   - renewing: every quarter of the lease the holder replaces the object with a conditional write of
//     the version it wrote last (If-Match; ifGenerationMatch), so a holder whose lock was taken over
//     learns it from the refusal and stops before its commit (confirm renews once more just before);
//   - taking over: a lock whose holder was a process of this host that no longer runs, or whose lease
//     ran out (the object's server-side modification time is older than the lease the holder wrote
//     into it: not renewed for a whole lease), is replaced with a conditional write of the exact
//     stale version read, so of two takers only one wins and the other sees a fresh lock;
//   - --break-lock takes over a lock without a lease (written by hfload before leases) once it is
//     unchanged for bucketLease; it is refused while a lock is fresh;
//   - releasing: a conditional delete of the holder's own version.
//
// Clocks: expiry compares this host's clock with the server's modification time; the holder renews
// every lease/4, so a live holder's lock is taken over only if this host's clock runs ahead of the
// server's by more than 3/4 of the lease.
//
// A store that ignores conditions would let two runs both "win": after creating the lock, a second
// create and a replace of a wrong version must both be refused, else the store is refused
// (storage.KindNoConditionalWrites, exit 3).
type bucketLock struct {
	st    storage.Store
	vs    storage.Versioned
	key   string
	lease time.Duration
	info  LockInfo // what this holder writes (Renewed and Seq change with each write)

	mu      sync.Mutex // serialises writes of the object
	version string     // the version this holder wrote last
	lost    error      // set once a renewal found the lock taken over
	held    bool
	stop    context.CancelFunc
	done    chan struct{}
}

// bucketLease is how long a bucket lock stays valid without renewal.
const bucketLease = 2 * time.Minute

// lockOptions choose how a bucket lock is taken. The zero value is the default lease, no break.
type lockOptions struct {
	lease     time.Duration // 0: bucketLease
	breakLock bool          // --break-lock
	// clockAhead is added to this host's clock when judging a lock's age: how far the taker's clock
	// runs ahead of the storage server's (the clock-skew tests; 0 everywhere else).
	clockAhead time.Duration
}

// takeBucketLock creates the lock object key in st for purpose and starts renewing it. notes say what
// it took over.
func takeBucketLock(ctx context.Context, st storage.Store, key, purpose string, o lockOptions) (*bucketLock, []string, error) {
	vs, ok := st.(storage.Versioned)
	if !ok {
		return nil, nil, &storage.Error{Op: "lock", URL: st.URL(key), Kind: storage.KindNoConditionalWrites}
	}
	lease := o.lease
	if lease <= 0 {
		lease = bucketLease
	}
	host, _ := os.Hostname()
	l := &bucketLock{st: st, vs: vs, key: key, lease: lease, info: LockInfo{PID: os.Getpid(), Host: host,
		Started: time.Now().UTC().Truncate(time.Millisecond), Purpose: purpose, LeaseSeconds: lease.Seconds()}}
	var notes []string
	for attempt := 0; l.version == ""; attempt++ {
		if attempt == 5 {
			return nil, notes, fmt.Errorf("lock %s: it kept changing hands while this run tried to take it; giving up", st.URL(key))
		}
		data, err := l.next()
		if err != nil {
			return nil, notes, err
		}
		v, err := vs.PutIf(ctx, key, data, "")
		if err == nil {
			l.version = v.ETag
			break
		}
		if !errors.Is(err, storage.ErrExists) {
			return nil, notes, err
		}
		cur, err := readBucketLock(ctx, st, key)
		if errors.Is(err, storage.ErrChanged) || (errors.Is(err, storage.ErrNotExist) && !storage.IsKind(err, storage.KindNoBucket)) {
			continue // renewed or released while it was read
		}
		if err != nil {
			return nil, notes, err
		}
		note, err := takeOver(st.URL(key), cur, o.breakLock, time.Now().Add(o.clockAhead))
		if err != nil {
			return nil, notes, err
		}
		if v, err = vs.PutIf(ctx, key, data, cur.version); errors.Is(err, storage.ErrChanged) {
			continue // another taker won, or the holder renewed: look again
		} else if err != nil {
			return nil, notes, err
		}
		l.version = v.ETag
		notes = append(notes, note)
	}
	l.held = true
	if err := l.probe(ctx); err != nil {
		l.release(ctx)
		return nil, notes, err
	}
	rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stop, l.done = stop, make(chan struct{})
	go l.renewEvery(rctx)
	return l, notes, nil
}

// next is the object's content for the next write: the holder, when it renewed, and a sequence number
// (so that no two writes store the same bytes: an S3 ETag is the MD5 of them).
func (l *bucketLock) next() ([]byte, error) {
	l.info.Seq++
	l.info.Renewed = time.Now().UTC().Truncate(time.Millisecond)
	data, err := json.Marshal(l.info)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", l.st.URL(l.key), err)
	}
	return data, nil
}

// probe checks that the store honours both conditions: a second create and a replace of a version
// that is not there must be refused.
func (l *bucketLock) probe(ctx context.Context) error {
	data, err := l.next()
	if err != nil {
		return err
	}
	_, err = l.vs.PutIf(ctx, l.key, data, "")
	if errors.Is(err, storage.ErrExists) {
		_, err = l.vs.PutIf(ctx, l.key, data, "1")
		if errors.Is(err, storage.ErrChanged) {
			return nil
		}
	}
	if err == nil {
		l.version = "" // the store wrote it: release deletes it unconditionally
		return &storage.Error{Op: "lock", URL: l.st.URL(l.key), Kind: storage.KindNoConditionalWrites}
	}
	return err
}

// lockObject is a lock as read from the bucket.
type lockObject struct {
	holder  LockInfo
	version string
	mtime   time.Time // the server's
}

// readBucketLock reads key's holder and version (one version: the read is pinned to it).
func readBucketLock(ctx context.Context, st storage.Store, key string) (lockObject, error) {
	obj, err := st.Open(ctx, key)
	if err != nil {
		return lockObject{}, err
	}
	defer obj.Close()
	info := obj.Info()
	buf := make([]byte, min(info.Size, 64<<10))
	if _, err := obj.ReadAt(buf, 0); err != nil && len(buf) > 0 {
		return lockObject{}, err
	}
	var h LockInfo
	_ = json.Unmarshal(buf, &h) // an unreadable lock is held by "an unknown process"
	return lockObject{holder: h, version: info.ETag, mtime: info.ModTime}, nil
}

// takeOver says why the lock cur may be taken over at now, or why not (a *LockedError).
func takeOver(url string, cur lockObject, breakLock bool, now time.Time) (string, error) {
	h := cur.holder
	host, _ := os.Hostname()
	age := now.Sub(cur.mtime)
	lease := time.Duration(h.LeaseSeconds * float64(time.Second))
	switch {
	case h.Host == host && h.PID != 0 && !processAlive(h.PID):
		return "took over the lock of " + h.String() + ", which is no longer running", nil
	case lease > 0 && age > lease:
		return fmt.Sprintf("took over the lock of %s: not renewed for %s, its lease is %s", h, age.Round(time.Second), lease), nil
	case lease == 0 && breakLock && age > bucketLease:
		return fmt.Sprintf("broke the lock of %s (--break-lock; it has no lease and was unchanged for %s)", h, age.Round(time.Second)), nil
	}
	locked := &LockedError{Path: url, Holder: h}
	switch {
	case breakLock && lease > 0:
		return "", fmt.Errorf("%w; --break-lock refused: the lock was renewed %s ago and its lease is %s, so its holder is running "+
			"(or stopped less than a lease ago); a lock not renewed for its lease is taken over without --break-lock",
			locked, age.Round(time.Second), lease)
	case breakLock:
		return "", fmt.Errorf("%w; --break-lock refused: the lock was written %s ago; it may be broken once unchanged for %s",
			locked, age.Round(time.Second), bucketLease)
	case lease > 0:
		return "", fmt.Errorf("%w; renewed %s ago, it is taken over if not renewed for its lease of %s",
			locked, age.Round(time.Second), lease)
	}
	return "", fmt.Errorf("%w (a lock without a lease: if that process is no longer running, rerun with --break-lock)", locked)
}

// renewEvery renews the lock every quarter of its lease until ctx ends. A renewal that fails for a
// passing reason is tried again at the next tick; one refused because the lock was taken over is
// final (confirm reports it).
func (l *bucketLock) renewEvery(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.lease / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if l.renew(ctx) != nil && l.lostLock() {
				return
			}
		}
	}
}

func (l *bucketLock) lostLock() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost != nil
}

// renew replaces the lock object with a conditional write of the version this holder wrote last.
func (l *bucketLock) renew(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lost != nil {
		return l.lost
	}
	data, err := l.next()
	if err != nil {
		return err
	}
	v, err := l.vs.PutIf(ctx, l.key, data, l.version)
	switch {
	case err == nil:
		l.version = v.ETag
		return nil
	case errors.Is(err, storage.ErrChanged):
		l.lost = fmt.Errorf("%w: the lock %s was taken over by another run (this run did not renew its lease of %s in time); nothing committed",
			ErrLocked, l.st.URL(l.key), l.lease)
		return l.lost
	}
	return fmt.Errorf("renewing the lock %s: %w", l.st.URL(l.key), err)
}

// confirm renews the lock now: nil means this run holds it for a whole lease from here. A run calls
// it just before its commit. A nil lock (no bucket lock) confirms nothing.
func (l *bucketLock) confirm(ctx context.Context) error {
	if l == nil {
		return nil
	}
	return l.renew(ctx)
}

// release stops the renewals and deletes the lock object if it still holds this holder's version; it
// is safe to call more than once, and on a nil lock.
func (l *bucketLock) release(ctx context.Context) {
	if l == nil || !l.held {
		return
	}
	l.held = false
	if l.stop != nil {
		l.stop()
		<-l.done
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lost != nil:
	case l.version == "":
		l.st.Delete(ctx, l.key)
	default:
		l.vs.DeleteIf(ctx, l.key, l.version)
	}
}
