package sorter

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// placeRecords makes n records of rows of 1 to 24 random bytes (zero bytes included: the padding of
// the cached words must not be confused with them) and one to three cells of values of 0 to 150
// bytes, so that the records are shorter than 17 bytes, between 17 and 127, and longer.
func placeRecords(rng *rand.Rand, n int) []Record {
	out := make([]Record, n)
	for i := range out {
		row := make([]byte, 1+rng.IntN(24))
		for j := range row {
			row[j] = byte(rng.IntN(4))
		}
		rec := cellrec.AppendHeader(nil, row, []byte{"fg"[rng.IntN(2)]}, int64(rng.IntN(3)), kv.TypePut)
		for c := range 1 + rng.IntN(3) {
			v := make([]byte, rng.IntN([]int{4, 40, 150}[rng.IntN(3)]))
			for j := range v {
				v[j] = byte(rng.Uint32())
			}
			rec = testDict.AppendCell(rec, c, v)
		}
		out[i] = Record{Rec: rec, Seq: uint64(i)}
	}
	return out
}

// TestPlaceRunMatchesPlaceLocked: records added in batches of 1 to 60 through AddRecords leave the
// same arena (index entries with their cached row words, slabs byte for byte) whether placeRun takes
// the usual ones or placeLocked places every record, across slab changes and index growth; and
// placeRun does take the usual record.
func TestPlaceRunMatchesPlaceLocked(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	recs := placeRecords(rng, 30000)
	p := newTestPool(t, 256<<20, 1)
	fast, slow := p.NewSorter("fast", SorterOptions{}), p.NewSorter("slow", SorterOptions{})
	slow.noPlaceRun = true
	for i := 0; i < len(recs); {
		n := min(1+rng.IntN(60), len(recs)-i)
		for _, s := range []*Sorter{fast, slow} {
			if err := s.AddRecords(recs[i : i+n]); err != nil {
				t.Fatal(err)
			}
		}
		i += n
	}
	if p.Spills() != 0 {
		t.Fatalf("%d spills: the arenas are not comparable", p.Spills())
	}
	if len(fast.a.idx) != len(recs) || len(slow.a.idx) != len(recs) {
		t.Fatalf("index lengths %d and %d, want %d", len(fast.a.idx), len(slow.a.idx), len(recs))
	}
	for i := range fast.a.idx {
		if f, s := fast.a.idx[i], slow.a.idx[i]; f != s {
			t.Fatalf("entry %d: placeRun %+v, placeLocked %+v (record %x)", i, f, s, recs[i].Rec)
		}
		if want := cellrec.Prefix(cellrec.Row(recs[i].Rec)); fast.a.idx[i].prefix != want {
			t.Fatalf("entry %d: prefix %x, want %x", i, fast.a.idx[i].prefix, want)
		}
	}
	if len(fast.a.slabs) != len(slow.a.slabs) || fast.cur != slow.cur || fast.slabUsed != slow.slabUsed ||
		fast.records != slow.records {
		t.Fatalf("slabs %d/%d, current %d/%d, used %d/%d, records %d/%d", len(fast.a.slabs), len(slow.a.slabs),
			fast.cur, slow.cur, fast.slabUsed, slow.slabUsed, fast.records, slow.records)
	}
	for i := range fast.a.slabs {
		if !bytes.Equal(fast.a.slabs[i], slow.a.slabs[i]) {
			t.Fatalf("slab %d differs", i)
		}
	}
	for i := range fast.a.idx {
		if !bytes.Equal(fast.a.record(&fast.a.idx[i]), recs[i].Rec) {
			t.Fatalf("record %d reads back as %x, want %x", i, fast.a.record(&fast.a.idx[i]), recs[i].Rec)
		}
	}
	// A usual record (a 17-byte row, one short cell) after the first is placed by placeRun.
	usual := cellrec.AppendHeader(nil, []byte("customer-00000001"), []byte("f"), 1, kv.TypePut)
	usual = testDict.AppendCell(usual, 0, []byte("v"))
	s := p.NewSorter("usual", SorterOptions{})
	if err := s.Add(usual, 1); err != nil {
		t.Fatal(err)
	}
	if n := s.placeRun([]Record{{Rec: usual, Seq: 2}}); n != 1 {
		t.Fatalf("placeRun placed %d of one usual record", n)
	}
	if s.a.idx[1].next != s.a.idx[0].next || s.records != 2 {
		t.Fatalf("entries %+v, records %d", s.a.idx, s.records)
	}
	// placeRun leaves a record that does not fit the slab's room, or comes while another sorter asks
	// for a spill, to placeLocked, and fills the slab to its last byte.
	withLen := func(n int) []byte {
		r := cellrec.AppendHeader(nil, []byte("customer-00000001"), []byte("f"), 1, kv.TypePut)
		return testDict.AppendCell(r, 0, make([]byte, n-len(r)-2))
	}
	for room := len(s.a.slabs[s.cur]) - s.slabUsed; room > 127; room = len(s.a.slabs[s.cur]) - s.slabUsed {
		if n := s.placeRun([]Record{{Rec: withLen(min(room-100, 127)), Seq: 3}}); n != 1 {
			t.Fatalf("placeRun placed %d records with %d bytes of room", n, room)
		}
	}
	room := len(s.a.slabs[s.cur]) - s.slabUsed
	if n := s.placeRun([]Record{{Rec: withLen(room), Seq: 4}}); n != 0 {
		t.Fatalf("placeRun placed a record of %d bytes with %d bytes of room (its length byte included)", room, room)
	}
	s.pleaseSpill.Store(true)
	if n := s.placeRun([]Record{{Rec: withLen(room - 1), Seq: 4}}); n != 0 {
		t.Fatal("placeRun placed a record while a spill was asked for")
	}
	s.pleaseSpill.Store(false)
	if n := s.placeRun([]Record{{Rec: withLen(room - 1), Seq: 4}}); n != 1 || s.slabUsed != len(s.a.slabs[s.cur]) {
		t.Fatalf("placeRun placed %d records of %d bytes in %d bytes of room, used %d of %d", n, room-1, room,
			s.slabUsed, len(s.a.slabs[s.cur]))
	}
}
