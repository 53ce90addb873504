package sorter

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
)

// spanView is one view of a source, copied.
type spanView struct {
	h     cellrec.Header
	cells []byte
	seq   uint64
}

func drainViews(t *testing.T, src source) []spanView {
	t.Helper()
	var out []spanView
	for {
		ok, err := src.next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return out
		}
		v := src.cur()
		out = append(out, spanView{v.h, bytes.Clone(v.cells), v.seq})
	}
}

func sameViews(t *testing.T, what string, got, want []spanView) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d views, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !bytes.Equal(g.h.Row, w.h.Row) || !bytes.Equal(g.h.Family, w.h.Family) || g.h.TS != w.h.TS || g.h.Type != w.h.Type ||
			!bytes.Equal(g.cells, w.cells) || g.seq != w.seq {
			t.Fatalf("%s: view %d = %q/%q ts %d type %d cells %x seq %d, want %q/%q ts %d type %d cells %x seq %d", what, i,
				g.h.Row, g.h.Family, g.h.TS, g.h.Type, g.cells, g.seq, w.h.Row, w.h.Family, w.h.TS, w.h.Type, w.cells, w.seq)
		}
	}
}

// TestRangesInMemorySpanMatchesRangeSource: a range over a sorted remainder kept in memory, with no runs,
// walks only its stretch of the index with a light resolver (the record handed on whole when the next
// one is of another row), and yields exactly the views of the way it was read before: a full resolver
// from the first row at or after lo, each view's row compared with the bounds (rangeSource). The records
// overlap in every way (randMulti) or share short rows and prefixes (randRecords); the bounds are rows of
// the data, rows between them, before the first and after the last; one Open cut with Limit also gives
// each range's views.
func TestRangesInMemorySpanMatchesRangeSource(t *testing.T) {
	for _, data := range []string{"multi", "records"} {
		t.Run(data, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(77, uint64(len(data))))
			p := newTestPool(t, 64<<20, 1)
			s := p.NewSorter("span", SorterOptions{})
			var rows [][]byte
			if data == "multi" {
				for _, m := range randMulti(rng, 6000, 300) {
					if err := s.Add(m.rec, m.seq); err != nil {
						t.Fatal(err)
					}
				}
			} else {
				for _, r := range randRecords(rng, 6000) {
					if err := s.Add(rc(r.kv), r.seq); err != nil {
						t.Fatal(err)
					}
				}
			}
			r := finishRanges(t, s, true)
			defer r.Close()
			if p.Spills() != 0 {
				t.Fatalf("spills = %d, want none", p.Spills())
			}
			a := &s.a
			for i := range a.idx {
				rows = append(rows, a.row(&a.idx[i]))
			}
			bounds := [][]byte{nil, {}, {0}, []byte("\xff\xff\xff")}
			for range 40 {
				row := rows[rng.IntN(len(rows))]
				bounds = append(bounds, row, append(bytes.Clone(row), 0), row[:len(row)/2])
			}
			sortBounds(bounds[1:])
			bounds = append(bounds, nil)
			// old: the views the ranged read yielded before rowSpan (no light, every row compared).
			old := func(lo, hi []byte) []spanView {
				first := 0
				if lo != nil {
					first = sort.Search(len(a.idx), func(i int) bool { return bytes.Compare(a.row(&a.idx[i]), lo) >= 0 })
				}
				return drainViews(t, newRangeSource(newResolverOf(a, &idxOrder{i: first, n: len(a.idx)}), lo, hi))
			}
			var all []spanView
			for i := 0; i+1 < len(bounds); i++ {
				lo, hi := bounds[i], bounds[i+1]
				it, err := r.Open(context.Background(), lo, hi)
				if err != nil {
					t.Fatal(err)
				}
				res, ok := it.src.(*resolver)
				if !ok || !res.light {
					t.Fatalf("range [%q, %q): source %T (light %v), want a light resolver", lo, hi, it.src, ok && res.light)
				}
				want := old(lo, hi)
				got := drainViews(t, it.src)
				sameViews(t, fmt.Sprintf("range %d [%q, %q)", i, lo, hi), got, want)
				it.Close()
				all = append(all, want...)
			}
			if len(all) < 6000 {
				t.Fatalf("%d views over all ranges, want at least the 6000 records", len(all))
			}
			// One Open over everything cut with Limit at each bound.
			it, err := r.Open(context.Background(), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var cut []spanView
			for i := 1; i < len(bounds); i++ {
				it.Limit(bounds[i])
				for it.Next() {
					cut = append(cut, spanView{*it.Header(), bytes.Clone(it.Cells()), it.Seq()})
				}
				if it.Err() != nil {
					t.Fatal(it.Err())
				}
			}
			it.Close()
			sameViews(t, "one Open cut with Limit", cut, all)
			// Limits in any order, also lowered below where the Iterator is (inside a row whose records
			// overlap), with a few views read after each: the same views and stops as an Iterator that
			// compares each view's row with its limit (span off).
			for round := range 20 {
				lo := bounds[rng.IntN(len(bounds)-1)]
				spanIt, err := r.Open(context.Background(), lo, nil)
				if err != nil {
					t.Fatal(err)
				}
				rowIt, err := r.Open(context.Background(), lo, nil)
				if err != nil {
					t.Fatal(err)
				}
				if spanIt.span == nil {
					t.Fatal("Open in memory without runs: no span")
				}
				rowIt.span = nil
				for step := range 60 {
					hi := bounds[1+rng.IntN(len(bounds)-1)]
					spanIt.Limit(hi)
					rowIt.Limit(hi)
					for k := rng.IntN(40); k >= 0; k-- {
						gotOK, wantOK := spanIt.Next(), rowIt.Next()
						if gotOK != wantOK {
							t.Fatalf("round %d step %d: Next %v at limit %q, want %v", round, step, gotOK, hi, wantOK)
						}
						if !gotOK {
							break
						}
						sameViews(t, fmt.Sprintf("round %d step %d limit %q", round, step, hi),
							[]spanView{{*spanIt.Header(), spanIt.Cells(), spanIt.Seq()}}, []spanView{{*rowIt.Header(), rowIt.Cells(), rowIt.Seq()}})
					}
				}
				spanIt.Close()
				rowIt.Close()
			}
			// Cancelled, a span Iterator stops within 1,024 views with the context's error; closed, it
			// yields nothing.
			ctx, cancel := context.WithCancel(context.Background())
			it, err = r.Open(ctx, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkCancelStops(t, it, cancel)
			if it.Next() {
				t.Fatal("Next after Close")
			}
		})
	}
}
