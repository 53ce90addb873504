package sorter

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// multi is a multi-cell record with the KeyValues of its cells.
type multi struct {
	rec []byte
	kvs [][]byte
	seq uint64
}

// randMulti makes n records of 1..6 cells over few rows, so that records of one row and family overlap
// in every way: the same row twice (duplicates), interleaving qualifier sets, different timestamps and
// types within a row, dictionary and literal qualifiers.
func randMulti(rng *rand.Rand, n, rows int) []multi {
	quals := []string{"a", "b", "c", "m", "q0", "q1", "q2", "z"}
	out := make([]multi, n)
	for i := range out {
		row := fmt.Appendf(nil, "row%03d", rng.IntN(rows))
		if rng.IntN(5) == 0 {
			row = fmt.Appendf(nil, "a-much-longer-row-%d", rng.IntN(rows)) // equal 8-byte prefixes
		}
		h := cellrec.Header{Row: row, Family: []byte{"fg"[rng.IntN(2)]}, TS: int64(rng.IntN(3)), Type: kv.TypePut}
		if rng.IntN(6) == 0 {
			h.Type = kv.TypeDelete
		}
		k := 1 + rng.IntN(6)
		picked := rng.Perm(len(quals))[:k]
		slices.Sort(picked)
		rec := cellrec.AppendHeader(nil, h.Row, h.Family, h.TS, h.Type)
		m := multi{seq: uint64(i)}
		for _, qi := range picked {
			val := fmt.Appendf(nil, "v%d-%d", i, qi)
			rec = testDict.AppendQualifierCell(rec, []byte(quals[qi]), val)
			m.kvs = append(m.kvs, cellrec.AppendKeyValue(nil, &h, []byte(quals[qi]), val))
		}
		m.rec = rec
		out[i] = m
	}
	return out
}

// cellsOf is the reference input: every cell with its record's seq.
func cellsOf(ms []multi) []rec {
	var out []rec
	for _, m := range ms {
		for _, kvb := range m.kvs {
			out = append(out, rec{kvb, m.seq})
		}
	}
	return out
}

// checkViews drains it and checks that every view's cells ascend strictly, returning the cells.
func checkViews(t *testing.T, it *Iterator, d *cellrec.Dict) ([]rec, int) {
	t.Helper()
	var out []rec
	views := 0
	for it.Next() {
		views++
		h := it.Header()
		var prev []byte
		for cells := it.Cells(); len(cells) > 0; {
			var q, v []byte
			q, v, cells = d.Next(cells)
			kvb := cellrec.AppendKeyValue(nil, h, q, v)
			if prev != nil && kv.CompareKeyValues(prev, kvb) >= 0 {
				t.Fatalf("view %d: cells not strictly ascending: %s then %s", views,
					kv.Key(kv.KVKey(prev)), kv.Key(kv.KVKey(kvb)))
			}
			prev = kvb
			out = append(out, rec{kvb, it.Seq()})
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return out, views
}

// TestOverlappingRecordsMatchCellReference: records whose cells interleave with other records of the
// same row come out cell for cell in exactly the order a sort of all their cells by (key, seq) gives, in
// memory, spilled, with merge passes and with several spilling goroutines.
func TestOverlappingRecordsMatchCellReference(t *testing.T) {
	for _, tc := range []struct {
		mem  int64
		par  int
		rows int
	}{
		{64 << 10, 1, 40}, {256 << 10, 2, 40}, {16 << 20, 2, 40}, {256 << 10, 2, 3}, {16 << 20, 1, 1},
	} {
		t.Run(fmt.Sprintf("mem=%d/par=%d/rows=%d", tc.mem, tc.par, tc.rows), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.mem), uint64(tc.rows)))
			ms := randMulti(rng, 12000, tc.rows)
			p := newTestPool(t, tc.mem, tc.par)
			s := p.NewSorter("multi", SorterOptions{})
			it := addAndFinish(t, s, ms, rng.Perm(len(ms)))
			got, views := checkViews(t, it, p.Dict())
			sameRecords(t, got, reference(cellsOf(ms)))
			if pk := p.PeakBytes(); pk > tc.mem {
				t.Errorf("peak accounted %d > budget %d", pk, tc.mem)
			}
			assertDirEmpty(t, p)
			t.Logf("%d records, %d cells, %d views; spills %d, passes %d", len(ms), len(got), views, p.Spills(), p.MergePasses())
		})
	}
}

// TestDisjointRecordsStayWhole: records of distinct rows come out as one view each, through memory
// and through spills and merges (the cheap path: one sort entry and one heap step per record).
func TestDisjointRecordsStayWhole(t *testing.T) {
	for _, mem := range []int64{16 << 20, 128 << 10} {
		rng := rand.New(rand.NewPCG(8, uint64(mem)))
		var ms []multi
		for _, r := range rng.Perm(5000) {
			m := randMulti(rng, 1, 1)[0]
			h, cells, _ := cellrec.ParseHeader(m.rec)
			h.Row = fmt.Appendf(nil, "row%06d", r)
			m.rec = cellrec.AppendRecord(nil, &h, cells)
			m.kvs = nil
			for c := cells; len(c) > 0; {
				var q, v []byte
				q, v, c = testDict.Next(c)
				m.kvs = append(m.kvs, cellrec.AppendKeyValue(nil, &h, q, v))
			}
			m.seq = uint64(len(ms))
			ms = append(ms, m)
		}
		p := newTestPool(t, mem, 2)
		s := p.NewSorter("disjoint", SorterOptions{})
		it := addAndFinish(t, s, ms, nil)
		got, views := checkViews(t, it, p.Dict())
		sameRecords(t, got, reference(cellsOf(ms)))
		if views != len(ms) {
			t.Fatalf("budget %d: %d views for %d disjoint records, want one each", mem, views, len(ms))
		}
		if mem == 128<<10 && p.Spills() == 0 {
			t.Fatal("expected spills")
		}
	}
}

