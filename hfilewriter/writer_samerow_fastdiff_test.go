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

// fastDiffRowCells returns the cells of about rows rows for the FAST_DIFF row path (appendNewRowFastDiff
// and the run, fdRun.cells), around the limits of what they take: rows of 1 to 34 bytes, many sharing a
// prefix with the row before, of its length or not, and now and then of 120 or 300 bytes (key lengths
// and common prefixes of two bytes; a row length whose high byte differs from the next row's); mostly
// puts, now and then a delete (another type byte); timestamps that differ from the row before's in any
// byte; 1 to 9 cells a row, qualifiers of 1 to 36 bytes in order, some sharing 8 bytes and more with the
// one before; values of 0 to 70 bytes, now and then the previous cell's again or one byte off it.
func fastDiffRowCells(rng *rand.Rand, rows int) []Cell {
	rowSet := map[string]bool{}
	for len(rowSet) < rows {
		n := 1 + rng.IntN(34)
		switch rng.IntN(20) {
		case 0:
			n = 120
		case 1:
			n = 300
		}
		r := make([]byte, n)
		for i := range r {
			r[i] = byte('a' + rng.IntN(2))
		}
		rowSet[string(r)] = true
	}
	var sorted []string
	for r := range rowSet {
		sorted = append(sorted, r)
	}
	slices.Sort(sorted)
	quals := []string{"a", "ab", "abcdefgh", "abcdefgh1", "abcdefgh2a", "abcdefgh2b", "abcdefghi", "abcdefghij", "abcdefghijklmnopq", "abcdefghijklmnopqr",
		"abcdefghijklmnopqrstuvwxyz0123", "abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnopqrstuvwxyz0123456",
		"abcdefghijklmnoz", "abcdefghzz", "abd", "b", "bcdefghijklmnopqrstuvw", "c", "customer_id", "order_ts", "product_id", "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq",
		"quantity", "status", "unit_price"}
	types := []Type{kv.TypePut, kv.TypePut, kv.TypePut, kv.TypePut, kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn}
	var cells []Cell
	var value []byte
	ts := int64(1700000000000)
	for _, r := range sorted {
		ts ^= rng.Int64N(256) << (8 * rng.IntN(6))
		typ := types[rng.IntN(len(types))]
		picked := map[int]bool{}
		for k := 1 + rng.IntN(9); k > 0; k-- {
			picked[rng.IntN(len(quals))] = true
		}
		var idx []int
		for i := range picked {
			idx = append(idx, i)
		}
		slices.Sort(idx)
		for _, i := range idx {
			switch rng.IntN(5) {
			case 0: // the previous value again
			case 1: // another of its length: one byte changed
				value = bytes.Clone(value)
				if len(value) > 0 {
					value[rng.IntN(len(value))] ^= 1
				}
			default:
				value = make([]byte, rng.IntN(71))
				for i := range value {
					value[i] = byte('0' + rng.IntN(10))
				}
			}
			cells = append(cells, Cell{Row: []byte(r), Family: []byte("f"), Qualifier: []byte(quals[i]), Timestamp: ts,
				Type: typ, Value: value})
		}
	}
	return cells
}

