package sorter

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// TestResolverPrefetchEdges: prefetch asks only for records of the index, from any position (near and
// past the last: nothing there to ask for), over records in several slabs, records that end a slab
// among them; and a light resolver started at each of the last positions of the index, where
// fetch's prefetch reaches past the end, yields exactly the views of those records that a full resolver
// over the whole index yields.
func TestResolverPrefetchEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 7))
	p := newTestPool(t, 64<<20, 1)
	s := p.NewSorter("prefetch", SorterOptions{})
	const n = 3000
	for i := range n {
		row := fmt.Appendf(nil, "row-%06d-%04d", rng.IntN(1<<20), i)
		rec := cellrec.AppendHeader(nil, row, []byte("f"), 1, kv.TypePut)
		// Values up to 4 KiB: records from a few bytes to several cache lines, and several slabs.
		rec = testDict.AppendQualifierCell(rec, []byte("q"), make([]byte, rng.IntN(4<<10)))
		if err := s.Add(rec, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	r := finishRanges(t, s, true)
	defer r.Close()
	a := &s.a
	if len(a.slabs) < 2 || len(a.idx) != n {
		t.Fatalf("%d slabs, %d records: the test needs records in several slabs", len(a.slabs), len(a.idx))
	}
	res := newResolverOf(a, &idxOrder{n: len(a.idx)})
	for from := 0; from <= len(a.idx)+prefetchAhead; from++ {
		res.prefetch(from) // must not index outside the index or a slab
	}
	want := drainViews(t, newResolverOf(a, &idxOrder{n: len(a.idx)}))
	if len(want) != n {
		t.Fatalf("%d views, want %d", len(want), n)
	}
	for first := len(a.idx) - 2*prefetchDist - prefetchAhead; first <= len(a.idx); first++ {
		light := newResolverOf(a, &idxOrder{i: first, n: len(a.idx)})
		light.light = true
		sameViews(t, fmt.Sprintf("light resolver from %d", first), drainViews(t, light), want[first:])
	}
}
