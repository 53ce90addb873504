package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// newRowTestCells returns n rows of one put cell each, in order: rows of 1 to 40 bytes, qualifiers of 0
// to 20 bytes, values of 0 to 40 bytes and now and then bigger than a block, timestamps that go up and
// down.
func newRowTestCells(rng *rand.Rand, n int) []newRowTestCell {
	cells := make([]newRowTestCell, n)
	for i := range cells {
		row := fmt.Appendf(nil, "r%08d", i)
		row = append(row, bytes.Repeat([]byte{'x'}, rng.IntN(32))...)
		if rng.IntN(5) == 0 {
			row = row[:1+rng.IntN(len(row))] // still after the last: its prefix is the counter's
			if i > 0 && bytes.Compare(row, cells[i-1].Row) <= 0 {
				row = fmt.Appendf(nil, "r%08d", i)
			}
		}
		q := bytes.Repeat([]byte{byte('a' + rng.IntN(26))}, rng.IntN(21))
		v := make([]byte, rng.IntN(41))
		if rng.IntN(200) == 0 {
			v = make([]byte, 1500) // bigger than the blocks of the tests
		}
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		cells[i] = newRowTestCell{Row: row, Qualifier: q, Value: v, TS: 1700000000000 + int64(rng.IntN(1000)) - 500, Hash: HashRow(row)}
	}
	return cells
}

// newRowTestRef writes cells with AppendPartsRowHash, one at a time, and returns the file, the Stats
// and EstimatedSize after each cell.
func newRowTestRef(t *testing.T, opts WriterOptions, family []byte, cells []newRowTestCell) ([]byte, []WriterStats, []int64) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	stats, ests := make([]WriterStats, len(cells)), make([]int64, len(cells))
	for i := range cells {
		c := &cells[i]
		if err := w.AppendPartsRowHash(c.Row, family, c.Qualifier, c.TS, kv.TypePut, c.Value, nil, c.Hash); err != nil {
			t.Fatalf("cell %d: %v", i, err)
		}
		stats[i], ests[i] = w.Stats(), w.EstimatedSize()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), stats, ests
}

// AppendNewRowCells writes AppendPartsRowHash's bytes, Stats and EstimatedSize for every writer
// configuration, called with runs of 1 to 300 cells over many data blocks and bloom chunks.
func TestAppendNewRowCellsMatchesAppendPartsRowHash(t *testing.T) {
	family := []byte("f")
	writerMatrix(func(i int, name string, o WriterOptions) {
		o.IndexBlockMaxSize, o.BloomBlockSize = 512, 256
		if i%2 == 0 {
			o.BulkLoad = &BulkLoadInfo{Time: 1700000000000, SourceTask: "test", MajorCompaction: true}
		}
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			cells := newRowTestCells(rng, 1200)
			want, stats, ests := newRowTestRef(t, o, family, cells)
			var buf bytes.Buffer
			w, err := NewWriter(&buf, o)
			if err != nil {
				t.Fatal(err)
			}
			for at := 0; at < len(cells); {
				k := min(len(cells)-at, 1+rng.IntN(300))
				n, err := appendNewRowCells(w, family, cells[at:at+k], 0)
				if err != nil || n != k {
					t.Fatalf("cells %d to %d: appended %d, %v", at, at+k, n, err)
				}
				at += k
				if got := w.Stats(); !reflect.DeepEqual(got, stats[at-1]) {
					t.Fatalf("after cell %d: Stats %+v, want %+v", at-1, got, stats[at-1])
				}
				if got := w.EstimatedSize(); got != ests[at-1] {
					t.Fatalf("after cell %d: EstimatedSize %d, want %d", at-1, got, ests[at-1])
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			compareBytes(t, "AppendNewRowCells vs AppendPartsRowHash", buf.Bytes(), want)
			if s := stats[len(stats)-1]; s.DataBlocks < 10 {
				t.Fatalf("%d data blocks: the test should span many", s.DataBlocks)
			}
		})
	})
}

