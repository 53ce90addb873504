package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// newRowShortCells returns n rows of one put cell each, in order, mostly of appendNewRowShort's shape:
// rows of rowLen bytes that share long prefixes (every word of the row is where two rows may first
// differ), qualifiers of 0 to 8 bytes and values of 0 to 32. Now and then a cell is not: a longer
// qualifier or value, a value bigger than a block, and stretches of rows of another length.
func newRowShortCells(rng *rand.Rand, n, rowLen int) []newRowTestCell {
	cells := make([]newRowTestCell, n)
	row := bytes.Repeat([]byte{'a'}, rowLen)
	for i := range cells {
		if rng.IntN(150) == 0 { // rows of another length for a while: the last cut or extended
			l := 2 + rng.IntN(39)
			row = append(bytes.Clone(row[:min(l, len(row))]), bytes.Repeat([]byte{'z'}, max(0, l-len(row)))...)
		} else if len(row) != rowLen && rng.IntN(20) == 0 { // back to rowLen
			row = append(bytes.Clone(row[:min(rowLen, len(row))]), bytes.Repeat([]byte{'z'}, max(0, rowLen-len(row)))...)
		}
		if i > 0 {
			// Increment a byte near the end (carrying into the bytes before it now and then), so that
			// rows share prefixes of every length: the row is then after the last, whether or not it
			// was cut or extended. The first byte changes only by a carry (it would wrap around soon).
			row = bytes.Clone(row)
			j := len(row) - 1 - rng.IntN(min(len(row)-1, 12))
			if rng.IntN(8) == 0 {
				j = 1 + rng.IntN(len(row)-1)
			}
			for j > 0 && row[j] == 0xff {
				row[j] = 0
				j--
			}
			row[j]++
			for k := j + 1; k < len(row); k++ {
				row[k] = byte(rng.IntN(4)) * 0x40
			}
		}
		// Seven letters: at most 62 qualifiers in all, within the 64 that appendNewRowShort takes.
		q := bytes.Repeat([]byte{byte('a' + rng.IntN(7))}, rng.IntN(9))
		if rng.IntN(30) == 0 {
			q = bytes.Repeat([]byte{'q'}, 9+rng.IntN(5))
		}
		v := make([]byte, rng.IntN(33))
		switch rng.IntN(300) {
		case 0:
			v = make([]byte, 1500) // bigger than the blocks of the tests
		case 1, 2, 3, 4, 5:
			v = make([]byte, 33+rng.IntN(30))
		}
		for j := range v {
			v[j] = byte(rng.Uint32())
		}
		cells[i] = newRowTestCell{Row: row, Qualifier: q, Value: v, TS: 1700000000000 + int64(rng.IntN(1000)) - 500, Hash: HashRow(row)}
	}
	return cells
}

// The rows of newRowShortCells are in order, mostly of the asked length: the tests below rely on it.
func TestNewRowShortCellsInOrder(t *testing.T) {
	for _, rowLen := range []int{8, 18, 32} {
		cells := newRowShortCells(rand.New(rand.NewPCG(uint64(rowLen), 1)), 5000, rowLen)
		same := 0
		for i := range cells {
			if i > 0 && bytes.Compare(cells[i].Row, cells[i-1].Row) <= 0 {
				t.Fatalf("row length %d: row %d %q not after %q", rowLen, i, cells[i].Row, cells[i-1].Row)
			}
			if len(cells[i].Row) == rowLen {
				same++
			}
		}
		if same < len(cells)*3/4 || same == len(cells) {
			t.Fatalf("row length %d: %d of %d rows of that length", rowLen, same, len(cells))
		}
	}
}

