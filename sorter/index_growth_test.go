package sorter

import (
	"fmt"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestSortersSharingTheBudgetDoNotSpill: records of one sorter per region that fit the budget together
// stay in memory. Each sorter's index grows toward its fair share of the budget, not toward the size at
// which one sorter alone would spill: four indexes reserved for that took more than the budget and
// spilled the other sorters.
func TestSortersSharingTheBudgetDoNotSpill(t *testing.T) {
	p := newTestPool(t, 64<<20, 2)
	const sorters, perSorter = 4, 80_000
	ss := make([]*Sorter, sorters)
	for i := range ss {
		ss[i] = p.NewSorter(fmt.Sprintf("region%d", i), SorterOptions{})
		defer ss[i].Close()
	}
	seq := uint64(0)
	for n := 0; n < perSorter; n++ {
		for i, s := range ss {
			row := fmt.Appendf(nil, "r%d-%07d", i, (n*7919)%perSorter)
			if err := s.Add(rc(kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), 1, kv.TypePut, []byte("v"))), seq); err != nil {
				t.Fatal(err)
			}
			seq++
		}
	}
	if p.Spills() != 0 {
		t.Fatalf("%d spills of %d records (%d MiB of budget, peak %d MiB accounted)", p.Spills(), sorters*perSorter,
			p.Budget()>>20, p.PeakBytes()>>20)
	}
	for i, s := range ss {
		if got := len(drain(t, s)); got != perSorter {
			t.Fatalf("sorter %d gave %d records, want %d", i, got, perSorter)
		}
	}
}

// TestIndexGrowsToTheProjectedInput: when WillFit says the whole input fits and InputScale says a quarter
// of it has been read, an index of Go's heap (no mapping to grow in place: noIndexMap) growing past
// 64Ki entries grows straight to its records scaled to the whole input (plus an eighth), not by a
// quarter; without the projection, or when the input does not fit, it grows as before.
func TestIndexGrowsToTheProjectedInput(t *testing.T) {
	const records = 1<<16 + 10
	const memory = 24 << 20 // the spill size's projection is below four times the records at the first growth
	grown := func(opts PoolOptions) int {
		opts.Memory, opts.Parallelism = memory, 2
		p := newTestPoolOpts(t, opts)
		p.noIndexMap = true
		s := p.NewSorter("one", SorterOptions{})
		defer s.Close()
		for i := 0; i < records; i++ {
			row := fmt.Appendf(nil, "r%07d", (i*7919)%records)
			if err := s.Add(rc(kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), 1, kv.TypePut, []byte("v"))), uint64(i)); err != nil {
				t.Fatal(err)
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if got := len(s.a.idx); got != records {
			t.Fatalf("index holds %d records, want %d", got, records)
		}
		return cap(s.a.idx)
	}
	fits := func(int64) bool { return true }
	quarter := func() float64 { return 4 }
	plain := grown(PoolOptions{})
	projected := grown(PoolOptions{WillFit: fits, InputScale: quarter})
	n := float64(1 << 16) // the records when the index first grows past 64Ki entries
	if want := int(n * 4 * 1.125); projected < want || projected > want+64 {
		t.Fatalf("projected index capacity %d, want about %d (the first growth past 64Ki scaled by 4, plus an eighth)", projected, want)
	}
	if plain >= projected {
		t.Fatalf("without a projection the index grew to %d, not less than the projected %d", plain, projected)
	}
	if got := grown(PoolOptions{WillFit: func(int64) bool { return false }, InputScale: quarter}); got != plain {
		t.Fatalf("an input that does not fit grew the index to %d, want %d as without a projection", got, plain)
	}
	if got := grown(PoolOptions{WillFit: fits, InputScale: func() float64 { return 0 }}); got != plain {
		t.Fatalf("an unknown projection grew the index to %d, want %d", got, plain)
	}
}

// TestProjectedIndexKeepsToItsShare: a sorter whose records come first (an input in key order fills one
// region after another) projects the whole input onto itself; its index still grows to no more than its
// fair share of the arena memory among the pool's sorters (or the usual step of a quarter), in Go's heap
// and in a mapping.
func TestProjectedIndexKeepsToItsShare(t *testing.T) {
	for _, heap := range []bool{true, false} {
		t.Run(fmt.Sprintf("heap=%v", heap), func(t *testing.T) { testProjectedIndexKeepsToItsShare(t, heap) })
	}
}

func testProjectedIndexKeepsToItsShare(t *testing.T, heap bool) {
	const records, sorters = 1<<16 + 10, 8
	p := newTestPoolOpts(t, PoolOptions{Memory: 24 << 20, Parallelism: 2,
		WillFit: func(int64) bool { return true }, InputScale: func() float64 { return 4 }})
	p.noIndexMap = heap
	ss := make([]*Sorter, sorters)
	for i := range ss {
		ss[i] = p.NewSorter(fmt.Sprintf("region%d", i), SorterOptions{})
		defer ss[i].Close()
	}
	s := ss[0]
	for i := 0; i < records; i++ {
		row := fmt.Appendf(nil, "r%07d", (i*7919)%records)
		if err := s.Add(rc(kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), 1, kv.TypePut, []byte("v"))), uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	got := int64(cap(s.a.idx)) * entrySize
	s.mu.Unlock()
	// The usual step past 64Ki entries (a quarter more) is allowed; the projection (four times the records)
	// is not, beyond the sorter's share.
	if share := (p.budget - p.reserveIO) / sorters; got > max(share, (1<<16+1<<14)*entrySize) {
		t.Fatalf("the index took %d bytes, more than its fair share %d of %d sorters", got, share, sorters)
	}
}
