package hfilewriter

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestWriterAppendRowCodedMidHeadTakes: with a key head of 16 to 32 bytes (codedCells) or 33 to 64
// (codedCellsLong), AppendRowCoded takes qualifiers of up to 8 bytes with values of up to 32 (each
// value length around the moves it makes: 0-3, 4-7, 8-16, 17-32) and stops at a value of 33 bytes, at
// a qualifier of 9 bytes, at a cell bigger than the file's biggest and at a code past the qualifiers;
// once a bigger cell is in the file it takes cells up to that size; the files are the ones Append
// writes.
func TestWriterAppendRowCodedMidHeadTakes(t *testing.T) {
	fam := []byte("d")
	for _, rowLen := range []int{12, 13, 20, 28, 29, 30, 40, 60} {
		quals := [][]byte{[]byte("a"), []byte(""), []byte("bbbbbbbb"), []byte("ccccccccc")}
		quals[0], quals[1] = quals[1], quals[0] // in order: "", "a", ...
		for _, vl := range []int{0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33} {
			name := fmt.Sprintf("row of %d bytes, values of %d", rowLen, vl)
			o := DefaultWriterOptions()
			row := func(i int) []byte { return append(bytes.Repeat([]byte{'r'}, rowLen-1), byte('0'+i)) }
			// The biggest cell: qualifier and value 8 + 32 bytes (every cell of the run is within it).
			first := Cell{Row: row(0), Family: fam, Qualifier: quals[2], Timestamp: 5, Type: kv.TypePut, Value: make([]byte, 32)}
			v := make([]byte, vl)
			for k := range v {
				v[k] = byte('a' + k%26)
			}
			var coded []byte
			var cells []Cell
			for k, q := range quals {
				coded = append(append(coded, byte(2*k+1), byte(vl)), v...)
				cells = append(cells, Cell{Row: row(1), Family: fam, Qualifier: q, Timestamp: 5, Type: kv.TypePut, Value: v})
			}
			var got bytes.Buffer
			w, err := NewWriter(&got, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Append(&first); err != nil {
				t.Fatal(err)
			}
			want := 3 // "", "a" and "bbbbbbbb", not the 9-byte qualifier
			if vl > 32 {
				want = 0
			}
			n, used := w.AppendRowCoded(row(1), fam, 5, kv.TypePut, quals, coded)
			if n != want || used != want*(2+vl) {
				t.Fatalf("%s: AppendRowCoded took %d cells in %d bytes, want %d in %d", name, n, used, want, want*(2+vl))
			}
			if n == 0 {
				if err := w.Append(&cells[0]); err != nil {
					t.Fatal(err)
				}
				n = 1
			}
			rest := make([]SameRowCell, 0, 4)
			for _, c := range cells[n:] {
				rest = append(rest, SameRowCell{Qualifier: c.Qualifier, Value: c.Value})
			}
			if m, err := w.AppendSameRowCells(rest); m != len(rest) || err != nil {
				t.Fatal(m, err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			var wantFile bytes.Buffer
			if _, err := WriteCells(&wantFile, append([]Cell{first}, cells...), o); err != nil {
				t.Fatal(err)
			}
			compareBytes(t, name, got.Bytes(), wantFile.Bytes())
		}
		// The biggest cell so far bounds the run, and a bigger one written the usual way widens it.
		w, err := NewWriter(&bytes.Buffer{}, DefaultWriterOptions())
		if err != nil {
			t.Fatal(err)
		}
		row := func(i int) []byte { return append(bytes.Repeat([]byte{'r'}, rowLen-2), byte('0'+i/10), byte('0'+i%10)) }
		if err := w.Append(&Cell{Row: row(0), Family: fam, Qualifier: []byte("a"), Timestamp: 5, Type: kv.TypePut,
			Value: make([]byte, 20)}); err != nil { // 1 + 20 bytes
			t.Fatal(err)
		}
		q3 := [][]byte{[]byte("a"), []byte("b"), []byte("custid")}
		cell := func(code, vl int) []byte { return append([]byte{byte(code), byte(vl)}, make([]byte, vl)...) }
		for i, tc := range []struct {
			coded []byte
			want  int
		}{
			{append(cell(1, 20), cell(3, 21)...), 1}, // as big, then one byte bigger
			{append(cell(1, 5), cell(5, 16)...), 1},  // custid: 6 + 16, one byte bigger
			{append(cell(1, 5), cell(5, 15)...), 2},  // 6 + 15: as big
			{append(cell(1, 5), cell(7, 0)...), 1},   // a code past the qualifiers
			{append(cell(3, 5), cell(1, 0)...), 1},   // codes out of order
		} {
			if n, _ := w.AppendRowCoded(row(i+1), fam, 5, kv.TypePut, q3, tc.coded); n != tc.want {
				t.Fatalf("row of %d bytes, case %d: AppendRowCoded took %d cells, want %d", rowLen, i, n, tc.want)
			}
			if n, err := w.AppendSameRowCells(nil); n != 0 || err != nil {
				t.Fatal(n, err)
			}
		}
		if n, err := w.AppendRow(row(10), fam, 5, kv.TypePut, []SameRowCell{{Qualifier: []byte("a"), Value: make([]byte, 31)}}); n != 1 || err != nil {
			t.Fatal(n, err)
		}
		if n, _ := w.AppendRowCoded(row(11), fam, 5, kv.TypePut, q3, append(cell(1, 31), cell(5, 26)...)); n != 2 {
			t.Fatalf("row of %d bytes, after a bigger cell: AppendRowCoded took %d cells, want 2", rowLen, n)
		}
	}
}
