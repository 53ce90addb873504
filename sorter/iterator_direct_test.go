package sorter

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// TestFinishDirectMatchesSource: Finish's Iterator over a fully sorted index in memory, nothing folded,
// calls its light resolver directly (span) and yields the same views and stops as one that goes through
// the source interface and compares every view's row with its limit (span off), with limits raised and
// lowered at random between a few views (into rows whose records overlap: randMulti), and stops within
// 1,024 views of a cancel. Not taken when the index is left in ascending segments or Combine folds.
func TestFinishDirectMatchesSource(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 31))
	multis := randMulti(rng, 6000, 300)
	build := func(opts SorterOptions, ascending bool) *Sorter {
		p := newTestPool(t, 64<<20, 1)
		s := p.NewSorter("direct", opts)
		for i, m := range multis {
			seq := m.seq
			if ascending {
				seq = uint64(i)
			}
			rec := m.rec
			if ascending {
				rec = rc(kv.AppendKeyValue(nil, fmt.Appendf(nil, "row-%06d", i), []byte("f"), []byte("q"), 1, kv.TypePut, nil))
			}
			if err := s.Add(rec, seq); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	finish := func(s *Sorter, ctx context.Context) *Iterator {
		it, err := s.Finish(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return it
	}
	var rows [][]byte
	for _, m := range multis {
		rows = append(rows, cellrec.Row(m.rec))
	}
	for round := range 10 {
		direct, viaSource := finish(build(SorterOptions{}, false), context.Background()), finish(build(SorterOptions{}, false), context.Background())
		if direct.span == nil {
			t.Fatal("Finish over a sorted index in memory: no direct resolver")
		}
		viaSource.span = nil
		n := 0
		for step := range 200 {
			var hi []byte
			if step%50 != 49 {
				hi = append(bytes.Clone(rows[rng.IntN(len(rows))]), "\x00"[:rng.IntN(2)]...)
			}
			direct.Limit(hi)
			viaSource.Limit(hi)
			for k := rng.IntN(80); k >= 0; k-- {
				gotOK, wantOK := direct.Next(), viaSource.Next()
				if gotOK != wantOK {
					t.Fatalf("round %d step %d: Next %v at limit %q, want %v", round, step, gotOK, hi, wantOK)
				}
				if !gotOK {
					break
				}
				n++
				sameViews(t, fmt.Sprintf("round %d step %d limit %q", round, step, hi),
					[]spanView{{*direct.Header(), direct.Cells(), direct.Seq()}}, []spanView{{*viaSource.Header(), viaSource.Cells(), viaSource.Seq()}})
			}
		}
		if n < 1000 {
			t.Fatalf("round %d: only %d views compared", round, n)
		}
		direct.Close()
		viaSource.Close()
	}
	// Without limits (one set to nil: to the end of the index), to the end: every view, also of rows
	// that each have one record (ascending: the last record is handed on alone).
	for _, ascending := range []bool{false, true} {
		direct, viaSource := finish(build(SorterOptions{}, ascending), context.Background()), finish(build(SorterOptions{}, ascending), context.Background())
		viaSource.span = nil
		direct.Limit(nil)
		viaSource.Limit(nil)
		all := 0
		for {
			gotOK, wantOK := direct.Next(), viaSource.Next()
			if gotOK != wantOK {
				t.Fatalf("ascending %v, view %d: Next %v, want %v", ascending, all, gotOK, wantOK)
			}
			if !gotOK {
				break
			}
			sameViews(t, fmt.Sprintf("ascending %v, view %d", ascending, all), []spanView{{*direct.Header(), direct.Cells(), direct.Seq()}},
				[]spanView{{*viaSource.Header(), viaSource.Cells(), viaSource.Seq()}})
			all++
		}
		if all < len(multis) || direct.Err() != nil || viaSource.Err() != nil {
			t.Fatalf("ascending %v: %d views to the end, errors %v, %v", ascending, all, direct.Err(), viaSource.Err())
		}
		direct.Close()
		viaSource.Close()
	}
	// Cancelled: stops within 1,024 views with the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	checkCancelStops(t, finish(build(SorterOptions{}, false), ctx), cancel)
	// Ascending input is left as it is (one segment: the index is sorted) and read directly; Combine
	// folds through the source.
	if it := finish(build(SorterOptions{}, true), context.Background()); it.span == nil {
		t.Fatal("ascending input: no direct resolver")
	} else {
		it.Close()
	}
	keepFirst := func(dst []byte, _ *cellrec.Header, _, a, _ []byte) []byte { return append(dst, a...) }
	if it := finish(build(SorterOptions{Combine: keepFirst}, false), context.Background()); it.span != nil {
		t.Fatal("Combine: a direct resolver")
	} else {
		it.Close()
	}
}

// checkCancelStops reads one view of it, cancels its context and checks that it stops within 1,024 more
// views with the context's error; it closes it.
func checkCancelStops(t *testing.T, it *Iterator, cancel context.CancelFunc) {
	t.Helper()
	it.Next()
	cancel()
	n := 0
	for it.Next() {
		n++
	}
	if it.Err() != context.Canceled || n > 1024 {
		t.Fatalf("after cancel: %d more views, Err %v", n, it.Err())
	}
	it.Close()
}
