package sorter

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// drainRange reads one range of r completely.
func drainRange(t *testing.T, r *Ranges, lo, hi []byte) ([]rec, error) {
	it, err := r.Open(context.Background(), lo, hi)
	if err != nil {
		return nil, err
	}
	out, _ := collect(it, r.s.p.Dict())
	err = it.Err()
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	return out, err
}

// finishRanges finishes s for ranges, keeping its sorted remainder in memory with keep (and failing
// the test if it was written as a run after all).
func finishRanges(t *testing.T, s *Sorter, keep bool) *Ranges {
	t.Helper()
	var opts RangesOptions
	if keep {
		opts = RangesOptions{Opens: 2, Leave: 1 << 10}
	}
	r, err := s.FinishRangesWith(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.mem != keep {
		t.Fatalf("remainder kept in memory: %v, want %v", r.mem, keep)
	}
	return r
}

// TestRangesConcatenateToTheWhole: the records of a spilled sorter read back as disjoint row ranges,
// concurrently, are exactly the reference order cut at the range bounds, including bounds that fall
// inside a row's many records, before the first row and after the last; the runs survive every range
// and are removed by Close. With keep the sorted remainder is read in memory beside the runs (two
// Iterators at a time), and Close gives its memory and the reserved read buffers back.
func TestRangesConcatenateToTheWhole(t *testing.T) {
	for _, c := range []struct {
		par  int
		keep bool
	}{{1, false}, {2, false}, {1, true}, {2, true}} {
		par := c.par
		t.Run(fmt.Sprintf("par=%d/keep=%v", par, c.keep), func(t *testing.T) {
			p := newTestPool(t, 512<<10, par)
			s := p.NewSorter("ranges", SorterOptions{})
			rng := rand.New(rand.NewPCG(5, uint64(par)))
			recs := randRecords(rng, 30000)
			for _, r := range recs {
				if err := s.Add(rc(r.kv), r.seq); err != nil {
					t.Fatal(err)
				}
			}
			want := reference(recs)
			r := finishRanges(t, s, c.keep)
			if p.Spills() < 3 {
				t.Fatalf("spills = %d, want several", p.Spills())
			}
			// RunBytes counts every byte written to run files: with no merge pass, exactly what is on disk.
			var onDisk int64
			ents, err := os.ReadDir(p.Dir())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				fi, err := e.Info()
				if err != nil {
					t.Fatal(err)
				}
				onDisk += fi.Size()
			}
			if onDisk == 0 || (p.MergePasses() == 0 && p.RunBytes() != onDisk) || p.RunBytes() < onDisk {
				t.Fatalf("RunBytes = %d, run files hold %d bytes (%d merge passes)", p.RunBytes(), onDisk, p.MergePasses())
			}
			// Bounds: the empty start, rows taken from the data at several points (so a bound equals an
			// existing row with many records), a row between existing ones, and past the end.
			bounds := [][]byte{nil}
			for _, i := range []int{3000, 9000, 15000, 21000, 27000} {
				bounds = append(bounds, kv.Key(kv.KVKey(want[i].kv)).Row())
			}
			bounds = append(bounds, []byte("r01000x"), []byte("\xff\xff"), nil)
			sortBounds(bounds[1 : len(bounds)-1])
			parts := make([][]rec, len(bounds)-1)
			var wg sync.WaitGroup
			errs := make([]error, len(parts))
			for i := range parts {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					parts[i], errs[i] = drainRange(t, r, bounds[i], bounds[i+1])
				}(i)
			}
			wg.Wait()
			var got []rec
			for i, part := range parts {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				for _, x := range part {
					row := kv.Key(kv.KVKey(x.kv)).Row()
					if (bounds[i] != nil && bytes.Compare(row, bounds[i]) < 0) || (bounds[i+1] != nil && bytes.Compare(row, bounds[i+1]) >= 0) {
						t.Fatalf("range %d [%q, %q) yielded row %q", i, bounds[i], bounds[i+1], row)
					}
				}
				got = append(got, part...)
			}
			sameRecords(t, got, want)
			// A range read twice gives the same records (runs are kept).
			again, err := drainRange(t, r, bounds[2], bounds[3])
			if err != nil {
				t.Fatal(err)
			}
			sameRecords(t, again, parts[2])
			// One Open over ranges 1 to the end, cut with Limit, gives each range's records.
			it, err := r.Open(context.Background(), bounds[1], nil)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(parts); i++ {
				it.Limit(bounds[i+1])
				got, _ := collect(it, p.Dict())
				if it.Err() != nil {
					t.Fatal(it.Err())
				}
				sameRecords(t, got, parts[i])
			}
			if it.Next() {
				t.Fatal("Next after the last range")
			}
			it.Close()
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			assertDirEmpty(t, p)
			if u := p.UsedBytes() - p.PooledBytes(); u != p.reserveIO {
				t.Fatalf("after Close %d bytes still accounted, want the I/O reserve %d", u, p.reserveIO)
			}
			if _, err := r.Open(context.Background(), nil, nil); err == nil {
				t.Fatal("Open after Close succeeded")
			}
		})
	}
}

