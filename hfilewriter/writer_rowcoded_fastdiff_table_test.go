package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// fixedRowCells returns rows of fixed-width keys (7 bytes, with stretches of 8 and of 9 bytes, where the
// run's table is made again and then kept again), each with a random subset in order of a dictionary
// whose qualifiers share 0 to 9 bytes and leave 1 to 32 after the common prefix, so that a qualifier's
// entry follows many previous ones, kept over many rows; the values are 0 to 65 bytes, some the
// previous one again or one byte off.
func fixedRowCells(rng *rand.Rand, rows int) []Cell {
	quals := []string{"a", "comment", "customer_id", "customer_idx", "ff", "ffffffff0", "ffffffff1abcdefghijklmnopqrstuvw",
		"ffffffff2", "g", "gabcdefghijklmnopqrstuvwxyz01234", "order_ts", "product_id", "quantity", "status", "unit_price"}
	var cells []Cell
	var value []byte
	for r := range rows {
		row := fmt.Appendf(nil, "%07d", 1000000+r)
		switch {
		case r%100 >= 60 && r%100 < 70:
			row = fmt.Appendf(nil, "%07dx", 1000000+r)
		case r%100 >= 90:
			row = fmt.Appendf(nil, "%07dxy", 1000000+r)
		}
		for i := range quals {
			if rng.IntN(3) == 0 {
				continue
			}
			switch rng.IntN(5) {
			case 0: // the previous value again
			case 1: // another of its length: one byte changed
				value = bytes.Clone(value)
				if len(value) > 0 {
					value[rng.IntN(len(value))] ^= 1
				}
			default:
				value = make([]byte, rng.IntN(66))
				for i := range value {
					value[i] = byte('0' + rng.IntN(10))
				}
			}
			cells = append(cells, Cell{Row: row, Family: []byte("d"), Qualifier: []byte(quals[i]), Timestamp: 1700000000000,
				Type: kv.TypePut, Value: value})
		}
	}
	return cells
}

// TestWriterAppendRowCodedFastDiffTable: in FAST_DIFF blocks, rows of fixed-width keys given to
// AppendRowCoded, whose cells follow one another in ever other pairs (fixedRowCells: fdQuals.pair
// makes an entry again when its previous code changes, fdQuals.prepare the table when the row's width
// or the biggest cell change), are the file Append writes, with the same Stats; and it takes most of
// the cells (in 1 KiB blocks, about every other row starts a block, where it takes none).
func TestWriterAppendRowCodedFastDiffTable(t *testing.T) {
	for i, bs := range []int{1024, 64 << 10} {
		for _, version := range []int{3, 2} {
			o := DefaultWriterOptions()
			o.FormatVersion, o.Compression, o.Encoding, o.BlockSize = version, CompressionSnappy, EncodingFastDiff, bs
			o.BulkLoad = &BulkLoadInfo{Time: 1}
			rng := rand.New(rand.NewPCG(uint64(i), 15))
			cells := fixedRowCells(rng, 600)
			want := partsTestWrite(t, o, cells, partsAPIAppend)
			file, st, coded := rowCodedWrite(t, o, cells, newCodedDict(cells, rng), 1<<30, rng)
			name := fmt.Sprintf("v%d-%d", version, bs)
			compareBytes(t, name, file, want.file)
			if !reflect.DeepEqual(st, want.stats[len(want.stats)-1]) {
				t.Fatalf("%s: Stats after Close: got %+v, want %+v", name, st, want.stats[len(want.stats)-1])
			}
			if least := map[int]int{1024: len(cells) / 2, 64 << 10: len(cells) * 9 / 10}[bs]; coded < least {
				t.Fatalf("%s: AppendRowCoded took %d of %d cells: the test should have more", name, coded, len(cells))
			}
		}
	}
}

// TestWriterAppendRowFastDiffFixedRows: in FAST_DIFF blocks, AppendRow and AppendSameRowCells (the run,
// fdRun.cells) write what Append writes for the rows of fixedRowCells, among them qualifiers of 32
// bytes after one they share no byte with (the run's longest qualifier store).
func TestWriterAppendRowFastDiffFixedRows(t *testing.T) {
	for i, bs := range []int{1024, 64 << 10} {
		o := DefaultWriterOptions()
		o.Compression, o.Encoding, o.BlockSize = CompressionSnappy, EncodingFastDiff, bs
		o.BulkLoad = &BulkLoadInfo{Time: 1}
		rng := rand.New(rand.NewPCG(uint64(i), 16))
		cells := fixedRowCells(rng, 600)
		want := partsTestWrite(t, o, cells, partsAPIAppend)
		got := rowRunWrite(t, o, cells, rng)
		name := fmt.Sprint(bs)
		compareBytes(t, name, got.file, want.file)
		if !reflect.DeepEqual(got.stats[1], want.stats[len(want.stats)-1]) {
			t.Fatalf("%s: Stats after Close: got %+v, want %+v", name, got.stats[1], want.stats[len(want.stats)-1])
		}
	}
}

// TestWriterAppendRowCodedFastDiffTableKeyWidth: the run's table is made again for a row one byte wider
// even when the file's biggest cell grew by one byte since (the most a cell's qualifier and value may
// sum to is then the same): the key lengths in the entries are the new row's.
func TestWriterAppendRowCodedFastDiffTableKeyWidth(t *testing.T) {
	cell := func(row, q string, n int) Cell {
		return Cell{Row: []byte(row), Family: []byte("d"), Qualifier: []byte(q), Timestamp: 5, Type: kv.TypePut,
			Value: bytes.Repeat([]byte{'v'}, n)}
	}
	cells := []Cell{
		cell("1000000", "a", 10), cell("1000000", "b", 10),
		cell("1000001", "a", 11), cell("1000001", "b", 5), // the biggest cell, one byte bigger
		cell("1000002x", "a", 5), cell("1000002x", "b", 5), // a key one byte longer
	}
	o := DefaultWriterOptions()
	o.Encoding = EncodingFastDiff
	rng := rand.New(rand.NewPCG(5, 6))
	want := partsTestWrite(t, o, cells, partsAPIAppend)
	file, _, coded := rowCodedWrite(t, o, cells, newCodedDict(cells, rng), 1<<30, rng)
	compareBytes(t, "key width", file, want.file)
	if coded != 4 {
		t.Fatalf("AppendRowCoded took %d cells, want the 4 of the rows after the first", coded)
	}
}

// TestWriterAppendRowCodedFastDiffTakesToTheEnd: AppendRowCoded takes every coded cell of a row up to
// the end of coded, the last one with an empty value (two bytes) too.
func TestWriterAppendRowCodedFastDiffTakesToTheEnd(t *testing.T) {
	o := DefaultWriterOptions()
	o.Encoding = EncodingFastDiff
	w, err := NewWriter(&bytes.Buffer{}, o)
	if err != nil {
		t.Fatal(err)
	}
	quals := [][]byte{[]byte("a"), []byte("b"), []byte("c")}
	if err := w.AppendParts([]byte("1000000"), []byte("d"), []byte("a"), 5, kv.TypePut, []byte("vv"), nil); err != nil {
		t.Fatal(err)
	}
	coded := []byte{1, 2, 'v', 'v', 3, 1, 'w', 5, 0} // a: "vv", b: "w", c: ""
	if n, used := w.AppendRowCoded([]byte("1000001"), []byte("d"), 5, kv.TypePut, quals, coded); n != 3 || used != len(coded) {
		t.Fatalf("AppendRowCoded took %d cells in %d bytes, want 3 in %d", n, used, len(coded))
	}
}
