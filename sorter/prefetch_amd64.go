package sorter

import "unsafe"

// prefetchLines asks for the three cache lines at each of addrs (prefetch_amd64.s): a record's first
// 129 bytes or more, its header and the cells after it (a record of 80 bytes, customer-order's, spans
// three lines a quarter of the time; host-event-revts', about 100 bytes, half the time).
//
//go:noescape
func prefetchLines(addrs *[prefetchAhead]uintptr)

// prefetch asks for the records at index positions [from, from+prefetchAhead), with PREFETCHT0: the
// records of a sorted arena are read in random memory order, each a cache miss; the prefetches overlap
// and, unlike plain loads, hold up nothing while they are outstanding. The last few records of the index
// are not asked for. The addresses are only hints: one past a slab's end is harmless.
func (r *resolver) prefetch(from int) {
	idx := r.a.idx
	if from+prefetchAhead > len(idx) {
		return
	}
	var addrs [prefetchAhead]uintptr
	for k := range addrs {
		e := &idx[from+k]
		addrs[k] = uintptr(unsafe.Pointer(unsafe.SliceData(r.a.slabs[e.slab]))) + uintptr(e.off)
	}
	prefetchLines(&addrs)
}
