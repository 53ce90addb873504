//go:build !linux

package sorter

// populate does nothing here: pages are faulted in as they are first written.
func populate([]byte) {}

// hugePages does nothing here: transparent huge pages are asked for on Linux only.
func hugePages([]byte) {}
