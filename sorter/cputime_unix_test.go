//go:build unix

package sorter

import "syscall"

// processCPU returns the user+system CPU time of the process in nanoseconds (all threads, GC included).
// Benchmarks report it next to wall time because wall time on a shared machine measures the neighbours.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
