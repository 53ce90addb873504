package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/hfload/hfload/internal/storage"
)

// bucketLock is a lock object in a bucket: it is created with a conditional write (If-None-Match: *),
// which exactly one of two concurrent writers wins. A bucket has no flock that dies with its holder, so
// a lock left by a killed run stays: one whose holder was a process of this host that no longer runs
// is taken over; any other is reported (ErrLocked, with the object to delete if its holder is gone).
//
// A store that ignores If-None-Match would let two runs both "win"; after creating the lock, a second
// conditional write of the same object must fail, else the store is refused
// (storage.KindNoConditionalWrites, exit 3).
type bucketLock struct {
	st   storage.Store
	key  string
	held bool
}

// takeBucketLock creates the lock object key in st for purpose. notes say what it took over.
func takeBucketLock(ctx context.Context, st storage.Store, key, purpose string) (*bucketLock, []string, error) {
	host, _ := os.Hostname()
	info := LockInfo{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Millisecond), Purpose: purpose}
	data, err := json.Marshal(info)
	if err != nil {
		return nil, nil, fmt.Errorf("lock %s: %w", st.URL(key), err)
	}
	l := &bucketLock{st: st, key: key}
	var notes []string
	for attempt := 0; ; attempt++ {
		err := st.Put(ctx, key, data, storage.PutOptions{IfAbsent: true})
		if err == nil {
			break
		}
		if !errors.Is(err, storage.ErrExists) || attempt > 0 {
			return nil, notes, err
		}
		holder, rerr := l.read(ctx)
		if rerr != nil {
			return nil, notes, rerr
		}
		if holder.Host != host || holder.PID == 0 || processAlive(holder.PID) {
			return nil, notes, fmt.Errorf("%w (if that process is no longer running, delete %s)", &LockedError{Path: st.URL(key), Holder: holder}, st.URL(key))
		}
		notes = append(notes, "took over the lock of "+holder.String()+", which is no longer running")
		if err := st.Delete(ctx, key); err != nil {
			return nil, notes, err
		}
	}
	l.held = true
	// The store must refuse a second create: else it ignores If-None-Match and cannot lock.
	if err := st.Put(ctx, key, data, storage.PutOptions{IfAbsent: true}); !errors.Is(err, storage.ErrExists) {
		l.release(ctx)
		if err != nil {
			return nil, notes, err
		}
		return nil, notes, &storage.Error{Op: "lock", URL: st.URL(key), Kind: storage.KindNoConditionalWrites}
	}
	return l, notes, nil
}

func (l *bucketLock) read(ctx context.Context) (LockInfo, error) {
	r, err := l.st.Reader(ctx, l.key, 0)
	if err != nil {
		return LockInfo{}, err
	}
	defer r.Close()
	var info LockInfo
	_ = json.NewDecoder(r).Decode(&info) // an unreadable lock is held by "an unknown process"
	return info, nil
}

// release deletes the lock object; it is safe to call more than once, and on a nil lock.
func (l *bucketLock) release(ctx context.Context) {
	if l != nil && l.held {
		l.st.Delete(ctx, l.key)
		l.held = false
	}
}
