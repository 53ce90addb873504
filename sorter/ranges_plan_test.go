package sorter

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestFinishRangesPlan: RangesOptions.Plan is called once, after the in-memory remainder is sorted in
// full (also on one processor, where a sort may otherwise leave ascending segments to merge) and
// before it is kept or written: the Opens and Leave it sets decide that, as if given up front. An
// error from Plan comes back as it is, and the sorter's memory with it.
func TestFinishRangesPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	shuffled := sharedPrefixRecords(rng, 3000)
	// Two ascending halves: a sort that is not asked for a whole one leaves them to be merged.
	sorted := reference(shuffled)
	halves := append(append([]rec(nil), sorted[1500:]...), sorted[:1500]...)
	for _, recs := range [][]rec{shuffled, halves} {
		for _, c := range []struct {
			name  string
			opens int
			err   error
		}{{"keep", 2, nil}, {"run", 0, nil}, {"error", 2, errors.New("no plan")}} {
			for _, par := range []int{1, 2} {
				p := newTestPool(t, 8<<20, par)
				base := p.UsedBytes()
				s := p.NewSorter(c.name, SorterOptions{})
				for _, r := range recs {
					if err := s.Add(rc(r.kv), r.seq); err != nil {
						t.Fatal(err)
					}
				}
				calls := 0
				plan := func(o *RangesOptions) error {
					calls++
					if s.a.segs != nil || s.a.lanes != nil {
						t.Errorf("%s, par %d: Plan called before a whole sort", c.name, par)
					}
					for i := 1; i < len(s.a.idx); i++ {
						if s.a.compare(&s.a.idx[i-1], &s.a.idx[i]) > 0 {
							t.Fatalf("%s, par %d: Plan called before the sort: entry %d", c.name, par, i)
						}
					}
					o.Opens, o.Leave = c.opens, 1<<10
					return c.err
				}
				r, err := s.FinishRangesWith(context.Background(), RangesOptions{Plan: plan})
				if calls != 1 {
					t.Fatalf("%s, par %d: Plan called %d times", c.name, par, calls)
				}
				if c.err != nil {
					if err != c.err {
						t.Fatalf("%s, par %d: error %v, want Plan's own", c.name, par, err)
					}
					if held := p.UsedBytes() - p.PooledBytes(); held != base {
						t.Fatalf("%s, par %d: %d bytes held after the failed finish, %d before", c.name, par, held, base)
					}
					if err := s.Close(); err != nil {
						t.Fatalf("%s, par %d: Close after the failed finish: %v", c.name, par, err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if r.mem != (c.opens > 0) || (p.Spills() > 0) == (c.opens > 0) {
					t.Fatalf("%s, par %d: kept in memory %v with %d spills, Plan set %d opens", c.name, par, r.mem, p.Spills(), c.opens)
				}
				got, err := drainRange(t, r, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				sameRecords(t, got, reference(recs))
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}
