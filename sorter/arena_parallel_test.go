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
// rows in order and for a few rows holding most records (one bucket larger than a share).
func TestSortParallelSameOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	const n = parallelSortMin + 5000
	sorted := make([]rec, n)
	skewed := make([]rec, n)
	for i := range sorted {
		sorted[i] = rec{kv.AppendKeyValue(nil, fmt.Appendf(nil, "row-%09d", i), []byte("f"), []byte("q"), 1, kv.TypePut, nil), uint64(i)}
		row := fmt.Appendf(nil, "hot-%d", rng.IntN(3))
		if rng.IntN(4) == 0 {
			row = fmt.Appendf(nil, "cold-%07d", rng.IntN(n))
		}
		skewed[i] = rec{kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), int64(rng.IntN(5)), kv.TypePut, nil), uint64(i)}
	}
	for name, recs := range map[string][]rec{"shapes": sharedPrefixRecords(rng, n), "sorted": sorted, "skewed": skewed} {
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
		for _, workers := range []int{2, 3, 8} {
			s.a.idx = slices.Clone(unsorted)
			s.a.sortParallel(workers)
			if i := firstDiff(s.a.idx, want); i >= 0 {
				t.Fatalf("%s, %d workers: entry %d differs from the serial sort", name, workers, i)
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
				s.a.sortParallel(workers)
			}
		})
	}
}
