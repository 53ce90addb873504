//go:build !amd64

package sorter

// prefetch reads the first byte of the records at index positions [from, from+prefetchAhead): the
// records of a sorted arena are read in random memory order, each a cache miss, and misses that are
// independent of one another overlap where one at a time would each stall the resolver.
func (r *resolver) prefetch(from int) {
	idx := r.a.idx
	end := min(from+prefetchAhead, len(idx))
	var t byte
	for k := from; k < end; k++ {
		t += r.a.slabs[idx[k].slab][idx[k].off]
	}
	r.touched += t
}