// With a limit, AppendNewRowCells stops before the first cell after the first at which EstimatedSize
// has reached it, as a caller checking before each row would, and the file written so far is the one
// of those cells.
func TestAppendNewRowCellsLimit(t *testing.T) {
	family := []byte("fam")
	opts := DefaultWriterOptions()
	opts.BlockSize, opts.BloomBlockSize = 2048, 512
	cells := newRowTestCells(rand.New(rand.NewPCG(3, 4)), 3000)
	_, _, ests := newRowTestRef(t, opts, family, cells)
	limits := []int64{1, ests[0], ests[0] + 1, ests[len(ests)-1], ests[len(ests)-1] + 1}
	for j := 100; j < len(ests); j += 97 { // exactly at, just below and just above an estimate
		limits = append(limits, ests[j]-1, ests[j], ests[j]+1)
	}
	for _, limit := range limits {
		wantN := len(cells)
		for j := 1; j < len(cells); j++ {
			if ests[j-1] >= limit {
				wantN = j
				break
			}
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, opts)
		if err != nil {
			t.Fatal(err)
		}
		n, err := appendNewRowCells(w, family, cells, limit)
		if err != nil || n != wantN {
			t.Fatalf("limit %d: appended %d, %v; want %d", limit, n, err, wantN)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want, _, _ := newRowTestRef(t, opts, family, cells[:n])
		compareBytes(t, fmt.Sprintf("limit %d", limit), buf.Bytes(), want)
	}
}

// A run of new rows in an open unencoded block takes appendNewRowRun (the lean path), and the cells
// that cannot are refused by it: an encoded block, a row not after the last, a closed writer.
func TestAppendNewRowRunTaken(t *testing.T) {
	family := []byte("f")
	cells := newRowTestCells(rand.New(rand.NewPCG(5, 6)), 400)
	for i := range cells {
		cells[i].Value = cells[i].Value[:min(len(cells[i].Value), 20)]
	}
	opts := DefaultWriterOptions()
	w, err := NewWriter(&bytes.Buffer{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n := appendNewRowRun(w, family, cells, 0); n != 0 {
		t.Fatalf("no block open yet: the run took %d cells", n)
	}
	if n, err := appendNewRowCells(w, family, cells[:1], 0); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if n := appendNewRowRun(w, family, cells[:1], 0); n != 0 {
		t.Fatalf("a row equal to the last: the run took %d cells", n)
	}
	if n := appendNewRowRun(w, []byte("g"), cells[1:], 0); n != 0 {
		t.Fatalf("another family: the run took %d cells", n)
	}
	if n := appendNewRowRun(w, family, cells[1:], 0); n != len(cells)-1 {
		t.Fatalf("the run took %d of %d cells in a 64 KiB block", n, len(cells)-1)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := appendNewRowRun(w, family, cells[1:], 0); n != 0 {
		t.Fatalf("closed: the run took %d cells", n)
	}

	opts.Encoding = EncodingFastDiff
	w, err = NewWriter(&bytes.Buffer{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := appendNewRowCells(w, family, cells[:1], 0); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if n := appendNewRowRun(w, family, cells[1:], 0); n != 0 {
		t.Fatalf("encoded blocks: the run took %d cells", n)
	}
}

// AppendNewRowCells refuses what AppendPartsRowHash refuses, with its error, after the cells before.
func TestAppendNewRowCellsRefusal(t *testing.T) {
	family := []byte("f")
	cells := newRowTestCells(rand.New(rand.NewPCG(8, 9)), 50)
	bad := append([]newRowTestCell(nil), cells...)
	bad[30].Row = append([]byte(nil), bad[10].Row...) // before the last
	bad[30].Hash = HashRow(bad[30].Row)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, DefaultWriterOptions())
	if err != nil {
		t.Fatal(err)
	}
	n, err := appendNewRowCells(w, family, bad, 0)
	var ref bytes.Buffer
	rw, rerr := NewWriter(&ref, DefaultWriterOptions())
	if rerr != nil {
		t.Fatal(rerr)
	}
	for i := range bad[:30] {
		c := &bad[i]
		if rerr := rw.AppendPartsRowHash(c.Row, family, c.Qualifier, c.TS, kv.TypePut, c.Value, nil, c.Hash); rerr != nil {
			t.Fatal(rerr)
		}
	}
	c := &bad[30]
	rerr = rw.AppendPartsRowHash(c.Row, family, c.Qualifier, c.TS, kv.TypePut, c.Value, nil, c.Hash)
	if n != 30 || err == nil || rerr == nil || err.Error() != rerr.Error() {
		t.Fatalf("appended %d, %v; want 30, %v", n, err, rerr)
	}
}

// Writers following a RowBloomShare write the same files through AppendNewRowCells as through
// AppendPartsRowHash, and as without the share: one that gets every row (its chunks are the share's),
// and one that misses a row (it leaves the share there).
func TestAppendNewRowCellsSharedBloom(t *testing.T) {
	family := []byte("f")
	opts := DefaultWriterOptions()
	opts.BlockSize, opts.BloomBlockSize = 4096, 1024
	cells := newRowTestCells(rand.New(rand.NewPCG(10, 11)), 20000)
	missing := append(append([]newRowTestCell(nil), cells[:12345]...), cells[12346:]...)
	for _, tc := range []struct {
		name  string
		cells []newRowTestCell
	}{{"every row", cells}, {"a row missing", missing}} {
		want, _, _ := newRowTestRef(t, opts, family, tc.cells)
		s, err := NewRowBloomShare(opts, 2)
		if err != nil {
			t.Fatal(err)
		}
		for i := range cells {
			s.Add(cells[i].Hash)
		}
		s.Finish()
		for id, lean := range []bool{false, true} {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, opts)
			if err != nil {
				t.Fatal(err)
			}
			w.ShareRowBloom(s, id)
			if lean {
				if n, err := appendNewRowCells(w, family, tc.cells, 0); n != len(tc.cells) || err != nil {
					t.Fatal(n, err)
				}
			} else {
				for i := range tc.cells {
					c := &tc.cells[i]
					if err := w.AppendPartsRowHash(c.Row, family, c.Qualifier, c.TS, kv.TypePut, c.Value, nil, c.Hash); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			compareBytes(t, fmt.Sprintf("%s, lean %v", tc.name, lean), buf.Bytes(), want)
			if got := w.Stats().SharedBloomChunks; got == 0 { // the chunks before the missing row are shared
				t.Fatalf("%s, lean %v: %d shared bloom chunks", tc.name, lean, got)
			}
		}
	}
}

// newRowTestCell is a cell of the tests of AppendNewRowCells with its parts as slices; packNewRows
// turns cells into what AppendNewRowCells takes.
type newRowTestCell struct {
	Row, Qualifier, Value []byte
	TS                    int64
	Hash                  RowHash
}

// packNewRows returns cells as AppendNewRowCells takes them: their rows and values in one buffer, each
// value then row (so that no offset is 0 and each part is followed by other bytes), with tail bytes
// after the last, and their qualifiers in a table, each once, by first use.
func packNewRows(cells []newRowTestCell, tail int) (*NewRowData, []NewRowCell) {
	d := &NewRowData{Buf: []byte{0xee}}
	refs := make([]NewRowCell, len(cells))
	qi := make(map[string]int)
	for i := range cells {
		c := &cells[i]
		k, ok := qi[string(c.Qualifier)]
		if !ok {
			k = len(d.Quals)
			qi[string(c.Qualifier)] = k
			d.Quals = append(d.Quals, c.Qualifier)
		}
		vo := len(d.Buf)
		d.Buf = append(d.Buf, c.Value...)
		ro := len(d.Buf)
		d.Buf = append(d.Buf, c.Row...)
		refs[i] = NewRowCell{TS: c.TS, Hash: c.Hash, Row: uint32(ro), Value: uint32(vo), ValueLen: uint32(len(c.Value)),
			RowLen: uint16(len(c.Row)), Qual: uint16(k)}
	}
	d.Buf = append(d.Buf, bytes.Repeat([]byte{0xee}, tail)...)
	return d, refs
}

// appendNewRowCells is w.AppendNewRowCells of cells, with room for appendNewRowShort's windows after
// the last (as the engine's batches have).
func appendNewRowCells(w *Writer, family []byte, cells []newRowTestCell, limit int64) (int, error) {
	d, refs := packNewRows(cells, newRunRowWindow)
	return w.AppendNewRowCells(family, d, refs, limit)
}

// appendNewRowRun is w.appendNewRowRun of cells.
func appendNewRowRun(w *Writer, family []byte, cells []newRowTestCell, limit int64) int {
	d, refs := packNewRows(cells, newRunRowWindow)
	return w.appendNewRowRun(family, d, refs, limit)
}

// appendNewRowShort is w.appendNewRowShort of cells.
func appendNewRowShort(w *Writer, family []byte, cells []newRowTestCell, limit int64, bw *writeBloomWriter, c *writeBloomChunk, extra int) int {
	d, refs := packNewRows(cells, newRunRowWindow)
	return w.appendNewRowShort(family, d, refs, limit, bw, c, extra)
}
