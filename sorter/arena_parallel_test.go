package sorter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestSortParallelSameOrder: sorting the index on several goroutines gives exactly the serial radix
// sort's order (the same entries in the same places), for the seeds' key shapes with long ties, for
// rows in order, for a few rows holding most records (one bucket larger than a share) and for rows
// whose first 16 bytes are all equal: with the first pass in place, through scratch memory from Go's
// heap, and through the pool's (which it accounts while held and gives back).
func TestSortParallelSameOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n = parallelSortMin + 5000
	sorted := make([]rec, n)
	skewed := make([]rec, n)
	tied := make([]rec, n)
	for i := range sorted {
		tied[i] = rec{kv.AppendKeyValue(nil, fmt.Appendf(nil, "tenant-0000000042|%07d", rng.IntN(n)), []byte("f"), []byte("q"), 1, kv.TypePut, nil), uint64(i)}
		sorted[i] = rec{kv.AppendKeyValue(nil, fmt.Appendf(nil, "row-%09d", i), []byte("f"), []byte("q"), 1, kv.TypePut, nil), uint64(i)}
		row := fmt.Appendf(nil, "hot-%d", rng.IntN(3))
		if rng.IntN(4) == 0 {
			row = fmt.Appendf(nil, "cold-%07d", rng.IntN(n))
		}
		skewed[i] = rec{kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), int64(rng.IntN(5)), kv.TypePut, nil), uint64(i)}
	}
	for name, recs := range map[string][]rec{"shapes": sharedPrefixRecords(rng, n), "sorted": sorted, "skewed": skewed, "tied": tied} {
		p := newTestPool(t, 64<<20, 2)
		s := p.NewSorter(name, SorterOptions{})
		for _, r := range recs {
			if err := s.Add(rc(r.kv), r.seq); err != nil {
				t.Fatal(err)
			}
		}
		if p.Spills() != 0 {
			t.Fatalf("%s: %d spills", name, p.Spills())
		}
		unsorted := slices.Clone(s.a.idx)
		want := slices.Clone(unsorted)
		s.a.radixSort(want, 0, 0)
		taken, freed := 0, 0
		heapScratch := func(n int) ([]entry, func(), bool) {
			taken++
			return make([]entry, n), func() { freed++ }, true
		}
		scratches := map[string]scratchFunc{"in place": nil, "heap": heapScratch, "pool": p.entryScratch}
		for _, workers := range []int{2, 3, 8} {
			for how, scratch := range scratches {
				s.a.idx = slices.Clone(unsorted)
				used := p.UsedBytes()
				s.a.sortParallel(workers, scratch)
				if i := firstDiff(s.a.idx, want); i >= 0 {
					t.Fatalf("%s, %d workers, %s: entry %d differs from the serial sort", name, workers, how, i)
				}
				if how == "heap" && (taken != 1 || freed != 1) {
					t.Fatalf("%s, %d workers: scratch taken %d times, freed %d times, want once each", name, workers, taken, freed)
				}
				taken, freed = 0, 0
				if p.UsedBytes() != used {
					t.Fatalf("%s, %d workers, %s: the pool holds %d bytes after the sort, %d before", name, workers, how, p.UsedBytes(), used)
				}
			}
		}
		s.a.idx = unsorted
		s.a.segs = nil
		sameRecords(t, drain(t, s), reference(recs))
	}
}

func firstDiff(a, b []entry) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// BenchmarkSortParallel sorts the index of 1M [customer][order] records (bench-shapes' key shape) on
// 1 and 2 goroutines: the ranged finish's sort, which nothing else runs beside.
func BenchmarkSortParallel(b *testing.B) {
	const n = 1 << 20
	p := newTestPool(b, 512<<20, 2)
	s := p.NewSorter("bench", SorterOptions{})
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 0; i < n; i++ {
		row := fmt.Appendf(nil, "C%06d-%010d", rng.IntN(n/20), i)
		if err := s.Add(rc(kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), 1, kv.TypePut, []byte("v"))), uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	unsorted := slices.Clone(s.a.idx)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				copy(s.a.idx, unsorted)
				b.StartTimer()
				s.a.sortParallel(workers, p.entryScratch)
			}
		})
	}
}

// TestEntryScratch: the pool's scratch is accounted in its budget while held (and in its peak) and given
// back when freed; without room in the budget there is none, and nothing is accounted.
func TestEntryScratch(t *testing.T) {
	p := newTestPool(t, 32<<20, 2)
	used := p.UsedBytes()
	v, free, ok := p.entryScratch(100000)
	if !ok || len(v) != 100000 {
		t.Fatalf("scratch of 100000 entries: ok %v, %d entries", ok, len(v))
	}
	for i := range v { // the memory is the caller's to write
		v[i] = entry{seq: uint64(i)}
	}
	if got := p.UsedBytes() - used; got != 100000*entrySize {
		t.Fatalf("scratch accounted %d bytes, want %d", got, 100000*entrySize)
	}
	if p.PeakBytes() < used+100000*entrySize {
		t.Fatalf("peak %d bytes below the scratch's", p.PeakBytes())
	}
	free()
	if p.UsedBytes() != used {
		t.Fatalf("%d bytes accounted after freeing the scratch, %d before", p.UsedBytes(), used)
	}
	if _, _, ok := p.entryScratch(int(32 << 20 / entrySize)); ok {
		t.Fatal("a scratch of the whole budget was granted")
	}
	if p.UsedBytes() != used {
		t.Fatalf("%d bytes accounted after a refused scratch, %d before", p.UsedBytes(), used)
	}
}