// TestWriterAppendRowFastDiffMatchesAppend: in FAST_DIFF blocks, AppendRow and AppendSameRowCells
// (appendRowFastDiff, appendNewRowFastDiff, the run) write what Append writes, cell by cell, with the
// same Stats, for both format versions, with and without compression and blooms, in small and default
// blocks, on cells around the limits of the row path (fastDiffRowCells).
func TestWriterAppendRowFastDiffMatchesAppend(t *testing.T) {
	i := 0
	for _, version := range []int{3, 2} {
		for _, comp := range []Compression{CompressionNone, CompressionSnappy} {
			for _, bloom := range []BloomType{BloomNone, BloomRow, BloomRowCol} {
				for _, bs := range []int{1024, 64 << 10} {
					i++
					o := DefaultWriterOptions()
					o.FormatVersion, o.Compression, o.Bloom, o.Encoding, o.BlockSize = version, comp, bloom, EncodingFastDiff, bs
					o.BulkLoad = &BulkLoadInfo{Time: 1} // the file info then holds the time range and the earliest put
					name := fmt.Sprintf("v%d-%s-%s-%d", version, comp, bloom, bs)
					t.Run(name, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(i), 13))
						cells := fastDiffRowCells(rng, 400)
						want := partsTestWrite(t, o, cells, partsAPIAppend)
						got := rowRunWrite(t, o, cells, rng)
						compareBytes(t, name, got.file, want.file)
						if !reflect.DeepEqual(got.stats[1], want.stats[len(want.stats)-1]) {
							t.Fatalf("Stats after Close: got %+v, want %+v", got.stats[1], want.stats[len(want.stats)-1])
						}
						if bs == 1024 && got.stats[1].DataBlocks < 20 {
							t.Fatalf("%d data blocks: the test should span many", got.stats[1].DataBlocks)
						}
					})
				}
			}
		}
	}
}

