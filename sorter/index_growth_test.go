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
