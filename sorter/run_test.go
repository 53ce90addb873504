package sorter

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"math"
	"os"
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
