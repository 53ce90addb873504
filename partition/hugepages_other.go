//go:build !linux

package partition

// hugePages does nothing here: transparent huge pages are asked for on Linux only.
func hugePages[T any]([]T) {}
