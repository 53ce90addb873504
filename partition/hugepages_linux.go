//go:build linux

package partition

import (
	"sync/atomic"
	"syscall"
	"unsafe"
)

// madvHugePage is Linux's MADV_HUGEPAGE.
const madvHugePage = 14

// hugeSize is the size of a transparent huge page on amd64 and arm64 (with 4 KiB base pages).
const hugeSize = 2 << 20

// hugeMin is the smallest buffer hugePages advises: Go's heap gives objects from 32 KiB on spans of
// their own, laid out one after another as the heap grows.
const hugeMin = 64 << 10

// maxHugeRanges bounds the ranges hugePages advises in a process: each may split a mapping of Go's
// heap in three (vm.max_map_count is 65,530 by default). A sampler advises a few buffers, each made
// about once.
const maxHugeRanges = 256

var hugeRanges atomic.Int64

// hugePages asks for transparent huge pages (MADV_HUGEPAGE) for the 2 MiB pages that s overlaps (its
// capacity), before s is first written, as packages sorter and pipeline do for their buffers: on this
// project's VM each first write of a 4 KiB page costs a trap to the hypervisor besides the kernel's
// fault (18-22 µs a page), one of a 2 MiB page ~0.3 µs a 4 KiB page. The advice changes no byte;
// memory already written keeps its small pages. Go's runtime asks for none, and Linux's default
// (transparent_hugepage "madvise") gives them only where asked.
func hugePages[T any](s []T) {
	size := uintptr(cap(s)) * unsafe.Sizeof(*new(T))
	if size < hugeMin || hugeRanges.Load() >= maxHugeRanges {
		return
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s[:cap(s)])))
	lo := start &^ (hugeSize - 1)
	hi := (start + size + hugeSize - 1) &^ (hugeSize - 1)
	hugeRanges.Add(1)
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, madvHugePage)
}
