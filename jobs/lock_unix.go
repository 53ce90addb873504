//go:build unix

package jobs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// tryLockFile takes an exclusive flock on f without waiting; held reports that another open file
// description holds it.
func tryLockFile(f *os.File) (held bool, err error) {
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("flock: %w", err)
	}
	return false, nil
}

// releaseLockFile removes the lock file (if it is still ours) while holding the flock, then closes it,
// which drops the flock: a taker that opened the old file finds it unlinked and retries (AcquireLock).
func releaseLockFile(f *os.File, path string) error {
	var err error
	if sameFile(f, path) {
		if e := os.Remove(path); e != nil && !errors.Is(e, os.ErrNotExist) {
			err = e
		}
	}
	if e := f.Close(); e != nil && err == nil {
		err = e
	}
	return err
}

// processAlive: kill(pid, 0) succeeds or fails with EPERM for a live process
// and fails with ESRCH for a dead one.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
