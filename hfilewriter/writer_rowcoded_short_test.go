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

// shortHeadCells returns the cells of about n rows of 1 to 14 random bytes (key heads of 5 to 20 bytes
// in a one-byte family, around codedCellsShort's 15), in family, in order: each row one to eight cells
// of a timestamp and type (mostly puts), with qualifiers of 0 to 18 bytes (around the 8 of codedCells
// and the 16 of codedCellsShort) and values of 0 to 130 bytes (around 8, 16, 32, 64 and a coded cell's
// 127), as order rows are (7-byte ids, qualifiers such as customer_id, values up to ~60 bytes).
func shortHeadCells(rng *rand.Rand, n int, family []byte) []Cell {
	rows := randomRows(rng, n, 14, '0')
	var quals [][]byte
	for _, l := range []int{0, 1, 6, 7, 8, 8, 9, 10, 11, 15, 16, 16, 17, 18} {
		q := make([]byte, l)
		for k := range q {
			q[k] = byte('a' + rng.IntN(3))
		}
		quals = append(quals, q)
	}
	slices.SortFunc(quals, bytes.Compare)
	quals = slices.CompactFunc(quals, bytes.Equal)
	lens := []int{0, 1, 5, 8, 9, 15, 16, 17, 19, 31, 32, 33, 40, 63, 64, 65, 100, 126, 127, 128, 130}
	types := []Type{kv.TypePut, kv.TypePut, kv.TypePut, kv.TypePut, kv.TypePut, kv.TypeDelete}
	var cells []Cell
	for _, row := range rows {
		ts, typ := rng.Int64N(1<<42), types[rng.IntN(len(types))]
		first := rng.IntN(len(quals))
		for k := first; k < len(quals) && k < first+1+rng.IntN(8); k++ {
			v := make([]byte, lens[rng.IntN(len(lens))])
			for j := range v {
				v[j] = byte('a' + rng.IntN(26))
			}
			cells = append(cells, Cell{Row: row, Family: family, Qualifier: quals[k], Timestamp: ts, Type: typ, Value: v})
		}
	}
	return cells
}

// TestWriterAppendRowCodedShortHeads: rows of 1 to 14 bytes, with qualifiers of up to 18 bytes and
// values of up to 130, given to AppendRowCoded (then AppendRow or AppendSameRowCells for the cells it
// does not take) are the file Append writes, with the same Stats, for every format version, codec,
// encoding and bloom type, in families of 1 and 2 bytes, with 1 KiB and 4 KiB blocks; and where blocks
// are unencoded and there is no ROWCOL bloom, it takes most cells.
func TestWriterAppendRowCodedShortHeads(t *testing.T) {
	families := [][]byte{[]byte("d"), []byte("cf")}
	writerMatrix(func(i int, name string, o WriterOptions) {
		o.IndexBlockMaxSize, o.BloomBlockSize = 512, 256
		o.BulkLoad = &BulkLoadInfo{Time: 1}
		if i%2 == 0 {
			o.BlockSize = 4096
		}
		fam := families[i%len(families)]
		t.Run(fmt.Sprintf("%s-%s-%d", name, fam, o.BlockSize), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 15))
			cells := shortHeadCells(rng, 500, fam)
			want := partsTestWrite(t, o, cells, partsAPIAppend)
			file, st, coded := rowCodedWrite(t, o, cells, newCodedDict(cells, rng), 10, rng)
			compareBytes(t, name, file, want.file)
			if !reflect.DeepEqual(st, want.stats[len(want.stats)-1]) {
				t.Fatalf("Stats after Close: got %+v, want %+v", st, want.stats[len(want.stats)-1])
			}
			if fast := (o.Encoding == EncodingNone || o.Encoding == EncodingFastDiff) && o.Bloom != BloomRowCol; fast != (coded > len(cells)/4) {
				t.Fatalf("AppendRowCoded took %d of %d cells", coded, len(cells))
			}
		})
	})
}

