//go:build !linux

package hugepage

// advise asks for nothing: transparent huge pages are asked for on Linux only.
func advise(lo, hi uintptr) bool { return false }
