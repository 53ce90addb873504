package sorter

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// testView is a view to write to a run and what reading it back must give.
type testView struct {
	row, family []byte
	ts          int64
	typ         kv.Type
	cells       []byte
	seq         uint64
}

func (tv *testView) view() *view {
	v := &view{}
	h := cellrec.Header{Row: tv.row, Family: tv.family, TS: tv.ts, Type: tv.typ}
	v.set(testDict, &h, tv.cells, tv.seq)
	return v
}

// writeTestRun writes views to a run with the given chunk size and returns it.
func writeTestRun(t *testing.T, p *Pool, chunk int, views []testView) *runInfo {
	t.Helper()
	w, err := p.createRun(&slot{})
	if err != nil {
		t.Fatal(err)
	}
	w.chunk = chunk
	for i := range views {
		if err := w.add(views[i].view()); err != nil {
			t.Fatal(err)
		}
	}
	info, err := w.finish()
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// Entries are encoded against the previous entry of their chunk (shared row prefix, seq delta, header
// only when it changes): every combination reads back exactly, across chunk boundaries and oversized
// records.
func TestRunEntriesRoundTrip(t *testing.T) {
	cells := func(vals ...string) []byte {
		var b []byte
		for i, v := range vals {
			b = cellrec.AppendLiteralCell(b, fmt.Appendf(nil, "c%02d", i), []byte(v))
		}
		return b
	}
	big := strings.Repeat("x", 3000)
	views := []testView{
		{[]byte("row-0001"), []byte("d"), 7, kv.TypePut, cells("a", "b"), 100},
		{[]byte("row-0002"), []byte("d"), 7, kv.TypePut, cells("c"), 101},              // shared prefix, same header
		{[]byte("row-0002"), []byte("d"), 7, kv.TypePut, cells("d"), 5},                // same row, seq goes back
		{[]byte("row-0002"), []byte("d"), 6, kv.TypePut, cells("e"), 6},                // timestamp changes
		{[]byte("row-0002"), []byte("d"), 6, kv.TypeDelete, cells(""), math.MaxUint64}, // type changes, huge seq
		{[]byte("row-0002x"), []byte("e"), 6, kv.TypeDelete, cells("f"), 0},            // family changes, row grows
		{[]byte("row-1"), []byte("e"), 6, kv.TypeDelete, cells("g"), 1},                // row shrinks
		{[]byte(""), []byte(""), math.MinInt64, kv.TypePut, cells("h"), 2},             // empty row and family
		{[]byte("s"), []byte("e"), 1, kv.TypePut, cells(big), 3},                       // oversized: a chunk of its own
		{[]byte("s"), []byte("e"), 1, kv.TypePut, cells("i"), 4},                       // after it, a fresh chunk
	}
	for i := range 200 { // enough to fill several small chunks
		views = append(views, testView{fmt.Appendf(nil, "t%06d", i*7), []byte("e"), 1, kv.TypePut,
			cells(fmt.Sprint(i), "v"), uint64(1000 + i)})
	}
	// Rows that share any number of bytes with the previous one, within and past a row prefix's eight
	// (zero bytes, as its padding), suffixes short and long, cells of one- and two-byte lengths, seqs
	// that go back: what runReader.nextUsual reads, and what it leaves to nextEntry.
	rng := rand.New(rand.NewPCG(22, 1))
	var rnd []testView
	for i := range 1500 {
		row := []byte("u")
		for range rng.IntN(24) {
			row = append(row, []byte{0, 0, 1, 'a', 0xff}[rng.IntN(5)])
		}
		rnd = append(rnd, testView{row, []byte("e"), 1, kv.TypePut, cells(strings.Repeat("w", rng.IntN(200))),
			uint64(5000 + i + rng.IntN(40))})
	}
	slices.SortStableFunc(rnd, func(a, b testView) int { return bytes.Compare(a.row, b.row) })
	views = append(views, rnd...)
	p := newTestPool(t, 1<<20, 1)
	info := writeTestRun(t, p, 512, views)
	if len(info.chunks) < 5 {
		t.Fatalf("%d chunks, want several", len(info.chunks))
	}
	r, err := openRun(context.Background(), testDict, info)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	for i, want := range views {
		ok, err := r.next()
		if err != nil || !ok {
			t.Fatalf("entry %d: ok %v, err %v", i, ok, err)
		}
		v := r.cur()
		if !bytes.Equal(v.h.Row, want.row) || !bytes.Equal(v.h.Family, want.family) || v.h.TS != want.ts ||
			v.h.Type != want.typ || !bytes.Equal(v.cells, want.cells) || v.seq != want.seq {
			t.Fatalf("entry %d: got row %q family %q ts %d type %v seq %d cells %d bytes, want %q %q %d %v %d %d bytes",
				i, v.h.Row, v.h.Family, v.h.TS, v.h.Type, v.seq, len(v.cells), want.row, want.family, want.ts, want.typ, want.seq, len(want.cells))
		}
		if q, val, _ := testDict.Next(want.cells); v.prefix != cellrec.Prefix(want.row) || !bytes.Equal(v.q, q) || !bytes.Equal(v.v, val) {
			t.Fatalf("entry %d (row %q): row prefix %x, first cell %q=%q; want %x, %q=%q", i, want.row, v.prefix, v.q, v.v, cellrec.Prefix(want.row), q, val)
		}
	}
	if ok, err := r.next(); ok || err != nil {
		t.Fatalf("after the last entry: ok %v, err %v", ok, err)
	}
	if info.records != int64(len(views)) {
		t.Errorf("run records %d, want %d", info.records, len(views))
	}
}

// The rows of an export ordered by a numeric key, as a run holds them, take much less room than the
// records the sorter was given (uvarint(seq) | uvarint(length) | record each).
func TestRunEntriesAreCompact(t *testing.T) {
	d := cellrec.NewDict([][]byte{[]byte("amount"), []byte("customer"), []byte("status")})
	var views []testView
	records := 0
	for i := range 5000 {
		row := fmt.Appendf(nil, "%d", 1000000+i)
		var c []byte
		c = d.AppendCell(c, 0, fmt.Appendf(nil, "%d.%02d", i%997, i%100))
		c = d.AppendCell(c, 1, fmt.Appendf(nil, "%d", i*31%100000))
		c = d.AppendCell(c, 2, []byte("SHIPPED"))
		tv := testView{row, []byte("d"), 1700000000000, kv.TypePut, c, uint64(i)}
		records += uvarintLen(tv.seq) + len(cellrec.AppendHeader(nil, row, tv.family, tv.ts, tv.typ)) + len(c) + 1
		views = append(views, tv)
	}
	p := newTestPoolOpts(t, PoolOptions{Memory: 1 << 20, Parallelism: 1, Dict: d})
	info := writeTestRun(t, p, 64<<10, views)
	t.Logf("records %d bytes, run %d bytes (%.2f)", records, info.size, float64(info.size)/float64(records))
	if float64(info.size) > 0.75*float64(records) {
		t.Errorf("run of %d bytes for %d bytes of records: entries are not encoded against the previous one", info.size, records)
	}
}

// A chunk whose CRC matches but whose entries do not parse is an error, not a panic or a wrong row.
func TestRunMalformedEntryIsAnError(t *testing.T) {
	cells := cellrec.AppendLiteralCell(nil, []byte("q"), []byte("v"))
	for name, entry := range map[string][]byte{
		"shared longer than the previous row": {0, 4 << 1, 0},
		"no header in the first entry":        {0, 0, 1, 'r', byte(len(cells))},
		"row overruns":                        {0, 1, 9, 'r'},
		"no cells":                            append([]byte{0, 1, 1, 'r', 1, 'd', 0, 0, 0, 0, 0, 0, 0, 1, 4}, 0),
		"cells overrun":                       append([]byte{0, 1, 1, 'r', 1, 'd', 0, 0, 0, 0, 0, 0, 0, 1, 4}, 50),
	} {
		t.Run(name, func(t *testing.T) {
			p := newTestPool(t, 1<<20, 1)
			info := writeTestRun(t, p, 4096, []testView{{[]byte("r"), []byte("d"), 1, kv.TypePut, cells, 1}})
			chunk := make([]byte, chunkHdrSz, chunkHdrSz+len(entry))
			chunk = append(chunk, entry...)
			putHeader(chunk, len(entry), len(entry), codecRaw, crc32.Checksum(entry, castagnoli))
			f, err := os.OpenFile(info.path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(chunk); err != nil {
				t.Fatal(err)
			}
			f.Close()
			info.chunks = append(info.chunks, chunkRef{off: info.size, disk: len(chunk)})
			info.size += int64(len(chunk))
			info.maxDisk = max(info.maxDisk, len(chunk))
			r, err := openRun(context.Background(), testDict, info)
			if err != nil {
				t.Fatal(err)
			}
			defer r.close()
			if ok, err := r.next(); !ok || err != nil {
				t.Fatalf("first entry: ok %v, err %v", ok, err)
			}
			ok, err := r.next()
			if err == nil {
				t.Fatalf("malformed entry read without error (ok %v, row %q)", ok, r.cur().h.Row)
			}
			t.Log(err)
		})
	}
}

// putEntry writes the bytes appendEntryHead and the cells would, for rows that share prefixes of every
// length (within and past the eight bytes of a view's row prefix, zero bytes that the zero padding of a
// short row's prefix looks like), families, timestamps and types that change or not, and seqs that go
// back or jump: mostly the usual entry (its three leading varints of one byte each), sometimes not.
func TestPutEntryMatchesAppendEntryHead(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 7))
	alphabet := []byte{0, 0, 'a', 'b', 0xff}
	families := [][]byte{{}, []byte("d"), []byte("d"), []byte("fam"), []byte("family-long")}
	var prev entryState
	var prevRow []byte
	dst := make([]byte, 4096)
	for i := range 20000 {
		if i%50 == 0 {
			prev = entryState{} // a chunk's start
		}
		row := bytes.Clone(prevRow[:rng.IntN(len(prevRow)+1)])
		for range rng.IntN(20) {
			row = append(row, alphabet[rng.IntN(len(alphabet))])
		}
		cells := cellrec.AppendLiteralCell(nil, []byte("q"), bytes.Repeat([]byte("v"), rng.IntN(300)))
		// Mostly the usual entry (a seq close to the previous one, the same header), sometimes not.
		tv := testView{row, prev.family, prev.ts, kv.Type(prev.typ), cells, prev.seq + uint64(rng.IntN(81)-40)}
		if !prev.hdr || rng.IntN(8) == 0 {
			tv.family, tv.ts, tv.typ = families[rng.IntN(len(families))], int64(rng.IntN(2)), kv.TypePut+kv.Type(rng.IntN(2)*4)
		}
		if rng.IntN(4) == 0 {
			tv.seq = rng.Uint64N(1 << rng.IntN(64))
		}
		v := tv.view()
		want := append(appendEntryHead(nil, &prev, v), v.cells...)
		newHdr := !prev.hdr || prev.ts != v.h.TS || prev.typ != byte(v.h.Type) || !sameBytes(prev.family, v.h.Family)
		n := putEntry(dst[:entryBound(v)], &prev, v, newHdr)
		if !bytes.Equal(dst[:n], want) {
			t.Fatalf("entry %d (row %q after %q): putEntry wrote %x, want %x", i, row, prev.row, dst[:n], want)
		}
		prev = entryState{seq: v.seq, row: row, family: v.h.Family, ts: v.h.TS, typ: byte(v.h.Type), hdr: true, prefix: v.prefix}
		prevRow = row
	}
}

