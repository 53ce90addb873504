package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// routedView is one view of a sorter's Iterator, copied.
type routedView struct {
	row, family []byte
	ts          int64
	typ         kv.Type
	cells       []byte
	seq         uint64
}

// TestRouterOneSorterMatchesPerSorterLists: with one sorter (one family, split points for the ranged
// sort or computed ones; or row records) router.add hands a batch's records to it in batch order
// without a routing step per record, and the sorter then yields the same views, in the same order, with
// the same bytes per family counted (and with computed splits the same splits), as through the
// per-sorter lists (noSingle). Batches hold rows repeated across and within batches, equal keys with
// different seqs, and records of several cells.
func TestRouterOneSorterMatchesPerSorterLists(t *testing.T) {
	for _, sample := range []bool{false, true} {
		t.Run(fmt.Sprintf("sample=%v", sample), func(t *testing.T) { testRouterOneSorter(t, sample) })
	}
}

func testRouterOneSorter(t *testing.T, sample bool) {
	d := cellrec.NewDict([][]byte{[]byte("a"), []byte("b")})
	var splits partition.Splits
	for i := range rangedSplits + 4 {
		splits = append(splits, fmt.Appendf(nil, "row%03d", 10*i))
	}
	rng := rand.New(rand.NewPCG(3, 9))
	var batches []*pipeline.CellBatch
	seq := uint64(0)
	for range 30 {
		cb := &pipeline.CellBatch{Dict: d}
		for range 1 + rng.IntN(400) {
			row := fmt.Appendf(nil, "row%03d", rng.IntN(250))
			rec := cellrec.AppendHeader(nil, row, []byte("f"), int64(rng.IntN(2)), kv.TypePut)
			for q := range 1 + rng.IntN(2) {
				rec = d.AppendCell(rec, q, fmt.Appendf(nil, "v%d", rng.IntN(1000)))
			}
			if rng.IntN(4) > 0 {
				seq++
			}
			if err := cb.AppendRecord(rec, 0, seq); err != nil {
				t.Fatal(err)
			}
		}
		batches = append(batches, cb)
	}
	spec := &Spec{Splits: splits}
	if sample {
		spec = &Spec{SplitSample: 40}
	}
	run := func(noSingle bool) ([]routedView, int64, partition.Splits) {
		pool, err := sorter.NewPool(sorter.PoolOptions{Memory: 64 << 20, TempDir: t.TempDir(), Parallelism: 1, Dict: d})
		if err != nil {
			t.Fatal(err)
		}
		defer pool.Close()
		rt := newRouter(spec, pool, []string{"f"}, nil)
		defer rt.close()
		if len(rt.sorters) != 1 {
			t.Fatalf("%d sorters, want 1", len(rt.sorters))
		}
		rt.noSingle = noSingle
		for _, cb := range batches {
			if err := rt.add(cb); err != nil {
				t.Fatal(err)
			}
		}
		it, err := rt.sorters[0].Finish(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		var out []routedView
		for it.Next() {
			h := it.Header()
			out = append(out, routedView{slices.Clone(h.Row), slices.Clone(h.Family), h.TS, h.Type, slices.Clone(it.Cells()), it.Seq()})
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		var sp partition.Splits
		if sample {
			sp = rt.sampler.Splits(spec.SplitSample)
		}
		return out, rt.totalBytes(), sp
	}
	got, gotBytes, gotSplits := run(false)
	want, wantBytes, wantSplits := run(true)
	if sample && (len(gotSplits) < 10 || fmt.Sprint(gotSplits) != fmt.Sprint(wantSplits)) {
		t.Fatalf("computed splits %q, per-sorter lists %q", gotSplits, wantSplits)
	}
	if gotBytes != wantBytes || gotBytes == 0 {
		t.Fatalf("routed %d KeyValue bytes, per-sorter lists %d", gotBytes, wantBytes)
	}
	if len(got) != len(want) || len(got) < 1000 {
		t.Fatalf("%d views, per-sorter lists %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if string(g.row) != string(w.row) || string(g.family) != string(w.family) || g.ts != w.ts || g.typ != w.typ ||
			string(g.cells) != string(w.cells) || g.seq != w.seq {
			t.Fatalf("view %d: %+v, per-sorter lists %+v", i, g, w)
		}
	}
}
