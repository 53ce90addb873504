package sorter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// taggedRecords makes n multi-cell records of few rows (so records overlap, spill and merge) under a
// tagged dictionary; every cell of record i carries the tags of seq i (tagsOf), so a cell that comes out
// with another seq's tags, or none, shows that its tags were lost or mixed up on the way.
func taggedRecords(d *cellrec.Dict, rng *rand.Rand, n, rows int) [][]byte {
	quals := []string{"a", "b", "m", "q0", "q2", "z"}
	out := make([][]byte, n)
	for i := range out {
		row := fmt.Appendf(nil, "row%03d", rng.IntN(rows))
		rec := cellrec.AppendHeader(nil, row, []byte("f"), int64(rng.IntN(2)), kv.TypePut)
		picked := rng.Perm(len(quals))[:1+rng.IntN(4)]
		slices.Sort(picked)
		for _, qi := range picked {
			rec = d.AppendQualifierCellTags(rec, []byte(quals[qi]), fmt.Appendf(nil, "v%d", i), tagsOf(uint64(i)))
		}
		out[i] = rec
	}
	return out
}

// tagsOf is the tag list of the cells of seq: a TTL tag, plus a visibility tag on every third seq (and
// none at all on every fifth).
func tagsOf(seq uint64) []byte {
	if seq%5 == 0 {
		return nil
	}
	t := kv.TTLTag(int64(seq) + 1)
	if seq%3 == 0 {
		t, _ = kv.AppendTag(t, 2, []byte{0, 0, 0, 7})
	}
	return t
}

// TestTagsThroughSpillsAndMerges: under a tagged dictionary every cell keeps its own tags through the
// arena, run files and merges; and with a combiner (the merge path that rebuilds single-cell records) a
// folded cell carries the tags of the input whose seq it keeps.
func TestTagsThroughSpillsAndMerges(t *testing.T) {
	d := cellrec.NewTaggedDict([][]byte{[]byte("a"), []byte("m"), []byte("q0")})
	cat := func(dst []byte, _ *cellrec.Header, _, a, b []byte) []byte { return append(append(dst, a...), b...) }
	for _, tc := range []struct {
		name    string
		opts    SorterOptions
		combine bool
	}{{"plain", SorterOptions{}, false}, {"combine", SorterOptions{Combine: cat}, true},
		{"combine-seq-last", SorterOptions{Combine: cat, FoldSeqLast: true}, true}} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 5))
			recs := taggedRecords(d, rng, 6000, 40)
			p := newTestPoolOpts(t, PoolOptions{Memory: 64 << 10, Parallelism: 2, Dict: d})
			s := p.NewSorter("tags", tc.opts)
			for _, i := range rng.Perm(len(recs)) {
				if err := s.Add(recs[i], uint64(i)); err != nil {
					t.Fatal(err)
				}
			}
			it, err := s.Finish(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer it.Close()
			cells, folded := 0, 0
			for it.Next() {
				for c := it.Cells(); len(c) > 0; {
					var q, v, tags []byte
					q, v, tags, c = d.NextTags(c)
					if want := tagsOf(it.Seq()); !bytes.Equal(tags, want) {
						t.Fatalf("cell %s:%s (seq %d, value %q): tags %s, want %s", it.Header().Row, q, it.Seq(), v,
							kv.FormatTags(tags), kv.FormatTags(want))
					}
					if bytes.Count(v, []byte("v")) > 1 {
						folded++
					}
					cells++
				}
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			if p.Spills() == 0 || tc.combine && folded == 0 {
				t.Fatalf("%d spills, %d folded cells: the test does not reach the merge paths", p.Spills(), folded)
			}
			t.Logf("%d cells out (%d folded), %d spills", cells, folded, p.Spills())
		})
	}
}
