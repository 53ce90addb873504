package sorter

import (
	"math"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/hfload/hfload/internal/hugepage"
)

// indexMapMin is the capacity (entries) from which an index lives in a mapping of its own (newIndex)
// and grows in place instead of being copied into a larger array: 16Ki entries, 512 KiB.
const indexMapMin = 1 << 14

// indexMapMax bounds the address space one index mapping reserves (bytes); an index that outgrows it
// is copied into a new mapping.
const indexMapMax = 16 << 30

// indexMaps holds the pool's index mappings by their first entry: an index that outgrows its capacity
// grows in place up to its mapping's size, and an index dropped is unmapped (dropIndex).
//
// The mappings are outside Go's heap, so the Go runtime's memory limit (cmd/hfload sets it to the
// budget, with the proportional collector off) does not see them: with the indexes moved out, the heap
// could fill with that much more garbage before a collection (families-5 at 2M rows, spilling: peak
// RSS 384 MB against 291 MB). So the limit, where one is set, is lowered by the capacity the mappings
// hold (offHeap: every pool of the process together), and raised again as they are unmapped.
type indexMaps struct {
	mu sync.Mutex
	m  map[*entry]indexMap
}

// indexMap is one mapping: its size and the capacity its index has (entries), and the function that
// unmaps it.
type indexMap struct {
	size, cap int
	unmap     func()
}

// newIndex returns an index of length n and capacity c, in a mapping of size entries when the platform
// allows one (nil otherwise): pages are faulted in only as the index is written, so the mapping
// reserves address space for the index to grow into without copying, not memory.
func (p *Pool) newIndex(n, c, size int) []entry {
	v, unmap := reserveEntries(size)
	if v == nil {
		return nil
	}
	p.idxMaps.mu.Lock()
	defer p.idxMaps.mu.Unlock()
	if p.idxMaps.m == nil {
		p.idxMaps.m = map[*entry]indexMap{}
	}
	p.idxMaps.m[unsafe.SliceData(v)] = indexMap{size: size, cap: c, unmap: unmap}
	offHeap(mappedBytes(c))
	return v[:n:c]
}

// mapped reports whether idx is the start of a mapping (so that it grows in place).
func (p *Pool) mapped(idx []entry) bool {
	if cap(idx) == 0 {
		return false
	}
	p.idxMaps.mu.Lock()
	defer p.idxMaps.mu.Unlock()
	_, ok := p.idxMaps.m[unsafe.SliceData(idx)]
	return ok
}

// growInPlace returns idx with capacity c when idx is the start of a mapping of at least c entries
// (ok false otherwise): the same memory, nothing copied.
func (p *Pool) growInPlace(idx []entry, c int) ([]entry, bool) {
	if cap(idx) == 0 {
		return nil, false
	}
	base := unsafe.SliceData(idx)
	p.idxMaps.mu.Lock()
	defer p.idxMaps.mu.Unlock()
	m, ok := p.idxMaps.m[base]
	if !ok || m.size < c {
		return nil, false
	}
	offHeap(mappedBytes(c) - mappedBytes(m.cap))
	m.cap = c
	p.idxMaps.m[base] = m
	return unsafe.Slice(base, c)[:len(idx)], true
}

// dropIndex unmaps idx's mapping when idx starts one (an index of Go's heap is left to the collector).
// idx must not be used afterwards.
func (p *Pool) dropIndex(idx []entry) {
	if cap(idx) == 0 {
		return
	}
	base := unsafe.SliceData(idx)
	p.idxMaps.mu.Lock()
	defer p.idxMaps.mu.Unlock()
	m, ok := p.idxMaps.m[base]
	if !ok {
		return
	}
	delete(p.idxMaps.m, base)
	m.unmap()
	offHeap(-mappedBytes(m.cap))
}

// mappedBytes is the memory an index of capacity c faults in at most: its bytes rounded up to a whole
// huge page (the page its last entry is in is faulted in whole). Counting capacities alone left
// families-5 at 2M rows (25 indexes) up to 25 MB over the start build's peak RSS.
func mappedBytes(c int) int64 {
	b := int64(c) * int64(unsafe.Sizeof(entry{}))
	return (b + hugepage.Size - 1) / hugepage.Size * hugepage.Size
}

// prefaultMapped faults in the capacity an index just grew in place by, from a goroutine of its own,
// from the first huge page boundary past its records on: the huge page the next records go to is left
// to them. Populating from the records on, the goroutine and the records being added faulted the same
// huge page at once, and one of the two zeroed a huge page in vain.
func prefaultMapped(idx []entry) {
	free := indexFree(idx)
	if len(free) == 0 {
		return
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(free)))
	skip := int((hugepage.Size - at%hugepage.Size) % hugepage.Size)
	if skip < len(free) {
		prefault(free[skip:])
	}
}

// offHeap records n more bytes of index mapped outside Go's heap (fewer for n < 0) and lowers the Go
// runtime's memory limit by all that the process has mapped, unless no limit is set.
//
// The limit is the process's, and so is this record of what lowered it (memoryLimit): each Pool has its
// own lock, and two pools reading and setting the limit at once would lose one's change. The limit is
// never lowered below half of what it would be without the mappings (a budget of a few MiB holds
// indexes of whole huge pages), and the record keeps what was taken off, so that unmapping gives back
// exactly that. A limit someone else has set since (it is not the one offHeap set last) is taken as the
// limit without the mappings.
func offHeap(n int64) {
	if n == 0 {
		return
	}
	memoryLimit.mu.Lock()
	defer memoryLimit.mu.Unlock()
	memoryLimit.mapped += n
	lim := debug.SetMemoryLimit(-1)
	if lim == math.MaxInt64 {
		return
	}
	base := lim
	if lim == memoryLimit.set {
		base += memoryLimit.lowered
	}
	lower := min(max(memoryLimit.mapped, 0), base/2)
	memoryLimit.set, memoryLimit.lowered = base-lower, lower
	debug.SetMemoryLimit(memoryLimit.set)
}

// memoryLimit is what the process's index mappings took off the Go runtime's memory limit (offHeap):
// process-wide state, as the limit it lowers is.
type memoryLimitState struct {
	mu      sync.Mutex
	mapped  int64 // bytes of index mapped by every Pool of the process
	lowered int64 // how much the limit was lowered by: mapped, or less where that would halve it
	set     int64 // the limit offHeap set last
}

var memoryLimit memoryLimitState

// indexMapSize is the size (entries) of the mapping made for an index of capacity c: room for the
// largest index the budget accounts (at entrySize an entry), at most indexMapMax bytes, at least c.
func (p *Pool) indexMapSize(c int) int {
	most := min(p.budget-p.reserveIO, indexMapMax) / int64(unsafe.Sizeof(entry{}))
	return max(c, int(most))
}
