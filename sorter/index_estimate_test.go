package sorter

import (
	"fmt"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestIndexEstimateWrong: the index is sized from InputScale's projection of the records to come;
// whatever that projection says, the budget holds, an input that fits is not spilled, one larger than
// the budget is, and the records come out the same. Far too small (the input claimed all read while
// most of it is still to come): the index keeps growing. Far too large (a thousand times the input):
// the index keeps to the sorter's fair share of the budget, or the other sorters would be spilled.
func TestIndexEstimateWrong(t *testing.T) {
	const budget = 24 << 20
	const sorters = 2
	const fits = 90_000 // per sorter: ~14 MiB of records and index for both, half the budget or more
	for _, c := range []struct {
		name  string
		scale float64
		n     int
		spill bool
	}{
		{"far too small, fits", 1, fits, false},
		{"far too large, fits", 1000, fits, false},
		{"far too small, larger than the budget", 1, 4 * fits, true},
		{"far too large, larger than the budget", 1000, 4 * fits, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newTestPoolOpts(t, PoolOptions{Memory: budget, Parallelism: 2,
				WillFit: func(int64) bool { return true }, InputScale: func() float64 { return c.scale }})
			ss := make([]*Sorter, sorters)
			wants := make([][]rec, sorters)
			for i := range ss {
				ss[i] = p.NewSorter(fmt.Sprintf("region%d", i), SorterOptions{})
				defer ss[i].Close()
			}
			seq := uint64(0)
			for n := 0; n < c.n; n++ {
				for i, s := range ss {
					row := fmt.Appendf(nil, "r%d-%08d", i, (n*7919)%c.n)
					kvb := kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), 1, kv.TypePut, []byte("value-of-some-length"))
					if err := s.Add(rc(kvb), seq); err != nil {
						t.Fatal(err)
					}
					wants[i] = append(wants[i], rec{kv: kvb, seq: seq})
					seq++
				}
			}
			for _, s := range ss {
				s.mu.Lock()
				if int64(cap(s.a.idx))*entrySize > (p.budget-p.reserveIO)/sorters+(1<<20) {
					t.Errorf("sorter %s: index of %d entries (%d bytes), more than its fair share of the budget",
						s.name, cap(s.a.idx), int64(cap(s.a.idx))*entrySize)
				}
				s.mu.Unlock()
			}
			if got := p.Spills(); (got > 0) != c.spill {
				t.Errorf("%d spills of %d records per sorter (peak %d KiB of %d KiB)", got, c.n, p.PeakBytes()>>10, budget>>10)
			}
			if p.PeakBytes() > budget {
				t.Errorf("peak %d bytes over the budget %d", p.PeakBytes(), budget)
			}
			for i, s := range ss {
				sameRecords(t, drain(t, s), reference(wants[i]))
			}
		})
	}
}
