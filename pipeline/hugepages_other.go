//go:build !linux

package pipeline

// hugePages does nothing here: transparent huge pages are asked for on Linux only.
func hugePages([]byte) {}
