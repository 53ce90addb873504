//go:build linux

package hugepage

import "syscall"

// madvHugePage is Linux's MADV_HUGEPAGE.
const madvHugePage = 14

// advise asks for huge pages for [lo, hi), both on Size boundaries. A refusal (EINVAL where the kernel
// has no transparent huge pages) changes nothing.
func advise(lo, hi uintptr) bool {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvHugePage)
	return true
}
