package jobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// LockInfo is what a lock file says about its holder.
type LockInfo struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Started time.Time `json:"started"`
	Purpose string    `json:"purpose,omitempty"` // e.g. "run nightly", "write /data/out"
	// A bucket lock's lease (lock_bucket.go): the holder rewrites the lock every quarter of it; one
	// not rewritten for a whole lease is taken over.
	LeaseSeconds float64   `json:"lease_s,omitempty"`
	Renewed      time.Time `json:"renewed,omitempty"` // the holder's clock, for people
	Seq          int       `json:"seq,omitempty"`     // writes of this lock by its holder
}

func (i LockInfo) String() string {
	if i.PID == 0 {
		return "an unknown process (lock file empty: its holder is starting)"
	}
	s := fmt.Sprintf("pid %d on %s since %s", i.PID, i.Host, i.Started.UTC().Format(time.RFC3339))
	if i.Purpose != "" {
		s += " (" + i.Purpose + ")"
	}
	return s
}

// LockedError is returned when another process holds a lock. It matches
// errors.Is(err, ErrLocked).
type LockedError struct {
	Path   string
	Holder LockInfo
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s: held by %s", e.Path, e.Holder)
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// Lock is an exclusive lock held through flock(2) on a lock file (LockFileEx on Windows;
// lock_unix.go and lock_windows.go hold the system calls). The kernel
// drops a flock when its holder exits for any reason (including SIGKILL), so
// a crashed run never blocks the next one, and two takers of a stale lock
// cannot both win: flock decides, not the file's content. The file holds
// LockInfo (pid, host, start time) for error messages only.
//
// flock is per open file description: a second AcquireLock on the same path
// from the same process also fails with ErrLocked. On NFS, Linux emulates
// flock with POSIX byte-range locks (NFSv4 leases); keep state_dir local if
// in doubt.
type Lock struct {
	path     string
	f        *os.File
	previous *LockInfo
}

// AcquireLock takes the lock at path without waiting, creating the file (and
// its directory) when needed. If another live process holds it the error is
// a *LockedError naming the holder. If the file names a holder that no
// longer holds the flock (it crashed), the lock is taken over and Previous
// reports that holder.
func AcquireLock(path, purpose string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	for attempt := 0; attempt < 10; attempt++ {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		if held, err := tryLockFile(f); err != nil || held {
			holder := readLockInfo(f)
			f.Close()
			if held {
				return nil, &LockedError{Path: path, Holder: holder}
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// The previous holder may have unlinked the file between our open
		// and our flock (Release removes it); then we hold a lock on a
		// deleted inode and must retry on the current file.
		if !sameFile(f, path) {
			f.Close()
			continue
		}
		l := &Lock{path: path, f: f}
		if prev := readLockInfo(f); prev.PID != 0 {
			l.previous = &prev
		}
		host, _ := os.Hostname()
		info := LockInfo{PID: os.Getpid(), Host: host, Started: time.Now().UTC().Truncate(time.Millisecond), Purpose: purpose}
		b, _ := json.Marshal(info)
		if err := f.Truncate(0); err == nil {
			_, err = f.WriteAt(append(b, '\n'), 0)
			if err == nil {
				err = f.Sync()
			}
			if err != nil {
				l.Release()
				return nil, fmt.Errorf("lock %s: writing holder: %w", path, err)
			}
		} else {
			l.Release()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return l, nil
	}
	return nil, fmt.Errorf("lock %s: file keeps being replaced; giving up", path)
}

func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	if err != nil {
		return false
	}
	return os.SameFile(a, b)
}

func readLockInfo(f *os.File) LockInfo {
	var info LockInfo
	buf := make([]byte, 4096)
	n, _ := f.ReadAt(buf, 0)
	_ = json.Unmarshal(buf[:n], &info) // empty or partial: unknown holder
	return info
}

// ReadLock reports who holds the lock at path, for display (`hfload runs`):
// ok is false when there is no lock file or its holder is a process on this
// host that no longer exists. It never takes the lock itself, so it cannot
// make a concurrent AcquireLock fail; a holder on another host is reported
// as holding (its liveness cannot be checked from here).
func ReadLock(path string) (info LockInfo, ok bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return LockInfo{}, false, nil
	}
	if err != nil {
		return LockInfo{}, false, fmt.Errorf("lock: %w", err)
	}
	defer f.Close()
	info = readLockInfo(f)
	if info.PID == 0 {
		return info, true, nil // being written by a starting holder
	}
	if host, _ := os.Hostname(); info.Host != host {
		return info, true, nil
	}
	return info, processAlive(info.PID), nil
}

// Path is the lock file.
func (l *Lock) Path() string { return l.path }

// Previous is the holder named in the lock file when we took it over from a
// process that had died without releasing it (nil if the lock was free).
func (l *Lock) Previous() *LockInfo { return l.previous }

// Release removes the lock file and drops the lock. It is safe to call more
// than once.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := releaseLockFile(l.f, l.path)
	l.f = nil
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.path, err)
	}
	return nil
}