func sortBounds(b [][]byte) {
	for i := 1; i < len(b); i++ {
		for j := i; j > 0 && bytes.Compare(b[j-1], b[j]) > 0; j-- {
			b[j-1], b[j] = b[j], b[j-1]
		}
	}
}

// TestRangesWithCombine: a combiner folds each key once per range, as Finish would, also across the
// runs and the remainder kept in memory.
func TestRangesWithCombine(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep=%v", keep), func(t *testing.T) { testRangesWithCombine(t, keep) })
	}
}

func testRangesWithCombine(t *testing.T, keep bool) {
	p := newTestPool(t, 256<<10, 2)
	// An associative fold: value = a's value, b's value and one byte, so n records fold to n-1 bytes
	// however spills and merges group them.
	count := func(dst []byte, _ *cellrec.Header, _, a, b []byte) []byte {
		return append(append(append(dst, a...), b...), 'x')
	}
	s := p.NewSorter("combine", SorterOptions{Combine: count})
	n := 0
	for round := 0; round < 40; round++ {
		for row := 0; row < 300; row++ {
			kv := kv.AppendKeyValue(nil, fmt.Appendf(nil, "row%04d", row), []byte("f"), []byte("q"), 1, kv.TypePut, nil)
			if err := s.Add(rc(kv), uint64(n)); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	r := finishRanges(t, s, keep)
	defer r.Close()
	if p.Spills() == 0 {
		t.Fatal("no spill: the ranges read only memory")
	}
	total := 0
	for _, b := range [][2][]byte{{nil, []byte("row0100")}, {[]byte("row0100"), []byte("row0250")}, {[]byte("row0250"), nil}} {
		got, err := drainRange(t, r, b[0], b[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range got {
			if v := kv.KVValue(x.kv); len(v) != 39 {
				t.Fatalf("row %s folded to %d, want 39 (40 records)", kv.Key(kv.KVKey(x.kv)).Row(), len(v))
			}
		}
		total += len(got)
	}
	if total != 300 {
		t.Fatalf("%d folded records, want 300", total)
	}
}

// TestRangesKeepOnlyWhatFits: when the memory the caller will need later (Leave) would not stay free
// beside the remainder, the remainder is written as a run as FinishRanges does, and the ranges are
// still the whole.
func TestRangesKeepOnlyWhatFits(t *testing.T) {
	p := newTestPool(t, 512<<10, 2)
	s := p.NewSorter("fits", SorterOptions{})
	recs := randRecords(rand.New(rand.NewPCG(9, 9)), 3000)
	for _, r := range recs {
		if err := s.Add(rc(r.kv), r.seq); err != nil {
			t.Fatal(err)
		}
	}
	spills := p.Spills()
	r, err := s.FinishRangesWith(context.Background(), RangesOptions{Opens: 2, Leave: p.Reservable() - 1<<10})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.mem || p.Spills() != spills+1 {
		t.Fatalf("kept in memory %v, spills %d -> %d: want the remainder written as a run", r.mem, spills, p.Spills())
	}
	got, err := drainRange(t, r, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, reference(recs))
}