// TestWriterAppendRowCodedShortHeadTakes: with a short key head, AppendRowCoded takes qualifiers of up
// to 16 bytes and values of up to 127 (each size around the moves it makes), and stops at a qualifier
// of 17 bytes; the file is the one Append writes.
func TestWriterAppendRowCodedShortHeadTakes(t *testing.T) {
	fam := []byte("d")
	quals := [][]byte{[]byte("a"), []byte("customer_id"), []byte("eeeeeeeeeeeeeeee"), []byte("fffffffffffffffff")}
	for _, vl := range []int{0, 7, 8, 9, 16, 17, 32, 33, 64, 65, 127} {
		o := DefaultWriterOptions()
		first := Cell{Row: []byte("1000000"), Family: fam, Qualifier: []byte("a"), Timestamp: 5, Type: kv.TypePut, Value: make([]byte, 300)}
		v := bytes.Repeat([]byte{'v'}, vl)
		for k := range v {
			v[k] = byte('a' + k%26)
		}
		row := []byte("1000001")
		var coded []byte
		var cells []Cell
		for k, q := range quals {
			coded = append(append(coded, byte(2*k+1), byte(vl)), v...)
			cells = append(cells, Cell{Row: row, Family: fam, Qualifier: q, Timestamp: 5, Type: kv.TypePut, Value: v})
		}
		var got bytes.Buffer
		w, err := NewWriter(&got, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Append(&first); err != nil {
			t.Fatal(err)
		}
		n, used := w.AppendRowCoded(row, fam, 5, kv.TypePut, quals, coded)
		if n != 3 || used != 3*(2+vl) {
			t.Fatalf("values of %d bytes: AppendRowCoded took %d cells in %d bytes, want 3 in %d", vl, n, used, 3*(2+vl))
		}
		if m, err := w.AppendSameRowCells([]SameRowCell{{Qualifier: quals[3], Value: v}}); m != 1 || err != nil {
			t.Fatal(m, err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if _, err := WriteCells(&want, append([]Cell{first}, cells...), o); err != nil {
			t.Fatal(err)
		}
		compareBytes(t, fmt.Sprintf("values of %d bytes", vl), got.Bytes(), want.Bytes())
	}
	// It stops at a cell whose value length is not one byte below 0x80 (a uvarint's first byte: not a
	// coded cell).
	w, err := NewWriter(&bytes.Buffer{}, DefaultWriterOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&Cell{Row: []byte("1000000"), Family: fam, Type: kv.TypePut, Value: make([]byte, 300)}); err != nil {
		t.Fatal(err)
	}
	coded := append([]byte{1, 1, 'x', 3, 0x80, 1}, make([]byte, 128)...)
	if n, used := w.AppendRowCoded([]byte("1000001"), fam, 5, kv.TypePut, quals, coded); n != 1 || used != 3 {
		t.Fatalf("a value length of 0x80: AppendRowCoded took %d cells in %d bytes, want 1 in 3", n, used)
	}
	// It takes none in a block that a big cell took far past its size (the next cell starts a block).
	o := DefaultWriterOptions()
	o.BlockSize = 1024
	if w, err = NewWriter(&bytes.Buffer{}, o); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(&Cell{Row: []byte("1000000"), Family: fam, Type: kv.TypePut, Value: make([]byte, 3000)}); err != nil {
		t.Fatal(err)
	}
	if n, used := w.AppendRowCoded([]byte("1000001"), fam, 5, kv.TypePut, quals, []byte{1, 1, 'x'}); n != 0 || used != 0 {
		t.Fatalf("a block past its size: AppendRowCoded took %d cells in %d bytes", n, used)
	}
}

// TestWriterAppendRowCodedShortHeadBiggest: with a short key head, a run stops before a cell bigger
// than the file's biggest so far and takes one as big; once a bigger cell is in the file, it takes the
// cells up to that size; and it stops at a code past the qualifiers and at codes out of order.
func TestWriterAppendRowCodedShortHeadBiggest(t *testing.T) {
	fam := []byte("d")
	quals := [][]byte{[]byte("a"), []byte("b"), []byte("customer_id")}
	w, err := NewWriter(&bytes.Buffer{}, DefaultWriterOptions())
	if err != nil {
		t.Fatal(err)
	}
	// The biggest cell: qualifier and value 1 + 20 bytes.
	if err := w.Append(&Cell{Row: []byte("1000000"), Family: fam, Qualifier: []byte("a"), Timestamp: 5, Type: kv.TypePut,
		Value: make([]byte, 20)}); err != nil {
		t.Fatal(err)
	}
	cell := func(code, vl int) []byte { return append([]byte{byte(code), byte(vl)}, make([]byte, vl)...) }
	for _, tc := range []struct {
		row   string
		coded []byte
		want  int
	}{
		{"1000001", append(cell(1, 20), cell(3, 21)...), 1}, // as big, then one byte bigger
		{"1000002", append(cell(1, 5), cell(5, 11)...), 1},  // customer_id: 11 + 11, one byte bigger
		{"1000003", append(cell(1, 5), cell(5, 10)...), 2},  // 11 + 10: as big
		{"1000004", append(cell(1, 5), cell(7, 0)...), 1},   // a code past the qualifiers
		{"10000045", append(cell(3, 5), cell(1, 0)...), 1},  // codes out of order
	} {
		if n, _ := w.AppendRowCoded([]byte(tc.row), fam, 5, kv.TypePut, quals, tc.coded); n != tc.want {
			t.Fatalf("row %s: AppendRowCoded took %d cells, want %d", tc.row, n, tc.want)
		}
		if n, err := w.AppendSameRowCells(nil); n != 0 || err != nil {
			t.Fatal(n, err)
		}
	}
	// A bigger cell through the usual way: 1 + 60 bytes. The run then takes cells up to that size.
	if n, err := w.AppendRow([]byte("1000005"), fam, 5, kv.TypePut, []SameRowCell{{Qualifier: []byte("a"), Value: make([]byte, 60)}}); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if n, _ := w.AppendRowCoded([]byte("1000006"), fam, 5, kv.TypePut, quals, append(cell(1, 60), cell(5, 50)...)); n != 2 {
		t.Fatalf("after a bigger cell: AppendRowCoded took %d cells, want 2", n)
	}
}
