package sorter

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"unsafe"

	"github.com/hfload/hfload/internal/kv"

	"github.com/hfload/hfload/internal/hugepage"
)

// mappedElsewhere is how many bytes of index the process has mapped now (tests before this one may
// leave sorters that were never finished): the memory limit is lowered by those too.
func mappedElsewhere() int64 {
	memoryLimit.mu.Lock()
	defer memoryLimit.mu.Unlock()
	return memoryLimit.mapped
}

// mappedIndexes is how many index mappings p holds.
func mappedIndexes(p *Pool) int {
	p.idxMaps.mu.Lock()
	defer p.idxMaps.mu.Unlock()
	return len(p.idxMaps.m)
}

// TestIndexGrowsInPlace: an index past indexMapMin entries lives in a mapping and grows in place (its
// first entry stays where it was: nothing is copied), by steps of an eighth, so its capacity stays
// within an eighth of its records; the Go runtime's memory limit is lowered by the mapping's capacity
// (rounded up to a huge page); the records come out sorted, and the mapping is unmapped (the limit
// restored) when the sorter is done.
func TestIndexGrowsInPlace(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no index mappings on this platform")
	}
	const limit = 1 << 40
	prev := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	m0 := mappedElsewhere()
	const records = 200_000
	p := newTestPool(t, 64<<20, 2)
	s := p.NewSorter("one", SorterOptions{})
	var base *entry
	var moved int
	recs := make([]rec, 0, records)
	for i := 0; i < records; i++ {
		row := fmt.Appendf(nil, "r%07d", (i*7919)%records)
		r := rec{kv: kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), 1, kv.TypePut, []byte("v")), seq: uint64(i)}
		recs = append(recs, r)
		if err := s.Add(rc(r.kv), r.seq); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		if c := cap(s.a.idx); c >= indexMapMin {
			if b := unsafe.SliceData(s.a.idx); b != base {
				base = b
				moved++
			}
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	n, c := len(s.a.idx), cap(s.a.idx)
	s.mu.Unlock()
	if moved != 1 {
		t.Errorf("the index moved %d times past %d entries, want once (into its mapping)", moved, indexMapMin)
	}
	if c < n || c > n+n/8 {
		t.Errorf("index capacity %d for %d records, want at most an eighth more", c, n)
	}
	if m := mappedIndexes(p); m != 1 {
		t.Errorf("%d index mappings while adding, want 1", m)
	}
	if got, want := debug.SetMemoryLimit(-1), int64(limit)-m0-mappedBytes(c); got != want || mappedBytes(c) < int64(c)*32 {
		t.Errorf("memory limit %d with an index of %d entries mapped, want %d", got, c, want)
	}
	sameRecords(t, drain(t, s), reference(recs))
	if m := mappedIndexes(p); m != 0 {
		t.Errorf("%d index mappings left after the sorter is done, want 0", m)
	}
	if got := debug.SetMemoryLimit(-1); got != limit-m0 {
		t.Errorf("memory limit %d after the index is unmapped, want %d again", got, int64(limit)-m0)
	}
}

// TestIndexMappingsReleasedAcrossSpills: sorters that spill many times (their own spills, spare indexes
// handed between arenas, victims spilled for each other) while adding concurrently still give every
// result right, account nothing afterwards, and leave no index mapped.
func TestIndexMappingsReleasedAcrossSpills(t *testing.T) {
	const sorters, per, limit = 2, 120_000, 1 << 40
	prev := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	m0 := mappedElsewhere()
	p := newTestPool(t, 6<<20, 2)
	ss := make([]*Sorter, sorters)
	want := make([][]rec, sorters)
	var wg sync.WaitGroup
	errs := make([]error, sorters)
	for i := range ss {
		ss[i] = p.NewSorter(fmt.Sprintf("s%d", i), SorterOptions{})
		rng := rand.New(rand.NewPCG(uint64(i), 7))
		want[i] = randRecords(rng, per)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, r := range want[i] {
				if err := ss[i].Add(rc(r.kv), r.seq); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, s := range ss {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		sameRecords(t, drain(t, s), reference(want[i]))
	}
	if p.Spills() < 4 {
		t.Errorf("%d spills, want several", p.Spills())
	}
	if m := mappedIndexes(p); m != 0 {
		t.Errorf("%d index mappings left after the sorters are done, want 0", m)
	}
	if got := debug.SetMemoryLimit(-1); got != limit-m0 {
		t.Errorf("memory limit %d after every index is unmapped, want %d again", got, int64(limit)-m0)
	}
	if u := p.UsedBytes() - p.PooledBytes(); u != p.reserveIO {
		t.Errorf("%d bytes still accounted, want the I/O reserve %d", u, p.reserveIO)
	}
}

// TestReserveEntriesAligned: a mapping starts on a huge page boundary (only whole, aligned 2 MiB
// ranges get huge pages) and is made, its head and tail cut off, for sizes that are not whole pages
// (cutting a tail that does not start on a page boundary fails, and reserveEntries then gives none).
func TestReserveEntriesAligned(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("no index mappings on this platform")
	}
	for _, n := range []int{1, 1000, 6_841_343, 1 << 20} {
		v, unmap := reserveEntries(n)
		if v == nil {
			t.Fatalf("no mapping of %d entries", n)
		}
		if len(v) != n {
			t.Errorf("mapping of %d entries has %d", n, len(v))
		}
		if at := uintptr(unsafe.Pointer(unsafe.SliceData(v))); at%hugepage.Size != 0 {
			t.Errorf("mapping of %d entries at %#x, not on a huge page boundary", n, at)
		}
		v[0].seq, v[n-1].seq = 1, 2 // writable at both ends
		unmap()
	}
}

// TestOffHeapLimit: the memory limit is lowered by what every pool has mapped, never below half of what
// it would be without them, and unmapping gives back exactly what was taken off (lowering by more than
// the limit itself was refused by the runtime, and the later raise lifted the limit above where it was).
// Concurrent changes (two pools) lose none.
func TestOffHeapLimit(t *testing.T) {
	const limit = 1 << 40
	prev := debug.SetMemoryLimit(limit)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	m0 := mappedElsewhere()
	check := func(what string, want int64) {
		t.Helper()
		if got := debug.SetMemoryLimit(-1); got != want {
			t.Errorf("limit %d %s, want %d", got, what, want)
		}
	}
	offHeap(1 << 20)
	check("with 1 MiB mapped", limit-m0-1<<20)
	offHeap(limit)
	check("with more than the limit mapped", limit/2)
	offHeap(-limit)
	check("with 1 MiB mapped again", limit-m0-1<<20)
	offHeap(-1 << 20)
	check("with nothing mapped", limit-m0)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				offHeap(4096)
				offHeap(-4096)
			}
		}()
	}
	wg.Wait()
	check("after concurrent changes that cancel out", limit-m0)
	debug.SetMemoryLimit(8 << 20) // set by someone else: the limit without the mappings
	offHeap(1 << 20)
	check("after another limit was set, with 1 MiB more mapped", 8<<20-min(m0+1<<20, 4<<20))
	offHeap(-1 << 20)
}
