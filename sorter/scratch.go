package sorter

// entryScratch is the pool's scratchFunc: n entries of memory outside Go's heap where the platform
// allows (mapEntries: given back to the system when freed, not left to the garbage collector as a
// heap of the index's size), accounted in the budget while held. It is reserved only if the budget
// has room for it now: it never spills a sorter or waits.
func (p *Pool) entryScratch(n int) ([]entry, func(), bool) {
	size := int64(n) * entrySize
	if !p.tryReserve(size) {
		return nil, nil, false
	}
	v, unmap := mapEntries(n)
	return v, func() {
		unmap()
		p.release(size)
	}, true
}

// tryReserve accounts n bytes if the budget has room for them now (dropping pooled free slabs if
// needed), without spilling or waiting.
func (p *Pool) tryReserve(n int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || n > p.budget-p.reserveIO {
		return false
	}
	if p.used+n > p.budget && p.freeBytes > 0 {
		p.dropFreeLocked(n)
	}
	if p.used+n > p.budget {
		return false
	}
	p.used += n
	p.peak = max(p.peak, p.used)
	return true
}
