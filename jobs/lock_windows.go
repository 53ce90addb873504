//go:build windows

package jobs

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/windows"
)

// tryLockFile takes an exclusive LockFileEx lock on f without waiting; held reports that another handle
// holds it. Windows drops the lock when its holder's handle closes, also when the process dies.
func tryLockFile(f *os.File) (held bool, err error) {
	// The locked byte lies far past the content: Windows locks are mandatory, and a lock over the
	// holder's record would stop others from reading who holds it.
	ol := windows.Overlapped{OffsetHigh: 0x7fffffff}
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY,
		0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("LockFileEx: %w", err)
	}
	return false, nil
}

// releaseLockFile closes f, which drops the lock, then removes the file: Windows cannot delete a file
// that is open. A taker that opened the file in between keeps it (the removal fails, and is ignored).
func releaseLockFile(f *os.File, path string) error {
	ours := sameFile(f, path)
	err := f.Close()
	if ours {
		_ = os.Remove(path)
	}
	return err
}

// processAlive reports whether a process with this id is running.
func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == 259 // STILL_ACTIVE
}