// TestWriterFastDiffRowPathTakesCells: the cells of fastDiffRowCells mostly take the row path (so that
// TestWriterAppendRowFastDiffMatchesAppend tests it): a row's first cell through appendNewRowFastDiff and
// the cells after it through the run, not appendCell.
func TestWriterFastDiffRowPathTakesCells(t *testing.T) {
	o := DefaultWriterOptions()
	o.Encoding = EncodingFastDiff
	w, err := NewWriter(&bytes.Buffer{}, o)
	if err != nil {
		t.Fatal(err)
	}
	cells := fastDiffRowCells(rand.New(rand.NewPCG(1, 2)), 400)
	rows, newRows, runCells := 0, 0, 0
	for i := 0; i < len(cells); {
		j := i + 1
		for j < len(cells) && bytes.Equal(cells[j].Row, cells[i].Row) {
			j++
		}
		var run []SameRowCell
		for k := i; k < j; k++ {
			run = append(run, SameRowCell{Qualifier: cells[k].Qualifier, Value: cells[k].Value})
		}
		c := &cells[i]
		if w.sameRowFD && w.blkHasFirst {
			if n := w.appendNewRowFastDiff(c.Row, c.Family, c.Timestamp, c.Type, run); n > 0 {
				newRows++
				runCells += n - 1
				run = run[n:]
			}
		}
		if len(run) == len(cells[i:j]) {
			if _, err := w.AppendRow(c.Row, c.Family, c.Timestamp, c.Type, run); err != nil {
				t.Fatal(err)
			}
		} else if len(run) > 0 {
			if _, err := w.AppendSameRowCells(run); err != nil {
				t.Fatal(err)
			}
		}
		rows++
		i = j
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if newRows < rows/3 || runCells < len(cells)/5 {
		t.Fatalf("%d of %d rows and %d of %d cells took the row path's run: the test should have more", newRows, rows, runCells, len(cells))
	}
}

// TestWriterAppendRowFastDiffErrors: in FAST_DIFF blocks, AppendRow stops at the cell AppendParts (the
// first) or AppendSameRow (the others) refuses, with their error, whether the row path or appendCell
// sees it first; the cells before it are in the file, and the writer goes on as theirs does.
func TestWriterAppendRowFastDiffErrors(t *testing.T) { testAppendRowErrors(t, EncodingFastDiff) }

// testAppendRowErrors is TestWriterAppendRowFastDiffErrors in blocks of encoding enc.
func testAppendRowErrors(t *testing.T, enc DataBlockEncoding) {
	const last = "row-with-a-head-of-twenty" // the last row written before each case
	for _, tc := range []struct {
		name   string
		row    string
		family string
		quals  []string
		n      int // cells appended
	}{
		{"row before the last, same length", "row-with-a-head-of-twentx", "f", []string{"a", "b"}, 0},
		{"row before the last, shorter", "row-with-a-head-of-twent", "f", []string{"a", "b"}, 0},
		{"row before the last, longer", "row-with-a-head-of-twentx-and-more", "f", []string{"a", "b"}, 0},
		{"duplicate of the last", last, "f", []string{"a", "b"}, 0},
		{"another family", "row-with-a-head-of-twenty-one", "g", []string{"a", "b"}, 0},
		{"duplicate inside", "row-with-a-head-of-twenty-one", "f", []string{"b", "c", "c", "d"}, 2},
		{"out of order inside", "row-with-a-head-of-twenty-one", "f", []string{"b", "d", "c"}, 2},
		{"longer equal prefix", "row-with-a-head-of-twenty-one", "f", []string{"b", "bb", "ba"}, 2},
		{"prefix of the previous", "row-with-a-head-of-twenty-one", "f", []string{"b", "bb", "b"}, 2},
		{"empty after empty", "row-with-a-head-of-twenty-one", "f", []string{"", ""}, 1},
		{"long qualifiers", "row-with-a-head-of-twenty-one", "f", []string{"qualifier-1", "qualifier-2", "qualifier-10"}, 2},
		{"8 shared bytes", "row-with-a-head-of-twenty-one", "f", []string{"qualifie-2", "qualifie-3", "qualifie-12"}, 2},
		{"short row", "s", "f", []string{"a", "b", "b"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultWriterOptions()
			o.Encoding = enc
			var one, many bytes.Buffer
			w1, _ := NewWriter(&one, o)
			w2, _ := NewWriter(&many, o)
			for _, w := range []*Writer{w1, w2} {
				for _, q := range []string{"a", "c"} {
					if err := w.AppendParts([]byte(last), []byte("f"), []byte(q), 5, kv.TypePut, []byte("v"), nil); err != nil {
						t.Fatal(err)
					}
				}
			}
			checkAppendRowStopsLikeOneByOne(t, tc.name, w1, w2, &one, &many, tc.row, tc.family, tc.quals, tc.n)
		})
	}
}

// TestWriterAppendRowCodedFastDiffMatchesAppend: in FAST_DIFF blocks, rows given to AppendRowCoded
// (appendRowCodedFastDiff; then AppendRow or AppendSameRowCells for the cells it does not take) are the
// file Append writes, with the same Stats, on cells around the limits of the row path
// (fastDiffRowCells), in a family of 1 byte and of 100 (key lengths and common prefixes of two bytes),
// and it takes most of the cells.
func TestWriterAppendRowCodedFastDiffMatchesAppend(t *testing.T) {
	for i, bs := range []int{1024, 64 << 10} {
		for _, version := range []int{3, 2} {
			o := DefaultWriterOptions()
			o.FormatVersion, o.Compression, o.Bloom, o.Encoding, o.BlockSize = version, CompressionSnappy, BloomRow, EncodingFastDiff, bs
			o.BulkLoad = &BulkLoadInfo{Time: 1}
			rng := rand.New(rand.NewPCG(uint64(i), 14))
			cells := fastDiffRowCells(rng, 400)
			if version == 2 {
				fam := bytes.Repeat([]byte{'f'}, 100)
				for k := range cells {
					cells[k].Family = fam
				}
			}
			want := partsTestWrite(t, o, cells, partsAPIAppend)
			file, st, coded := rowCodedWrite(t, o, cells, newCodedDict(cells, rng), 10, rng)
			name := fmt.Sprintf("v%d-%d-family%d", version, bs, len(cells[0].Family))
			compareBytes(t, name, file, want.file)
			if !reflect.DeepEqual(st, want.stats[len(want.stats)-1]) {
				t.Fatalf("%s: Stats after Close: got %+v, want %+v", name, st, want.stats[len(want.stats)-1])
			}
			if coded < len(cells)/6 {
				t.Fatalf("%s: AppendRowCoded took %d of %d cells: the test should have more", name, coded, len(cells))
			}
		}
	}
}

// TestWriterAppendRowCodedFastDiffBiggest: in FAST_DIFF blocks, with cells that grow along each row and
// from row to row (the file's biggest cell, in its file info, changes inside runs), AppendRowCoded writes
// the file Append writes.
func TestWriterAppendRowCodedFastDiffBiggest(t *testing.T) {
	var cells []Cell
	for r := range 200 {
		row := fmt.Appendf(nil, "row%05d", r)
		for k, q := range []string{"a", "b", "customer_id", "d"} {
			v := bytes.Repeat([]byte{'v'}, min(r/4+k*(r%3), 64))
			cells = append(cells, Cell{Row: row, Family: []byte("d"), Qualifier: []byte(q), Timestamp: 5, Type: kv.TypePut, Value: v})
		}
	}
	o := DefaultWriterOptions()
	o.Encoding = EncodingFastDiff
	rng := rand.New(rand.NewPCG(3, 4))
	want := partsTestWrite(t, o, cells, partsAPIAppend)
	d := newCodedDict(cells, rng)
	if len(d.quals) != 4 {
		t.Fatalf("the dictionary holds %d qualifiers, want the 4", len(d.quals))
	}
	file, _, coded := rowCodedWrite(t, o, cells, d, 10, rng)
	compareBytes(t, "biggest", file, want.file)
	if coded < len(cells)/2 {
		t.Fatalf("AppendRowCoded took %d of %d cells", coded, len(cells))
	}
}

// TestWriterAppendRowCodedFastDiffStopsAtDisorder: in FAST_DIFF blocks, AppendRowCoded takes the coded
// cells of a row up to the first whose qualifier does not sort after the one before (equal, smaller,
// a prefix of it, smaller after 8 shared bytes), and leaves that one to AppendSameRowCells, which
// refuses it as AppendSameRow does.
func TestWriterAppendRowCodedFastDiffStopsAtDisorder(t *testing.T) {
	quals := [][]byte{[]byte("a"), []byte("b"), []byte("bb"), []byte("c"), []byte("qualifie-12"), []byte("qualifie-3")}
	for _, tc := range []struct {
		name  string
		codes []int // quals indexes, in the row's order
		n     int   // cells AppendRowCoded takes
	}{
		{"in order", []int{0, 1, 2, 3}, 4},
		{"smaller", []int{1, 3, 0}, 2},
		{"equal", []int{0, 1, 1}, 2},
		{"prefix of the previous", []int{0, 2, 1}, 2},
		{"smaller after 8 shared bytes", []int{0, 5, 4}, 2},
	} {
		o := DefaultWriterOptions()
		o.Encoding = EncodingFastDiff
		var buf, oneBuf bytes.Buffer
		w, _ := NewWriter(&buf, o)
		one, _ := NewWriter(&oneBuf, o)
		for _, x := range []*Writer{w, one} {
			// The file's biggest cell: AppendRowCoded stops at a bigger one.
			if err := x.AppendParts([]byte("1000000"), []byte("d"), []byte("a"), 5, kv.TypePut, make([]byte, 20), nil); err != nil {
				t.Fatal(err)
			}
		}
		var coded []byte
		var run []SameRowCell
		for _, i := range tc.codes {
			coded = append(coded, byte(2*i+1), 2, 'v', byte('0'+i))
			run = append(run, SameRowCell{Qualifier: quals[i], Value: []byte{'v', byte('0' + i)}})
		}
		n, used := w.AppendRowCoded([]byte("1000001"), []byte("d"), 5, kv.TypePut, quals, coded)
		if n != tc.n || used != 4*n {
			t.Fatalf("%s: AppendRowCoded took %d cells in %d bytes, want %d", tc.name, n, used, tc.n)
		}
		var err1 error
		for i, c := range run {
			if i == 0 {
				err1 = one.AppendParts([]byte("1000001"), []byte("d"), c.Qualifier, 5, kv.TypePut, c.Value, nil)
			} else if err1 = one.AppendSameRow(c.Qualifier, c.Value); err1 != nil {
				break
			}
		}
		if n < len(run) {
			if _, err := w.AppendSameRowCells(run[n:]); err == nil || err1 == nil || err.Error() != err1.Error() {
				t.Fatalf("%s: AppendSameRowCells after it: %v, want %v", tc.name, err, err1)
			}
		}
		for _, x := range []*Writer{w, one} {
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
		}
		compareBytes(t, tc.name, buf.Bytes(), oneBuf.Bytes())
	}
}