// A writer that keeps the views' rows and families (stable) writes the same run as one that copies them.
func TestRunStableWriterWritesTheSameRun(t *testing.T) {
	var views []testView
	for i := range 3000 {
		row := fmt.Appendf(nil, "%d", 1000000+i*i%7919)
		if i%3 == 0 {
			row = fmt.Appendf(nil, "host-%03d-event-%08d", i%17, i)
		}
		views = append(views, testView{row, []byte("d"), int64(i % 2), kv.TypePut,
			cellrec.AppendLiteralCell(nil, []byte("q"), fmt.Appendf(nil, "%d", i)), uint64(i)})
	}
	slices.SortStableFunc(views, func(a, b testView) int { return bytes.Compare(a.row, b.row) })
	p := newTestPool(t, 1<<20, 1)
	var runs [2][]byte
	for k, stable := range []bool{false, true} {
		w, err := p.createRun(&slot{})
		if err != nil {
			t.Fatal(err)
		}
		w.chunk, w.stable = 4096, stable
		for i := range views {
			if err := w.add(views[i].view()); err != nil {
				t.Fatal(err)
			}
		}
		info, err := w.finish()
		if err != nil {
			t.Fatal(err)
		}
		if runs[k], err = os.ReadFile(info.path); err != nil {
			t.Fatal(err)
		}
		info.remove()
	}
	if !bytes.Equal(runs[0], runs[1]) {
		t.Fatalf("stable writer's run differs (%d and %d bytes)", len(runs[0]), len(runs[1]))
	}
}