// AppendNewRowCells writes AppendPartsRowHash's bytes, Stats and EstimatedSize for every writer
// configuration with cells mostly of appendNewRowShort's shape, for rows of 8 to 32 bytes (whose
// words overlap in every way), called with runs of 1 to 300 cells over many blocks and chunks.
func TestAppendNewRowShortMatchesAppendPartsRowHash(t *testing.T) {
	for _, family := range [][]byte{[]byte("f"), []byte("fam7fam")} {
		writerMatrix(func(i int, name string, o WriterOptions) {
			o.IndexBlockMaxSize, o.BloomBlockSize = 512, 256
			if i%2 == 0 {
				o.BulkLoad = &BulkLoadInfo{Time: 1700000000000, SourceTask: "test", MajorCompaction: true}
			}
			rowLen := []int{8, 9, 15, 16, 17, 18, 23, 24, 25, 31, 32}[i%11]
			t.Run(fmt.Sprintf("%s/%s/row%d", family, name, rowLen), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(i), 17))
				cells := newRowShortCells(rng, 1500, rowLen)
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
}

// With a limit, AppendNewRowCells stops where a caller checking EstimatedSize before each row would
// with cells of appendNewRowShort's shape too (its stop is a bound that may come a cell early, after
// which the usual way decides), and the file written so far is the one of those cells.
func TestAppendNewRowShortLimit(t *testing.T) {
	family := []byte("fam")
	opts := DefaultWriterOptions()
	opts.BlockSize, opts.BloomBlockSize = 2048, 512
	cells := newRowShortCells(rand.New(rand.NewPCG(3, 14)), 4000, 18)
	_, _, ests := newRowTestRef(t, opts, family, cells)
	limits := []int64{1, ests[0], ests[0] + 1, ests[len(ests)-1], ests[len(ests)-1] + 1}
	for j := 50; j < len(ests); j += 61 { // exactly at, just below and just above an estimate
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

// Writers following a RowBloomShare write the same files through AppendNewRowCells, with cells of
// appendNewRowShort's shape, as through AppendPartsRowHash: the run's keys are added after its loop,
// in order, following the share's chunk (a segment of it at a time) or leaving it at a missing row.
func TestAppendNewRowShortSharedBloom(t *testing.T) {
	family := []byte("f")
	cells := newRowShortCells(rand.New(rand.NewPCG(10, 12)), 20000, 18)
	missing := append(append([]newRowTestCell(nil), cells[:12345]...), cells[12346:]...)
	small := DefaultWriterOptions()
	small.BlockSize, small.BloomBlockSize = 4096, 1024
	// The default sizes: runs of about a thousand cells, over the segments of the share's one chunk.
	for _, opts := range []WriterOptions{small, DefaultWriterOptions()} {
		for _, tc := range []struct {
			name  string
			cells []newRowTestCell
		}{{"every row", cells}, {"a row missing", missing}} {
			name := fmt.Sprintf("%s, blocks of %d", tc.name, opts.BlockSize)
			want, _, _ := newRowTestRef(t, opts, family, tc.cells)
			s, err := NewRowBloomShare(opts, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i := range cells {
				s.Add(cells[i].Hash)
			}
			s.Finish()
			var buf bytes.Buffer
			w, err := NewWriter(&buf, opts)
			if err != nil {
				t.Fatal(err)
			}
			w.ShareRowBloom(s, 0)
			if n, err := appendNewRowCells(w, family, tc.cells, 0); n != len(tc.cells) || err != nil {
				t.Fatal(n, err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			compareBytes(t, name, buf.Bytes(), want)
			if got := w.Stats().SharedBloomChunks; got == 0 && tc.name == "every row" {
				t.Fatalf("%s: %d shared bloom chunks", name, got)
			}
		}
	}
}

// appendNewRowShort takes a run of cells of its shape whole, and takes none when the writer's last
// row is of another length or the family is longer than 7 bytes; it stops before a row that is not
// after the previous one (whichever of its words first differs), a row of another length, a qualifier
// longer than 8 bytes and a value longer than 32.
func TestAppendNewRowShortTaken(t *testing.T) {
	start := func(t *testing.T, family []byte, first newRowTestCell) *Writer {
		t.Helper()
		w, err := NewWriter(&bytes.Buffer{}, DefaultWriterOptions())
		if err != nil {
			t.Fatal(err)
		}
		if n, err := appendNewRowCells(w, family, []newRowTestCell{first}, 0); n != 1 || err != nil {
			t.Fatal(n, err)
		}
		return w
	}
	cell := func(row string, q, v int) newRowTestCell {
		return newRowTestCell{Row: []byte(row), Qualifier: bytes.Repeat([]byte{'q'}, q), Value: bytes.Repeat([]byte{'v'}, v), TS: 1, Hash: HashRow([]byte(row))}
	}
	family := []byte("f")
	cells := newRowShortCells(rand.New(rand.NewPCG(1, 2)), 300, 18)
	n := 1
	for n < len(cells) && len(cells[n].Row) == 18 && len(cells[n].Qualifier) <= 8 && len(cells[n].Value) <= 32 {
		n++
	}
	if n < 20 {
		t.Fatalf("only %d usual cells: the test needs a run", n)
	}
	w := start(t, family, cells[0])
	if got := appendNewRowShort(w, family, cells[1:n], 0, w.bloom, w.bloom.chunk, 0); got != n-1 {
		t.Fatalf("took %d of %d usual cells", got, n-1)
	}
	if got := appendNewRowShort(start(t, []byte("family78"), cells[0]), []byte("family78"), cells[1:n], 0, nil, nil, 0); got != 0 {
		t.Fatalf("an 8-byte family: took %d cells", got)
	}
	if got := appendNewRowShort(start(t, family, cell("aaaaaaa", 0, 0)), family, cells[1:n], 0, nil, nil, 0); got != 0 {
		t.Fatalf("a last row of 7 bytes: took %d cells", got)
	}

	base := "row-0123456789abcdefghijklmnopq" // 31 bytes: its four words at 0, 8, 15 and 23
	for _, tc := range []struct {
		name string
		next newRowTestCell
		want int
	}{
		{"after, in the last byte", cell(base[:30]+"r", 8, 32), 1},
		{"after, in the first word", cell("s"+base[1:], 0, 0), 1},
		{"after, in the second word", cell(base[:9]+"9"+base[10:], 1, 9), 1},
		{"after, in the third word", cell(base[:17]+"i"+base[18:], 2, 17), 1},
		{"after, in the fourth word", cell(base[:25]+"m"+base[26:], 3, 31), 1},
		{"equal", cell(base, 1, 1), 0},
		{"before, in the first word", cell("a"+base[1:], 1, 1), 0},
		{"before, in the second word", cell(base[:9]+"0"+base[10:], 1, 1), 0},
		{"before, in the third word", cell(base[:17]+"a"+base[18:], 1, 1), 0},
		{"before, in the last byte", cell(base[:30]+"p", 1, 1), 0},
		{"longer row", cell(base+"0", 1, 1), 0},
		{"shorter row", cell(base[:30], 1, 1), 0}, // before, too
		{"qualifier of 9 bytes", cell("s"+base[1:], 9, 1), 0},
		{"value of 33 bytes", cell("s"+base[1:], 1, 33), 0},
	} {
		w := start(t, family, cell(base, 1, 1))
		if got := appendNewRowShort(w, family, []newRowTestCell{tc.next}, 0, w.bloom, w.bloom.chunk, 0); got != tc.want {
			t.Errorf("%s: took %d, want %d", tc.name, got, tc.want)
		}
	}
	// A row or value without its whole window in the buffer: the general loop's. The buffer is the
	// value, the row and tail bytes (rowFirst: the row, the value, tail bytes).
	for _, tc := range []struct {
		name     string
		rowFirst bool
		v, tail  int
		want     int
	}{
		{"row's window", false, 1, newRunRowWindow - 31, 1},
		{"row's window, a byte short", false, 1, newRunRowWindow - 32, 0},
		{"value's window", true, 31, newRunValueWindow - 31, 1},
		{"value's window, a byte short", true, 31, newRunValueWindow - 32, 0},
	} {
		w := start(t, family, cell(base, 1, 1))
		c := cell("s"+base[1:], 1, tc.v)
		d := &NewRowData{Quals: [][]byte{c.Qualifier}}
		ref := NewRowCell{TS: c.TS, Hash: c.Hash, RowLen: uint16(len(c.Row)), ValueLen: uint32(len(c.Value))}
		if tc.rowFirst {
			d.Buf, ref.Value = append(bytes.Clone(c.Row), c.Value...), uint32(len(c.Row))
		} else {
			d.Buf, ref.Row = append(bytes.Clone(c.Value), c.Row...), uint32(len(c.Value))
		}
		d.Buf = append(d.Buf, make([]byte, tc.tail)...)
		if got := w.appendNewRowShort(family, d, []NewRowCell{ref}, 0, w.bloom, w.bloom.chunk, 0); got != tc.want {
			t.Errorf("%s: took %d, want %d", tc.name, got, tc.want)
		}
	}
	// A qualifier past the first newRunQuals of the table: the general loop's (the same bytes, through
	// TestAppendNewRowCellsMatchesAppendPartsRowHash's many qualifiers).
	for _, qual := range []int{newRunQuals - 1, newRunQuals, newRunQuals + 5} {
		w := start(t, family, cell(base, 1, 1))
		d, refs := packNewRows([]newRowTestCell{cell("s"+base[1:], 1, 1)}, newRunRowWindow)
		for len(d.Quals) <= qual {
			d.Quals = append([][]byte{[]byte("x")}, d.Quals...)
		}
		refs[0].Qual = uint16(qual)
		want := 0
		if qual < newRunQuals {
			want = 1
		}
		if got := w.appendNewRowShort(family, d, refs, 0, w.bloom, w.bloom.chunk, 0); got != want {
			t.Errorf("qualifier %d: took %d, want %d", qual, got, want)
		}
	}
}

// Two rows of the same length are in order for appendNewRowShort's word compare exactly when
// bytes.Compare says so, whichever byte they first differ at.
func TestAppendNewRowShortRowOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	family := []byte("f")
	for rowLen := 8; rowLen <= 32; rowLen++ {
		for k := 0; k < 200; k++ {
			a := make([]byte, rowLen)
			for i := range a {
				a[i] = byte(rng.IntN(3))
			}
			b := bytes.Clone(a)
			if k%10 != 0 { // equal now and then
				j := rng.IntN(rowLen)
				b[j] = byte(rng.IntN(3))
				for i := j + 1; i < rowLen; i++ {
					b[i] = byte(rng.IntN(3))
				}
			}
			w, err := NewWriter(&bytes.Buffer{}, DefaultWriterOptions())
			if err != nil {
				t.Fatal(err)
			}
			if err := w.AppendPartsRowHash(a, family, nil, 1, kv.TypePut, nil, nil, HashRow(a)); err != nil {
				t.Fatal(err)
			}
			want := 0
			if bytes.Compare(b, a) > 0 {
				want = 1
			}
			next := []newRowTestCell{{Row: b, TS: 1, Hash: HashRow(b)}}
			if got := appendNewRowShort(w, family, next, 0, w.bloom, w.bloom.chunk, 0); got != want {
				t.Fatalf("%x after %x: took %d, want %d", b, a, got, want)
			}
		}
	}
}

// newRun.cells writes a cell only where its whole window lies within blk: it takes a cell when its
// stop leaves room for the window at the last start it allows, and none (the run's entry check) when
// the stop or the start would let a window reach past blk.
func TestNewRunCellsWindowInBlock(t *testing.T) {
	buf := make([]byte, 2*newRunRowWindow)
	copy(buf, "row-0001")
	cells := []NewRowCell{{TS: 7, Row: 0, RowLen: 8, Value: newRunRowWindow, ValueLen: 3, Qual: 0}}
	run := func(stop, end int) int {
		blk := make([]byte, 3*newRunRoom)
		r := newRun{rowLen: 8, x1: 0, x2: 0, fo: 18, qo: 20, kbase: 20, fixed: 28, stop: stop}
		for i := range r.ql {
			r.ql[i] = newRunNoQual
		}
		r.ql[0], r.qw[0] = 1, 'q'
		var prev [newRunRowWindow]byte
		n, _ := r.cells(blk, end, buf, cells, &prev)
		return n
	}
	room := 3*newRunRoom - newRunRoom + 1 // the last start whose window fits, plus one
	if n := run(room, room-1); n != 1 {
		t.Fatalf("a cell whose window ends at the block's end: %d taken, want 1", n)
	}
	if n := run(room+1, room-1); n != 0 {
		t.Fatalf("a stop past the last window that fits: %d taken, want 0", n)
	}
	if n := run(room, -1); n != 0 {
		t.Fatalf("a start before the block: %d taken, want 0", n)
	}
}
