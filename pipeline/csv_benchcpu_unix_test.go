//go:build unix

package pipeline

import (
	"syscall"
	"time"
)

// csvProcessCPU returns the CPU time (user + system) used by the process so far. Benchmarks report
// bytes per CPU second as well as per wall second because the test machine is shared.
func csvProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
