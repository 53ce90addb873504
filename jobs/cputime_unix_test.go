//go:build unix

package jobs

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user + system) the process used so far: benchmarks compare CPU,
// not wall time, because the test machine is shared.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
