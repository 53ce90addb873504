package sorter

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortSmallMatchesCompare: the small-bucket quicksort puts entries exactly where sorting by
// arena.compare does (the order is total: compare ends with seq, then the value), for every length up
// to past radixCutoff, on the seeds' key shapes with long ties (records read on ties of the cached
// words), on sorted, reversed and all-tied input.
func TestSortSmallMatchesCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	p := newTestPool(t, 32<<20, 1)
	s := p.NewSorter("small", SorterOptions{})
	for _, r := range sharedPrefixRecords(rng, 3000) {
		if err := s.Add(rc(r.kv), r.seq); err != nil {
			t.Fatal(err)
		}
	}
	a := &s.a
	byCompare := func(v []entry) []entry {
		w := slices.Clone(v)
		slices.SortFunc(w, func(x, y entry) int { return a.compare(&x, &y) })
		return w
	}
	check := func(what string, v []entry) {
		t.Helper()
		want := byCompare(v)
		got := slices.Clone(v)
		a.sortSmall(got)
		if i := firstDiff(got, want); i >= 0 {
			t.Fatalf("%s, %d entries: entry %d differs from the comparison sort", what, len(v), i)
		}
	}
	sorted := byCompare(a.idx)
	for n := 0; n <= 2*radixCutoff; n++ {
		for k := 0; k < 20; k++ {
			v := make([]entry, n)
			for i := range v {
				v[i] = a.idx[rng.IntN(len(a.idx))]
			}
			check("random", v)
		}
		from := rng.IntN(len(sorted) - n)
		asc := slices.Clone(sorted[from : from+n])
		check("sorted", asc)
		slices.Reverse(asc)
		check("reversed", asc)
	}
	// All cached words tied: rows sharing their first 16 bytes ("sixteen-byte-key..." records).
	var tied []entry
	for i := range a.idx {
		if a.idx[i].prefix == sorted[len(sorted)-1].prefix && a.idx[i].next == sorted[len(sorted)-1].next {
			tied = append(tied, a.idx[i])
		}
	}
	if len(tied) < radixCutoff {
		t.Fatalf("only %d entries tie on their cached words", len(tied))
	}
	for n := 2; n <= len(tied); n += 7 {
		rng.Shuffle(len(tied), func(i, j int) { tied[i], tied[j] = tied[j], tied[i] })
		check("tied", tied[:n])
	}
}

// TestFirstDiffByte: the one-pass skip of shared bytes finds the byte a byte-by-byte scan finds.
func TestFirstDiffByte(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 12))
	byteAt := func(e *entry, d int) byte { return byte(e.digit(d)) }
	for k := 0; k < 2000; k++ {
		n := 1 + rng.IntN(5)
		base := entry{prefix: rng.Uint64(), next: rng.Uint64()}
		v := make([]entry, n)
		for i := range v {
			v[i] = base
			if rng.IntN(2) == 0 { // change one byte of one word
				d := rng.IntN(16)
				if d < 8 {
					v[i].prefix ^= uint64(1+rng.IntN(255)) << (56 - 8*d)
				} else {
					v[i].next ^= uint64(1+rng.IntN(255)) << (56 - 8*(d-8))
				}
			}
		}
		for depth := 0; depth <= 16; depth++ {
			want := 16
		scan:
			for d := depth; d < 16; d++ {
				for i := range v {
					if byteAt(&v[i], d) != byteAt(&v[0], d) {
						want = d
						break scan
					}
				}
			}
			if got := firstDiffByte(v, depth); got != want {
				t.Fatalf("entries %x, from byte %d: first differing byte %d, want %d", v, depth, got, want)
			}
		}
	}
}
