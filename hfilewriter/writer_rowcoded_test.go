package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// codedDict is a test's dictionary of coded cells: its qualifiers in order (at most 64: a code is below
// 0x80) and each one's index.
type codedDict struct {
	quals [][]byte
	index map[string]int
}

func newCodedDict(cells []Cell, rng *rand.Rand) *codedDict {
	var qs [][]byte
	for i := range cells {
		qs = append(qs, cells[i].Qualifier)
	}
	slices.SortFunc(qs, bytes.Compare)
	qs = slices.CompactFunc(qs, bytes.Equal)
	for len(qs) > 64 { // some of them: the others are not coded cells
		qs = slices.Delete(qs, rng.IntN(len(qs)), len(qs)-rng.IntN(2))
	}
	d := &codedDict{quals: qs, index: map[string]int{}}
	for i, q := range qs {
		d.index[string(q)] = i
	}
	return d
}

// code appends the coded cells of the first of run that are in d with values shorter than 0x80 bytes,
// and returns how many it coded.
func (d *codedDict) code(dst []byte, run []SameRowCell) ([]byte, int) {
	for i, c := range run {
		k, ok := d.index[string(c.Qualifier)]
		if !ok || len(c.Value) >= 0x80 {
			return dst, i
		}
		dst = append(append(dst, byte(2*k+1), byte(len(c.Value))), c.Value...)
	}
	return dst, len(run)
}

// rowCodedWrite writes cells as rowRunWrite does, but a row's untagged cells from its first on are coded
// (d; one row in ownDict with a dictionary of its qualifiers alone, which the writer's table then follows)
// and go to AppendRowCoded first; those it does not take go to AppendRow, or after the ones it takes to
// AppendSameRowCells. It checks the bytes AppendRowCoded says it took, and returns the file, the Stats
// after Close and how many cells AppendRowCoded took.
func rowCodedWrite(t *testing.T, o WriterOptions, cells []Cell, d *codedDict, ownDict int, rng *rand.Rand) (file []byte, st WriterStats, coded int) {
	t.Helper()
	return rowCodedWriteBy(t, o, cells, d, ownDict, rng, func(w *Writer, c *Cell, quals [][]byte, enc []byte) (int, int) {
		return w.AppendRowCoded(c.Row, c.Family, c.Timestamp, c.Type, quals, enc)
	})
}

// rowCodedWriteBy is rowCodedWrite with each row's coded cells given to by (AppendRowCoded or a path
// that is to take what it takes) for c, the row's first cell.
func rowCodedWriteBy(t *testing.T, o WriterOptions, cells []Cell, d *codedDict, ownDict int, rng *rand.Rand,
	by func(w *Writer, c *Cell, quals [][]byte, enc []byte) (n, used int)) (file []byte, st WriterStats, coded int) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	same := func(i int) bool {
		a, b := &cells[i-1], &cells[i]
		return bytes.Equal(a.Row, b.Row) && a.Timestamp == b.Timestamp && a.Type == b.Type
	}
	var run []SameRowCell
	var enc []byte
	for i := 0; i < len(cells); {
		c := &cells[i]
		start := i == 0 || !same(i)
		if len(c.Tags) > 0 || !start {
			if start {
				err = w.AppendParts(c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value, c.Tags)
			} else {
				err = w.AppendSameRowTags(c.Qualifier, c.Value, c.Tags)
			}
			if err != nil {
				t.Fatalf("cell %d (%s): %v", i, c, err)
			}
			i++
			continue
		}
		j := i + 1
		for j < len(cells) && same(j) && len(cells[j].Tags) == 0 {
			j++
		}
		run = run[:0]
		for k := i; k < j; k++ {
			run = append(run, SameRowCell{Qualifier: cells[k].Qualifier, Value: cells[k].Value})
		}
		rd := d
		if rng.IntN(ownDict) == 0 {
			rd = newCodedDict(cells[i:j], rng)
		}
		var m int
		enc, m = rd.code(enc[:0], run)
		enc = append(enc, 0x80, 1, 2, 3) // not a coded cell: the writer stops there
		n, used := by(w, c, rd.quals, enc)
		if n > m || n < 0 {
			t.Fatalf("cells %d to %d: AppendRowCoded took %d of %d coded cells", i, j, n, m)
		}
		if want, _ := rd.code(nil, run[:n]); used != len(want) {
			t.Fatalf("cells %d to %d: AppendRowCoded took %d cells in %d bytes, want %d", i, j, n, used, len(want))
		}
		coded += n
		if n == 0 {
			n, err = w.AppendRow(c.Row, c.Family, c.Timestamp, c.Type, run)
		} else {
			var k int
			k, err = w.AppendSameRowCells(run[n:])
			n += k
		}
		if err != nil || n != len(run) {
			t.Fatalf("cells %d to %d: %d, %v", i, j, n, err)
		}
		i = j
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.Stats(), coded
}

