package sorter

import (
	"os"
	"unsafe"

	"github.com/hfload/hfload/internal/hugepage"
)

// hugeRanges advises the fresh slabs and grown indexes of every sorter of the process, before they are
// first written (internal/hugepage): at most 4,096 ranges, 8 GiB of slabs at least.
var hugeRanges = hugepage.Ranges{Max: 4096}

// prefaultMin is the smallest fresh slab or index that prefault hands to a goroutine of its own.
const prefaultMin = 256 << 10

// prefault faults a freshly made slab's pages in from a goroutine of its own, when it is large enough to
// be worth one. The records are copied into a slab while the sorter's lock is held, and a fresh slab's
// first write of each page is a page fault (zeroing the page: ~3 µs): with one sorter taking the records
// of every mapping worker (one family, ranged regions), the others waited for the lock while the holder
// faulted, and a processor stood idle (perf record of 1M rows, 10,000 regions: ~70 ms of faults under the
// lock, ~50 ms of idle processor beside it). The goroutine faults the pages ahead of the copying, on a
// processor that would otherwise wait. It only maps pages in: the slab's bytes (zero, or those already
// copied in) are not changed, so it needs no synchronisation with the copying.
func prefault(b []byte) {
	if len(b) >= prefaultMin {
		go populate(b)
	}
}

// prefaultIndex is prefault of an index's unused capacity (indexFree).
func prefaultIndex(idx []entry) {
	prefault(indexFree(idx))
}

// prefaultGrown faults in the pages of a freshly made index that growIndex is about to copy the old
// index into, as well as its unused capacity. The copy runs under the sorter's lock: its own page faults
// (one per 4 KiB of the old index: perf record of 1M rows, 10,000 regions, ~22 ms for the last growth
// of ~900k entries) held up the mapping workers waiting for the lock while a processor stood idle. So the
// second half of the index is populated on another goroutine, on the processor that would wait, and the
// first half here, with one madvise each instead of a fault per page, before copying. A small old
// index is left to prefaultIndex.
func prefaultGrown(idx []entry) {
	all := indexFree(idx[:0])
	if len(idx)*int(unsafe.Sizeof(entry{})) < 2*prefaultMin || len(all) == 0 {
		prefaultIndex(idx)
		return
	}
	page := os.Getpagesize()
	half := len(all) / 2 / page * page
	go populate(all[half:])
	populate(all[:half])
}

// indexFree is the memory of idx's unused capacity from its first page boundary on. madvise takes only
// a page-aligned start (EINVAL otherwise, which populate ignores): from the start of the unused
// capacity itself, an index of 1,000 entries (32 bytes each) had it 3,328 bytes into a page and nothing
// was faulted in. The page the unused capacity starts in holds used entries, which are written first.
func indexFree(idx []entry) []byte {
	free := idx[len(idx):cap(idx)]
	if cap(free) == 0 {
		return nil
	}
	b := entryBytes(free[:cap(free)])
	page := uintptr(os.Getpagesize())
	skip := (page - uintptr(unsafe.Pointer(unsafe.SliceData(b)))%page) % page
	if skip >= uintptr(len(b)) {
		return nil
	}
	return b[skip:]
}

// entryBytes is the memory of the entries idx (len(idx) of them) as bytes.
func entryBytes(idx []entry) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(idx))), uintptr(len(idx))*unsafe.Sizeof(entry{}))
}
