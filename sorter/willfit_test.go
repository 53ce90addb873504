package sorter

import (
	"bytes"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// addLone adds n records with rows in a shuffled order to a lone sorter of p and returns what a sorted
// drain must give.
func addLone(t *testing.T, p *Pool, n int) (*Sorter, []rec) {
	t.Helper()
	s := p.NewSorter("lone", SorterOptions{})
	t.Cleanup(func() { s.Close() })
	value := bytes.Repeat([]byte("v"), 100)
	want := make([]rec, 0, n)
	for i := 0; i < n; i++ {
		row := fmt.Appendf(nil, "row-%08d", (i*7919)%n)
		kvb := kv.AppendKeyValue(nil, row, []byte("f"), []byte("q"), 1, kv.TypePut, value)
		if err := s.Add(rc(kvb), uint64(i)); err != nil {
			t.Fatal(err)
		}
		want = append(want, rec{kv: kvb, seq: uint64(i)})
	}
	sort.Slice(want, func(i, j int) bool { return bytes.Compare(want[i].kv, want[j].kv) < 0 })
	return s, want
}

// TestWillFitKeepsALoneSorterInMemory: a lone sorter whose records pass half the arena memory spills
// them early, unless WillFit says the whole input fits; then nothing is spilled. When WillFit is wrong
// the budget still holds: the sorter spills once memory runs out, and the output is the same.
func TestWillFitKeepsALoneSorterInMemory(t *testing.T) {
	const budget = 16 << 20
	const fits = 60_000 // ~10 MiB of records and index: over half the arena memory, under all of it
	t.Run("without", func(t *testing.T) {
		p := newTestPool(t, budget, 2)
		s, want := addLone(t, p, fits)
		if p.Spills() == 0 {
			t.Fatalf("no early spill of %d records (peak %d KiB): the case this test is about does not arise",
				fits, p.PeakBytes()>>10)
		}
		sameRecords(t, drain(t, s), want)
	})
	t.Run("fits", func(t *testing.T) {
		var asked atomic.Int64
		p := newTestPoolOpts(t, PoolOptions{Memory: budget, Parallelism: 2, WillFit: func(arena int64) bool {
			asked.Store(arena)
			return true
		}})
		s, want := addLone(t, p, fits)
		if p.Spills() != 0 {
			t.Fatalf("%d spills although WillFit said the input fits (peak %d KiB)", p.Spills(), p.PeakBytes()>>10)
		}
		if a := asked.Load(); a < p.spillAt {
			t.Fatalf("WillFit was given %d arena bytes, less than the early-spill size %d", a, p.spillAt)
		}
		sameRecords(t, drain(t, s), want)
	})
	t.Run("wrong", func(t *testing.T) {
		p := newTestPoolOpts(t, PoolOptions{Memory: budget, Parallelism: 2, WillFit: func(int64) bool { return true }})
		s, want := addLone(t, p, 3*fits)
		if p.Spills() == 0 {
			t.Fatalf("no spill of %d records, ~3 times the budget", 3*fits)
		}
		if p.PeakBytes() > budget {
			t.Fatalf("peak %d bytes over the budget %d", p.PeakBytes(), budget)
		}
		sameRecords(t, drain(t, s), want)
	})
}