// TestWriterAppendRowCodedMatchesAppend: rows given to AppendRowCoded (then AppendRow or
// AppendSameRowCells for the cells it does not take) are the file Append writes, for every format
// version, codec, encoding and bloom type, with many blocks, key heads inside and outside the run's
// array, qualifiers and values longer than the run takes and qualifiers outside the dictionary; and it
// takes most of the cells it may (unencoded blocks without a ROWCOL bloom).
func TestWriterAppendRowCodedMatchesAppend(t *testing.T) {
	writerMatrix(func(i int, name string, o WriterOptions) {
		o.IndexBlockMaxSize, o.BloomBlockSize = 512, 256
		o.BulkLoad = &BulkLoadInfo{Time: 1} // the file info then holds the time range and the earliest put
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 12))
			cells := sameRowRunCells(rng, 600, o.FormatVersion == 3)
			want := partsTestWrite(t, o, cells, partsAPIAppend)
			file, st, coded := rowCodedWrite(t, o, cells, newCodedDict(cells, rng), 10, rng)
			compareBytes(t, name, file, want.file)
			if !reflect.DeepEqual(st, want.stats[len(want.stats)-1]) {
				t.Fatalf("Stats after Close: got %+v, want %+v", st, want.stats[len(want.stats)-1])
			}
			if fast := (o.Encoding == EncodingNone || o.Encoding == EncodingFastDiff) && o.Bloom != BloomRowCol; fast != (coded > 0) {
				t.Fatalf("AppendRowCoded took %d cells", coded)
			}
		})
	})
}

// TestWriterAppendRowCodedShortCells: AppendRowCoded with the short cells of
// TestWriterAppendRowShortCells (qualifiers of 0 to 9 bytes, values of 0 to 33, random timestamps, 128-byte
// and 4 KiB blocks) writes the file written cell by cell, and takes most cells.
func TestWriterAppendRowCodedShortCells(t *testing.T) {
	for i, o := range []WriterOptions{DefaultWriterOptions(), {FormatVersion: 2, NoMVCC: true}} {
		o.BlockSize = 128 << (5 * i)
		o.BulkLoad = &BulkLoadInfo{Time: 1}
		rng := rand.New(rand.NewPCG(5, 6))
		cells := shortRowCells(rng)
		want := partsTestWrite(t, o, cells, partsAPIAppend)
		file, st, coded := rowCodedWrite(t, o, cells, newCodedDict(cells, rng), 2, rng)
		compareBytes(t, "short cells", file, want.file)
		if !reflect.DeepEqual(st, want.stats[len(want.stats)-1]) {
			t.Fatalf("Stats after Close: got %+v, want %+v", st, want.stats[len(want.stats)-1])
		}
		if coded < len(cells)/(8-5*i) { // a 128-byte block holds two or three such cells: fewer runs
			t.Fatalf("AppendRowCoded took %d of %d cells", coded, len(cells))
		}
	}
}

