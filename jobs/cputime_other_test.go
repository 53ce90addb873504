//go:build !unix

package jobs

import "time"

// processCPU is not available here; CPU metrics read 0.
func processCPU() time.Duration { return 0 }
