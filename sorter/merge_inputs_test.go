package sorter

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// flipSource hands on its source's views from two buffers in turn: a source whose cur is a different
// view after each next, as the source contract allows.
type flipSource struct {
	src  source
	bufs [2]view
	k    int
}

func (f *flipSource) next() (bool, error) {
	ok, err := f.src.next()
	if ok {
		f.k ^= 1
		f.bufs[f.k] = *f.src.cur()
	}
	return ok, err
}

func (f *flipSource) cur() *view { return &f.bufs[f.k] }

// The merger keeps each input's current view next to it and takes it again after every next of that
// input: inputs whose cur moves from view to view merge exactly as inputs whose cur stays put. The
// records overlap in every way (randMulti), so views are cut and dropped cell by cell too.
func TestMergerRereadsItsInputsViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 5))
	ms := randMulti(rng, 3000, 200)
	p := newTestPool(t, 64<<20, 1)
	const parts = 4
	var arenas []*arena
	for k := range parts {
		s := p.NewSorter(fmt.Sprint("part", k), SorterOptions{})
		for i := k; i < len(ms); i += parts {
			if err := s.Add(ms[i].rec, ms[i].seq); err != nil {
				t.Fatal(err)
			}
		}
		r := finishRanges(t, s, true)
		defer r.Close()
		arenas = append(arenas, &s.a)
	}
	merge := func(flip bool) []spanView {
		m := newMergerOf(p.dict)
		for _, a := range arenas {
			var src source = newResolverOf(a, &idxOrder{i: 0, n: len(a.idx)})
			if flip {
				src = &flipSource{src: src}
			}
			m.add(src)
		}
		return drainViews(t, m)
	}
	want := merge(false)
	if len(want) < len(ms) {
		t.Fatalf("%d views of %d records", len(want), len(ms))
	}
	sameViews(t, "merge of inputs whose views move", merge(true), want)
}