// TestWriterAppendRowCodedRefuses: AppendRowCoded takes no cell, and writes nothing, for qualifiers out
// of order, a row not after the last, a type other than put, a first cell that is not a coded cell and
// too few bytes; the same writer then takes the row once its qualifiers are in order. A run stops
// before a cell bigger than the file's biggest so far.
func TestWriterAppendRowCodedRefuses(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, DefaultWriterOptions())
	if err != nil {
		t.Fatal(err)
	}
	fam := []byte("f")
	if err := w.Append(&Cell{Row: []byte("row-0000000000001"), Family: fam, Qualifier: []byte("a"), Type: kv.TypePut,
		Value: []byte("a twenty-byte value.")}); err != nil { // the biggest cell: a bigger one ends a run
		t.Fatal(err)
	}
	row := []byte("row-0000000000002")
	ordered := [][]byte{[]byte("a"), []byte("b")}
	coded := []byte{1, 1, 'x', 3, 2, 'y', 'z'}
	for _, tc := range []struct {
		name  string
		row   []byte
		typ   Type
		quals [][]byte
		coded []byte
	}{
		{"qualifiers out of order", row, kv.TypePut, [][]byte{[]byte("b"), []byte("a")}, coded},
		{"equal qualifiers", row, kv.TypePut, [][]byte{[]byte("a"), []byte("a")}, coded},
		{"the last row", []byte("row-0000000000001"), kv.TypePut, ordered, coded},
		{"a delete", row, kv.TypeDelete, ordered, coded},
		{"a literal qualifier", row, kv.TypePut, ordered, []byte{2, 1, 'x'}},
		{"a code past the qualifiers", row, kv.TypePut, ordered, []byte{5, 1, 'x'}},
		{"a value past the end", row, kv.TypePut, ordered, []byte{1, 2, 'x'}},
		{"one byte", row, kv.TypePut, ordered, []byte{1}},
		{"no qualifiers", row, kv.TypePut, nil, coded},
	} {
		before := w.Stats()
		if n, used := w.AppendRowCoded(tc.row, fam, 5, tc.typ, tc.quals, tc.coded); n != 0 || used != 0 {
			t.Fatalf("%s: AppendRowCoded took %d cells in %d bytes", tc.name, n, used)
		}
		if after := w.Stats(); !reflect.DeepEqual(after, before) {
			t.Fatalf("%s: Stats changed: %+v, before %+v", tc.name, after, before)
		}
	}
	if n, used := w.AppendRowCoded(row, fam, 5, kv.TypePut, ordered, coded); n != 2 || used != len(coded) {
		t.Fatalf("AppendRowCoded took %d cells in %d bytes, want 2 in %d", n, used, len(coded))
	}
	if n, used := w.AppendRowCoded([]byte("row-0000000000002a"), fam, 5, kv.TypePut, ordered,
		append([]byte{1, 1, 'x', 3, 30}, bytes.Repeat([]byte{'y'}, 30)...)); n != 1 || used != 3 {
		t.Fatalf("a bigger cell: AppendRowCoded took %d cells in %d bytes, want 1 in 3", n, used)
	}
	if n, err := w.AppendSameRowCells([]SameRowCell{{Qualifier: []byte("b"), Value: bytes.Repeat([]byte{'y'}, 30)}}); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if !bytes.Contains(w.keyBiggest, []byte("row-0000000000002a")) || w.lenBiggest != 12+int64(len(w.keyBiggest))+30 {
		t.Fatalf("biggest cell: key %q, %d bytes", w.keyBiggest, w.lenBiggest)
	}
	// It stops at a cell whose code is not after the previous one's (a qualifier not after the last).
	for i, c := range [][]byte{{3, 1, 'x', 1, 1, 'y'}, {3, 1, 'x', 3, 1, 'y'}} {
		if n, used := w.AppendRowCoded(fmt.Appendf(nil, "row-000000000000%d", 3+i), fam, 5, kv.TypePut, ordered, c); n != 1 || used != 3 {
			t.Fatalf("codes %d, %d: AppendRowCoded took %d cells in %d bytes, want 1 in 3", c[0], c[3], n, used)
		}
	}
}

