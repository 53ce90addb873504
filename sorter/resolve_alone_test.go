package sorter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// TestLightResolverTiedPrefixes: a light resolver (records handed on whole by alone) yields exactly the
// views of a full one over the same sorted arena, for rows whose cached bytes tie (host-event-revts'
// shape: a 17-byte host and event prefix, then a reversed timestamp), a quarter of them repeated with
// interleaving qualifiers (records of one row that must be merged), in two families.
func TestLightResolverTiedPrefixes(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	quals := []string{"a", "b", "c", "m", "q0", "q1", "z"}
	p := newTestPool(t, 64<<20, 1)
	s := p.NewSorter("tied", SorterOptions{})
	for i := range 6000 {
		row := fmt.Appendf(nil, "host-%03d.dc1|ev%02d|%d", rng.IntN(4), rng.IntN(3), 9223370336854775807-rng.Int64N(400))
		h := cellrec.Header{Row: row, Family: []byte{"fg"[rng.IntN(2)]}, TS: int64(rng.IntN(2)), Type: kv.TypePut}
		picked := rng.Perm(len(quals))[:1+rng.IntN(4)]
		slices.Sort(picked)
		rec := cellrec.AppendHeader(nil, h.Row, h.Family, h.TS, h.Type)
		for _, qi := range picked {
			rec = testDict.AppendQualifierCell(rec, []byte(quals[qi]), fmt.Appendf(nil, "v%d-%d", i, qi))
		}
		if err := s.Add(rec, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	r := finishRanges(t, s, true)
	defer r.Close()
	a := &s.a
	tied, same := 0, 0
	for i := 0; i+1 < len(a.idx); i++ {
		if keyEqual(&a.idx[i], &a.idx[i+1]) {
			if string(a.row(&a.idx[i])) == string(a.row(&a.idx[i+1])) {
				same++
			} else {
				tied++
			}
		}
	}
	if tied < 1000 || same < 500 {
		t.Fatalf("%d neighbours with tied cached bytes and other rows, %d of the same row; the test needs many of each", tied, same)
	}
	full := newResolverOf(a, &idxOrder{n: len(a.idx)})
	light := newResolverOf(a, &idxOrder{n: len(a.idx)})
	light.light = true
	want := drainViews(t, full)
	sameViews(t, "light resolver", drainViews(t, light), want)
	if len(want) < 6000 {
		t.Fatalf("%d views, want at least the 6000 records", len(want))
	}
}
