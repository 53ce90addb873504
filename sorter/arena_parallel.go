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

// scratchFunc returns scratch memory for n entries and the function that gives it back, or ok false
// when there is none to be had (sortParallel then distributes the index in place).
type scratchFunc func(n int) (v []entry, free func(), ok bool)

// sortParallel sorts the whole index as radixSort does, on up to workers goroutines. The first
// distribution pass runs on all of them through scratch memory when scratch provides it (scatterTop),
// else in place on one. The workers then take the buckets largest first: one of more than a quarter of
// an even share is distributed once more (its buckets go back to the others), a smaller one is sorted
// (radixSort). Buckets are disjoint parts of the index and the records are only read, and the order is
// a total one (the comparator ends with seq): the result is the serial sort's.
func (a *arena) sortParallel(workers int, scratch scratchFunc) {
	a.segs = nil
	if workers < 2 || len(a.idx) < parallelSortMin {
		a.radixSort(a.idx, 0, 0)
		return
	}
	parts := []bucket{{a.idx, 0}}
	if scratch != nil {
		if tmp, free, ok := scratch(len(a.idx)); ok {
			parts = a.scatterTop(tmp, workers)
			free()
		}
	}
	a.sortBuckets(parts, workers, len(a.idx)/(4*workers))
}

// bucketQueue hands buckets to sortBuckets' workers, largest first, and takes back the buckets a
// worker's distribution pass made.
type bucketQueue struct {
	mu    sync.Mutex
	cond  *sync.Cond
	parts []bucket // ascending by length: the largest is taken from the end
	busy  int      // buckets being distributed or sorted
}

// take returns the largest bucket, waiting while none is queued but one being distributed may add
// some; ok false when all are done.
func (q *bucketQueue) take() (b bucket, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.parts) == 0 && q.busy > 0 {
		q.cond.Wait()
	}
	if len(q.parts) == 0 {
		return bucket{}, false
	}
	b = q.parts[len(q.parts)-1]
	q.parts = q.parts[:len(q.parts)-1]
	q.busy++
	return b, true
}

// done ends a taken bucket, queueing the buckets it was distributed into.
func (q *bucketQueue) done(subs []bucket) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.busy--
	if len(subs) > 0 {
		q.parts = append(q.parts, subs...)
		slices.SortStableFunc(q.parts, func(x, y bucket) int { return len(x.v) - len(y.v) })
	}
	if len(subs) > 0 || q.busy == 0 {
		q.cond.Broadcast()
	}
}

// sortBuckets sorts the buckets parts on workers goroutines: a bucket of more than small entries whose
// cached bytes from its depth on are not all equal is distributed by one more byte (radixStep) and its
// buckets queued, any other sorted by radixSort.
func (a *arena) sortBuckets(parts []bucket, workers, small int) {
	q := &bucketQueue{parts: parts}
	q.cond = sync.NewCond(&q.mu)
	slices.SortStableFunc(q.parts, func(x, y bucket) int { return len(x.v) - len(y.v) })
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				b, ok := q.take()
				if !ok {
					return
				}
				if len(b.v) > small && b.depth < 8*keyWords {
					var subs []bucket
					if radixStep(b.v, b.depth, func(v []entry, depth int) { subs = append(subs, bucket{v, depth}) }) {
						q.done(subs)
						continue
					}
					b.depth = 8 * keyWords // all equal: radixSort goes on with the ties
				}
				a.radixSort(b.v, b.depth, 0)
				q.done(nil)
			}
		}()
	}
	wg.Wait()
}
