package sorter

import (
	"slices"
	"sync"
)

// parallelSortMin is the index length from which sortParallel spreads the sort over goroutines.
const parallelSortMin = 1 << 16

// bucket is a part of the index left to radixSort from byte depth on.
type bucket struct {
	v     []entry
	depth int
}

// sortParallel sorts the whole index as radixSort does, on up to workers goroutines: distribution
// passes (serial, one pass over the entries of each bucket split) cut the index into buckets of at
// most a quarter of an even share each, which the workers then sort largest first. Buckets are
// disjoint parts of the index and the records are only read, and the order is a total one (the
// comparator ends with seq): the result is the serial sort's.
func (a *arena) sortParallel(workers int) {
	a.segs = nil
	if workers < 2 || len(a.idx) < parallelSortMin {
		a.radixSort(a.idx, 0, 0)
		return
	}
	var parts []bucket
	split(a.idx, 0, len(a.idx)/(4*workers), &parts)
	slices.SortFunc(parts, func(x, y bucket) int { return len(y.v) - len(x.v) })
	work := make(chan bucket)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range work {
				a.radixSort(b.v, b.depth, 0)
			}
		}()
	}
	for _, b := range parts {
		work <- b
	}
	close(work)
	wg.Wait()
}

// split distributes v by its bytes from depth on (radixStep) until the buckets hold at most small
// entries (or all 16 cached bytes are equal), appending every bucket of more than one entry to parts.
func split(v []entry, depth, small int, parts *[]bucket) {
	if len(v) > small && depth < 8*keyWords {
		if radixStep(v, depth, func(b []entry, depth int) { split(b, depth, small, parts) }) {
			return
		}
		depth = 8 * keyWords // all equal: radixSort goes on with the ties
	}
	if len(v) > 1 {
		*parts = append(*parts, bucket{v, depth})
	}
}
