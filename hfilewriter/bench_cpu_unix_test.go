//go:build unix

package hfilewriter

import (
	"syscall"
	"time"
)

// benchCPUTime is the process's user + system CPU time (0 if unavailable).
func benchCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
