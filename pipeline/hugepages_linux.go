//go:build linux

package pipeline

import (
	"sync/atomic"
	"syscall"
	"unsafe"
)

// madvHugePage is Linux's MADV_HUGEPAGE.
const madvHugePage = 14

// hugeSize is the size of a transparent huge page on amd64 and arm64 (with 4 KiB base pages).
const hugeSize = 2 << 20

// hugeMin is the smallest memory hugePages advises: Go's heap gives objects from 32 KiB on spans of
// their own, laid out one after another as the heap grows.
const hugeMin = 64 << 10

// maxHugeRanges bounds the ranges hugePages advises in a process: each may split a mapping of Go's
// heap in three (vm.max_map_count is 65,530 by default). The buffers it is for are made once a worker
// or a batch kept for reuse.
const maxHugeRanges = 1024

var hugeRanges atomic.Int64

// hugePages asks for transparent huge pages (MADV_HUGEPAGE) for the 2 MiB pages that b overlaps, before
// b is first written, as package sorter does for its slabs (sorter/prefault_linux.go): on this project's
// VM each first write of a 4 KiB page costs a trap to the hypervisor besides the kernel's fault (18-22
// µs a page), one of a 2 MiB page ~0.3 µs a 4 KiB page. The advice changes no byte; memory already
// written keeps its small pages. Go's runtime asks for none, and Linux's default (transparent_hugepage
// "madvise") gives them only where asked.
func hugePages(b []byte) {
	if len(b) < hugeMin || hugeRanges.Load() >= maxHugeRanges {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := start &^ (hugeSize - 1)
	hi := (start + uintptr(len(b)) + hugeSize - 1) &^ (hugeSize - 1)
	hugeRanges.Add(1)
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvHugePage)
}
