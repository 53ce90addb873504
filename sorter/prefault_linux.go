//go:build linux

package sorter

import "syscall"

// madvPopulateWrite is Linux's MADV_POPULATE_WRITE (5.14 on): fault a range in, writable, in one call.
const madvPopulateWrite = 23

// populate faults b's pages in for writing. A kernel without MADV_POPULATE_WRITE refuses it (EINVAL):
// the pages are then faulted in as they are first written, as without this call.
func populate(b []byte) {
	_ = populateErr(b)
}

func populateErr(b []byte) error {
	return syscall.Madvise(b, madvPopulateWrite)
}
