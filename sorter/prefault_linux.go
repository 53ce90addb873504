//go:build linux

package sorter

import (
	"sync/atomic"
	"syscall"
	"unsafe"
)

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

// hugeSize is the size of a transparent huge page on amd64 and arm64 (with 4 KiB base pages).
const hugeSize = 2 << 20

// hugeMin is the smallest memory hugePages advises: Go's heap gives objects from 32 KiB on spans of
// their own, laid out one after another as the heap grows.
const hugeMin = 64 << 10

// hugeRanges counts the ranges hugePages advised, against maxHugeRanges.
var hugeRanges atomic.Int64

// maxHugeRanges bounds the ranges hugePages advises in a process. Each splits the mapping of Go's heap
// it lies in (a range's flags differ from its neighbours'), adding up to two mappings against Linux's
// limit per process (vm.max_map_count, 65,530 by default): 4,096 ranges are 8 GiB of slabs at least.
const maxHugeRanges = 4096

// hugePages asks for transparent huge pages (MADV_HUGEPAGE) for b, before it is first written: its
// first writes (and populate) then fault in a 2 MiB page each instead of a 4 KiB one. Go's runtime asks
// for none, and Linux's default (transparent_hugepage "madvise") gives them only where asked. A kernel
// that refuses, or has no huge page to give, leaves small pages: nothing else changes. On this VM each
// first write of a 4 KiB page costs a trap to the hypervisor on top of the kernel's fault, even after
// populate (a loop writing a byte per page of 256 MiB of fresh memory: 18-22 µs a page unpopulated,
// 6-13 µs populated, 0.3 µs with huge pages once the VM's memory had been used).
//
// The advice covers the 2 MiB pages b overlaps, not only those inside it: Go's heap puts the slabs of
// a sorter next to each other, and a 4 MiB slab is rarely aligned, so its inner huge pages alone left
// half the slab memory in small pages (1M rows: 53.8k page faults, 36.8k with inner pages only). The
// advice changes no byte, and a huge page that overlaps memory already written keeps small pages.
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
