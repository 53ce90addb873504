//go:build !unix

package pipeline

import "time"

// csvProcessCPU is not available here; the CPU-based metric reads 0.
func csvProcessCPU() time.Duration { return 0 }
