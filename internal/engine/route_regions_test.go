package engine

import (
	"bytes"
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

// TestRouterSendsEachRecordToItsSorter: with split points known up front (fewer than rangedSplits) and
// two families, router.add hands every record to the sorter of its region (Splits.Region of its row,
// rows sharing a split point's first 8 bytes and rows of 128 bytes and more included) and family, each sorter gets exactly the records
// that belong to it with their seqs, and the KeyValue bytes are counted per family. Records of row
// records (one sorter per region) go by region alone.
func TestRouterSendsEachRecordToItsSorter(t *testing.T) {
	d := cellrec.NewDict([][]byte{[]byte("a"), []byte("b")})
	splits := partition.Splits{[]byte("row0300"), []byte("row0300x"), []byte("row06"), []byte("row1000")}
	fams := []string{"f", "g"}
	rng := rand.New(rand.NewPCG(4, 2))
	type sent struct {
		row  []byte
		fam  int
		seq  uint64
		cell []byte
	}
	var batches []*pipeline.CellBatch
	var all []sent
	var famBytes [2]int64
	seq := uint64(0)
	for range 20 {
		cb := &pipeline.CellBatch{Dict: d}
		for range 1 + rng.IntN(300) {
			row := fmt.Appendf(nil, "row%04d", rng.IntN(1200))
			switch rng.IntN(16) {
			case 0, 1:
				row = append([]byte("row0300"), "x\x00y"[:rng.IntN(4)]...) // ties with a split's prefix
			case 2: // rows of 128 bytes and more: a row length of two varint bytes
				row = append([]byte("row0"), bytes.Repeat([]byte{"2x"[rng.IntN(2)]}, 124+rng.IntN(100))...)
			}
			f := rng.IntN(2)
			rec := cellrec.AppendHeader(nil, row, []byte(fams[f]), 1, kv.TypePut)
			rec = d.AppendCell(rec, 0, fmt.Appendf(nil, "v%d", rng.IntN(1000)))
			seq++
			if err := cb.AppendRecord(rec, uint16(f), seq); err != nil {
				t.Fatal(err)
			}
			famBytes[f] += int64(cb.Records[len(cb.Records)-1].KVBytes)
			_, cells, _ := cellrec.ParseHeader(rec)
			all = append(all, sent{row, f, seq, cells})
		}
		batches = append(batches, cb)
	}
	for _, rows := range []bool{false, true} {
		pool, err := sorter.NewPool(sorter.PoolOptions{Memory: 64 << 20, TempDir: t.TempDir(), Parallelism: 1, Dict: d})
		if err != nil {
			t.Fatal(err)
		}
		var rr *rowRecords
		nf := len(fams)
		if rows {
			rr, nf = &rowRecords{}, 1
		}
		rt := newRouter(&Spec{Splits: splits}, pool, fams, rr)
		if len(rt.sorters) != (len(splits)+1)*nf {
			t.Fatalf("%d sorters, want %d", len(rt.sorters), (len(splits)+1)*nf)
		}
		for _, cb := range batches {
			if err := rt.add(cb); err != nil {
				t.Fatal(err)
			}
		}
		for f := range fams {
			if got := rt.familyBytes[f].Load(); got != famBytes[f] {
				t.Fatalf("rows %v: family %d: %d KeyValue bytes routed, want %d", rows, f, got, famBytes[f])
			}
		}
		for s, srt := range rt.sorters {
			var want []sent
			for _, r := range all {
				target := splits.Region(r.row) * nf
				if !rows {
					target += r.fam
				}
				if target == s {
					want = append(want, r)
				}
			}
			it, err := srt.Finish(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for it.Next() {
				h := it.Header()
				i := slices.IndexFunc(want, func(r sent) bool { return r.seq == it.Seq() })
				if i < 0 || !bytes.Equal(want[i].row, h.Row) || !bytes.Equal(want[i].cell, it.Cells()) {
					t.Fatalf("rows %v: sorter %d yields row %q seq %d, which is not its record", rows, s, h.Row, it.Seq())
				}
				n++
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			it.Close()
			if n != len(want) {
				t.Fatalf("rows %v: sorter %d yields %d records, want %d", rows, s, n, len(want))
			}
		}
		rt.close()
		pool.Close()
	}
}
