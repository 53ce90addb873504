package sorter

import (
	"math/bits"
	"sync"
)

// scatterTop is sortParallel's first distribution pass on workers goroutines, through tmp (scratch of
// len(a.idx) entries): each goroutine takes an even chunk of the index and finds where its entries' cached
// row bytes differ from the first entry's (the pass's digit is at their first differing byte: digitAt),
// then counts its chunk's digits, then copies its entries into tmp, each to its bucket's place after the
// earlier chunks' entries of that bucket, then copies a chunk of tmp back into the index. It returns the
// buckets of more than one entry, with the depth after the digit; one bucket of depth 8*keyWords when the
// cached bytes are all equal. In place, this pass ran on one processor while the other stood idle (perf
// record of 1M rows, 10,000 regions: ~32 ms, the whole index twice, of the ~38 ms between the end of the
// input and the parallel sort).
func (a *arena) scatterTop(tmp []entry, workers int) []bucket {
	v := a.idx
	n := len(v)
	chunk := (n + workers - 1) / workers
	bounds := func(w int) (int, int) { return min(w*chunk, n), min((w+1)*chunk, n) }
	run := func(f func(w int)) {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(w)
			}()
		}
		wg.Wait()
	}
	dps, dns := make([]uint64, workers), make([]uint64, workers)
	p0, n0 := v[0].prefix, v[0].next
	run(func(w int) {
		lo, hi := bounds(w)
		var dp, dn uint64
		for i := lo; i < hi; i++ {
			dp |= v[i].prefix ^ p0
			dn |= v[i].next ^ n0
		}
		dps[w], dns[w] = dp, dn
	})
	var dp, dn uint64
	for w := range dps {
		dp |= dps[w]
		dn |= dns[w]
	}
	depth := diffDepth(dp, dn)
	if depth == 8*keyWords {
		return []bucket{{v, depth}}
	}
	counts := make([][256]int, workers)
	g := digitAt(dp, dn, depth)
	run(func(w int) {
		lo, hi := bounds(w)
		c := &counts[w]
		if g.next {
			for i := lo; i < hi; i++ {
				c[g.of(v[i].next)]++
			}
		} else {
			for i := lo; i < hi; i++ {
				c[g.of(v[i].prefix)]++
			}
		}
	})
	// Each chunk's place in every bucket: after the bucket's entries of the earlier chunks.
	next := make([][256]int, workers)
	var parts []bucket
	sum := 0
	for b := 0; b < 256; b++ {
		start := sum
		for w := range counts {
			next[w][b] = sum
			sum += counts[w][b]
		}
		if sum-start > 1 {
			parts = append(parts, bucket{v[start:sum], depth + g.width()})
		}
	}
	run(func(w int) {
		lo, hi := bounds(w)
		at := &next[w]
		if g.next {
			for i := lo; i < hi; i++ {
				d := g.of(v[i].next)
				tmp[at[d]] = v[i]
				at[d]++
			}
		} else {
			for i := lo; i < hi; i++ {
				d := g.of(v[i].prefix)
				tmp[at[d]] = v[i]
				at[d]++
			}
		}
	})
	run(func(w int) {
		lo, hi := bounds(w)
		copy(v[lo:hi], tmp[lo:hi])
	})
	return parts
}

// diffDepth returns the first byte depth at which entries differ whose cached row bytes, XORed with
// one entry's, OR to dp (prefix) and dn (next); 8*keyWords when they are all equal.
func diffDepth(dp, dn uint64) int {
	if dp != 0 {
		return bits.LeadingZeros64(dp) / 8
	}
	if dn != 0 {
		return 8 + bits.LeadingZeros64(dn)/8
	}
	return 8 * keyWords
}