// TestInterleavedWideRowWithinBudget: one row built from 200,000 records of two cells each whose
// qualifiers interleave with every other record's ("cpu:<i>", "mem:<i>"), the pattern of a time-series
// row with several metrics per input row. Every record overlaps every other: the resolver merges them
// all cell by cell, within the budget.
func TestInterleavedWideRowWithinBudget(t *testing.T) {
	const n = 200_000
	const mem = 8 << 20
	p := newTestPool(t, mem, 2)
	s := p.NewSorter("wide", SorterOptions{})
	rng := rand.New(rand.NewPCG(5, 5))
	var q [12]byte
	for i, v := range rng.Perm(n) {
		rec := cellrec.AppendHeader(nil, []byte("metrics|host1|day"), []byte("t"), 7, kv.TypePut)
		for _, m := range []string{"cpu:", "mem:"} {
			copy(q[:], m)
			binary.BigEndian.PutUint64(q[4:], uint64(v))
			rec = cellrec.AppendLiteralCell(rec, q[:], q[4:])
		}
		if err := s.Add(rec, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	j := 0
	var prev []byte
	for it.Next() {
		for cells := it.Cells(); len(cells) > 0; {
			var qual []byte
			qual, _, cells = p.Dict().Next(cells)
			if prev != nil && bytes.Compare(prev, qual) >= 0 {
				t.Fatalf("cell %d: %q after %q", j, qual, prev)
			}
			prev = append(prev[:0], qual...)
			j++
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	it.Close()
	if j != 2*n {
		t.Fatalf("%d cells, want %d", j, 2*n)
	}
	if p.Spills() == 0 {
		t.Fatal("expected spills")
	}
	if pk := p.PeakBytes(); pk > mem {
		t.Fatalf("peak accounted %d > budget %d", pk, mem)
	}
	assertDirEmpty(t, p)
}

// TestCombineFoldsAcrossOverlappingRecords: multi-cell records of few rows with Combine: every key comes
// out once, its value the fold of all its cells, with the seq of the group's first cell. (Partial groups
// from different runs are folded in the order of their first seqs, so the fold here is commutative: the
// sum of the members' seqs, which shows whether each cell was folded exactly once.)
func TestCombineFoldsAcrossOverlappingRecords(t *testing.T) {
	for _, mem := range []int64{64 << 10, 16 << 20} {
		rng := rand.New(rand.NewPCG(31, uint64(mem)))
		ms := randMulti(rng, 8000, 25)
		cat := func(dst []byte, _ *cellrec.Header, _, a, b []byte) []byte {
			return fmt.Appendf(dst, "s%d", seqSum(a)+seqSum(b))
		}
		p := newTestPool(t, mem, 2)
		s := p.NewSorter("combine", SorterOptions{Combine: cat})
		it := addAndFinish(t, s, ms, rng.Perm(len(ms)))
		got, _ := checkViews(t, it, p.Dict())
		// Reference: group the reference order by key.
		ref := reference(cellsOf(ms))
		var want []rec
		for i := 0; i < len(ref); {
			j := i + 1
			val := slices.Clone(kv.KVValue(ref[i].kv))
			sum := seqSum(val)
			for j < len(ref) && bytes.Equal(kv.KVKey(ref[j].kv), kv.KVKey(ref[i].kv)) {
				sum += seqSum(kv.KVValue(ref[j].kv))
				j++
			}
			if j > i+1 {
				val = fmt.Appendf(nil, "s%d", sum)
			}
			k := kv.Key(kv.KVKey(ref[i].kv))
			want = append(want, rec{kv.AppendKeyValue(nil, k.Row(), k.Family(), k.Qualifier(), k.Timestamp(), k.Type(), val), ref[i].seq})
			i = j
		}
		if len(want) == len(ref) {
			t.Fatal("test data has no equal keys to fold")
		}
		sameRecords(t, got, want)
		assertDirEmpty(t, p)
		t.Logf("budget %d: %d cells folded to %d; spills %d", mem, len(ref), len(got), p.Spills())
	}
}

// TestRangesOfOverlappingRecords: range merges over runs of multi-cell records give the reference cells.
func TestRangesOfOverlappingRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 41))
	ms := randMulti(rng, 10000, 60)
	p := newTestPool(t, 128<<10, 2)
	s := p.NewSorter("ranges", SorterOptions{})
	for _, m := range ms {
		if err := s.Add(m.rec, m.seq); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.FinishRanges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []rec
	bounds := [][]byte{nil, []byte("a-much-longer-row-30"), []byte("row010"), []byte("row030"), []byte("row031"), nil}
	for i := 0; i+1 < len(bounds); i++ {
		part, err := drainRange(t, r, bounds[i], bounds[i+1])
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, part...)
	}
	sameRecords(t, got, reference(cellsOf(ms)))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	assertDirEmpty(t, p)
}

// seqSum reads a randMulti value ("v<seq>-<qualifier>") or a folded one ("s<sum>").
func seqSum(v []byte) int64 {
	var n int64
	for _, c := range v[1:] {
		if c < '0' || c > '9' {
			break
		}
		n = 10*n + int64(c-'0')
	}
	return n
}

// addAndFinish adds the records of ms to s, in the order of the indexes in order (nil: as they are), and
// finishes it.
func addAndFinish(t *testing.T, s *Sorter, ms []multi, order []int) *Iterator {
	t.Helper()
	if order == nil {
		order = make([]int, len(ms))
		for i := range order {
			order[i] = i
		}
	}
	for _, i := range order {
		if err := s.Add(ms[i].rec, ms[i].seq); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return it
}
