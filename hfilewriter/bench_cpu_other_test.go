//go:build !unix

package hfilewriter

import "time"

// benchCPUTime is not measured on this platform.
func benchCPUTime() time.Duration { return 0 }
