//go:build linux

package jobs

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// syncFS runs syncfs(2) on the file system holding f.
func syncFS(f *os.File) error {
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("syncfs %s: %w", f.Name(), err)
	}
	return nil
}

// syncfsReportsErrors: syncfs returns writeback errors from Linux 5.8 on; before, it always succeeded.
func syncfsReportsErrors() bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	return kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 8)
}

// kernelAtLeast reports whether a kernel release string ("6.1.0-13-amd64") is at least major.minor.
func kernelAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return false
	}
	maj, err := strconv.Atoi(parts[0])
	if err != nil {
		return false
	}
	end := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(parts[1])
	}
	mnr, err := strconv.Atoi(parts[1][:end])
	if err != nil {
		return false
	}
	return maj > major || maj == major && mnr >= minor
}