// RowCodedFits says which rows AppendRowCoded takes by their key head's length (up to 64 bytes): for
// row lengths from 1 to past the end, it takes a row's cells exactly when RowCodedFits says it can.
func TestRowCodedFitsAgreesWithAppendRowCoded(t *testing.T) {
	for _, fam := range [][]byte{[]byte("f"), []byte("fam")} {
		for rowLen := 1; rowLen <= 70; rowLen++ {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, DefaultWriterOptions())
			if err != nil {
				t.Fatal(err)
			}
			first := bytes.Repeat([]byte{'a'}, rowLen)
			if err := w.Append(&Cell{Row: first, Family: fam, Qualifier: []byte("a"), Type: kv.TypePut, Value: []byte("a twenty-byte value.")}); err != nil {
				t.Fatal(err)
			}
			row := bytes.Repeat([]byte{'b'}, rowLen)
			n, _ := w.AppendRowCoded(row, fam, 5, kv.TypePut, [][]byte{[]byte("a"), []byte("b")}, []byte{1, 1, 'x', 3, 1, 'y'})
			fits := RowCodedFits(rowLen, len(fam))
			if fits != (n == 2) || !fits && n != 0 {
				t.Fatalf("family %q, row of %d bytes: RowCodedFits %v, AppendRowCoded took %d cells", fam, rowLen, fits, n)
			}
			if head := 3 + rowLen + len(fam); fits != (head <= 64) {
				t.Fatalf("family %q, row of %d bytes: RowCodedFits %v for a key head of %d bytes", fam, rowLen, fits, head)
			}
		}
	}
}

// TestWriterRowCodedOK: RowCodedOK says whether AppendRowCoded takes a row as the writer stands: before
// the file's first cell, with PREFIX or DIFF blocks or a ROWCOL bloom it takes none, and RowCodedOK is
// false; with unencoded or FAST_DIFF blocks after a cell it takes the row, and RowCodedOK is true; after
// Close it is false.
func TestWriterRowCodedOK(t *testing.T) {
	quals := [][]byte{[]byte("a"), []byte("customer_id")}
	coded := []byte{1, 1, 'x', 3, 2, 'y', 'z'}
	for _, tc := range []struct {
		name string
		enc  DataBlockEncoding
		typ  BloomType
		want bool
	}{
		{"none", EncodingNone, BloomRow, true},
		{"no bloom", EncodingNone, BloomNone, true},
		{"rowcol", EncodingNone, BloomRowCol, false},
		{"fast_diff", EncodingFastDiff, BloomRow, true},
		{"prefix", EncodingPrefix, BloomNone, false},
	} {
		o := DefaultWriterOptions()
		o.Encoding, o.Bloom = tc.enc, tc.typ
		w, err := NewWriter(&bytes.Buffer{}, o)
		if err != nil {
			t.Fatal(err)
		}
		if w.RowCodedOK(7, 1) {
			t.Fatalf("%s: RowCodedOK before the first cell", tc.name)
		}
		if err := w.Append(&Cell{Row: []byte("1000000"), Family: []byte("d"), Type: kv.TypePut, Value: make([]byte, 40)}); err != nil {
			t.Fatal(err)
		}
		ok := w.RowCodedOK(7, 1)
		n, _ := w.AppendRowCoded([]byte("1000001"), []byte("d"), 5, kv.TypePut, quals, coded)
		if ok != tc.want || ok != (n == 2) || !ok && n != 0 {
			t.Fatalf("%s: RowCodedOK %v, AppendRowCoded took %d cells", tc.name, ok, n)
		}
		if w.RowCodedOK(62, 1) {
			t.Fatalf("%s: RowCodedOK for a 66-byte key head", tc.name)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if w.RowCodedOK(7, 1) {
			t.Fatalf("%s: RowCodedOK after Close", tc.name)
		}
	}
}
