package hfilewriter

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// sameRowRunCells returns about n cells in rows of 1 to 9 cells: rows of 6 to 40 bytes (so the key
// head of row and family is below, within and above the 16 to 32 bytes appendSameRowRun keeps in
// registers), qualifiers of 0 to 40 bytes, values of 0 to 40 bytes and now and then bigger than a block,
// every storable type, and in v3 now and then a cell with tags.
func sameRowRunCells(rng *rand.Rand, n int, tags bool) []Cell {
	types := []Type{kv.TypePut, kv.TypePut, kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily, kv.TypeDeleteFamilyVersion}
	var cells []Cell
	for r := 0; len(cells) < n; r++ {
		row := append(fmt.Appendf(nil, "%06d", r), bytes.Repeat([]byte{'r'}, rng.IntN(35))...) // 6 to 40 bytes
		ts, typ := 1700000000000+rng.Int64N(1000), types[rng.IntN(len(types))]
		var q []byte
		for k := 1 + rng.IntN(9); k > 0; k-- {
			q = append(bytes.Clone(q), byte('a'+rng.IntN(3)))
			if rng.IntN(4) == 0 {
				q = append(q, bytes.Repeat([]byte{'q'}, rng.IntN(38))...)
			}
			c := Cell{Row: row, Family: []byte("cf"), Qualifier: q, Timestamp: ts, Type: typ}
			switch rng.IntN(12) {
			case 0:
			case 1:
				c.Value = bytes.Repeat([]byte{byte(rng.IntN(256))}, 1500+rng.IntN(3000))
			default:
				c.Value = bytes.Repeat([]byte{byte('0' + rng.IntN(10))}, rng.IntN(41))
			}
			if tags && rng.IntN(15) == 0 {
				c.Tags = kv.TTLTag(60000)
			}
			cells = append(cells, c)
		}
	}
	return cells
}

// sameRowRunWrite writes cells: a row's first cell with AppendParts, the cells after it that share its
// row, family, timestamp and type and have no tags together with AppendSameRowCells (split at the
// first one with tags, which takes AppendSameRowTags).
func sameRowRunWrite(t *testing.T, o WriterOptions, cells []Cell) partsTestResult {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	var run []SameRowCell
	flush := func() {
		if len(run) == 0 {
			return
		}
		n, err := w.AppendSameRowCells(run)
		if err != nil || n != len(run) {
			t.Fatalf("AppendSameRowCells of %d cells: %d, %v", len(run), n, err)
		}
		run = run[:0]
	}
	for i := range cells {
		c := &cells[i]
		same := i > 0 && bytes.Equal(c.Row, cells[i-1].Row) && c.Timestamp == cells[i-1].Timestamp && c.Type == cells[i-1].Type
		switch {
		case same && len(c.Tags) == 0:
			run = append(run, SameRowCell{Qualifier: c.Qualifier, Value: c.Value})
			continue
		case same:
			flush()
			err = w.AppendSameRowTags(c.Qualifier, c.Value, c.Tags)
		default:
			flush()
			err = w.AppendParts(c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value, c.Tags)
		}
		if err != nil {
			t.Fatalf("cell %d (%s): %v", i, c, err)
		}
	}
	flush()
	res := partsTestResult{stats: []WriterStats{w.Stats()}, estimates: []int64{w.EstimatedSize()}}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res.stats = append(res.stats, w.Stats())
	res.file = buf.Bytes()
	return res
}

// TestWriterAppendSameRowCellsMatchesAppend: AppendSameRowCells writes what Append writes, for every
// format version, codec, encoding and bloom type, with rows whose key head is shorter than, within and
// longer than what the run keeps in registers, and with many blocks (boundaries inside runs).
func TestWriterAppendSameRowCellsMatchesAppend(t *testing.T) {
	writerMatrix(func(i int, name string, o WriterOptions) {
		o.IndexBlockMaxSize, o.BloomBlockSize = 512, 256
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 7))
			cells := sameRowRunCells(rng, 600, o.FormatVersion == 3)
			want := partsTestWrite(t, o, cells, partsAPIAppend)
			got := sameRowRunWrite(t, o, cells)
			compareBytes(t, name, got.file, want.file)
			if !reflect.DeepEqual(got.stats[1], want.stats[len(want.stats)-1]) {
				t.Fatalf("Stats after Close: got %+v, want %+v", got.stats[1], want.stats[len(want.stats)-1])
			}
			if got.stats[1].DataBlocks < 10 {
				t.Fatalf("%d data blocks: the test should span many", got.stats[1].DataBlocks)
			}
		})
	})
}

// TestWriterAppendSameRowCellsEstimate: the size estimate and Stats after a run are those after the
// same cells appended one by one.
func TestWriterAppendSameRowCellsEstimate(t *testing.T) {
	o := DefaultWriterOptions()
	o.BlockSize = 512
	rng := rand.New(rand.NewPCG(3, 3))
	cells := sameRowRunCells(rng, 400, false)
	for i := range cells {
		cells[i].Tags = nil
	}
	var one, many bytes.Buffer
	w1, _ := NewWriter(&one, o)
	w2, _ := NewWriter(&many, o)
	var run []SameRowCell
	for i := range cells {
		c := &cells[i]
		if i > 0 && bytes.Equal(c.Row, cells[i-1].Row) && c.Timestamp == cells[i-1].Timestamp && c.Type == cells[i-1].Type {
			if err := w1.AppendSameRow(c.Qualifier, c.Value); err != nil {
				t.Fatal(err)
			}
			run = append(run, SameRowCell{Qualifier: c.Qualifier, Value: c.Value})
			continue
		}
		if len(run) > 0 {
			if n, err := w2.AppendSameRowCells(run); err != nil || n != len(run) {
				t.Fatalf("%d, %v", n, err)
			}
			run = run[:0]
			if a, b := w1.EstimatedSize(), w2.EstimatedSize(); a != b {
				t.Fatalf("before cell %d: EstimatedSize %d one by one, %d in runs", i, a, b)
			}
			if a, b := w1.Stats(), w2.Stats(); !reflect.DeepEqual(a, b) {
				t.Fatalf("before cell %d: Stats %+v one by one, %+v in runs", i, a, b)
			}
		}
		for _, w := range []*Writer{w1, w2} {
			if err := w.AppendParts(c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestWriterAppendSameRowCellsErrors: a run stops at a cell AppendSameRow refuses (a qualifier equal
// to or before the previous one, inside the run or at its start) with AppendSameRow's error; the cells
// before it are in the file, and the writer goes on as AppendSameRow's does.
func TestWriterAppendSameRowCellsErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quals []string
		n     int // cells appended
	}{
		{"duplicate inside", []string{"b", "c", "c", "d"}, 2},
		{"out of order inside", []string{"b", "d", "c"}, 2},
		{"duplicate of the row's first", []string{"a", "b"}, 0},
		{"before the row's first", []string{"", "b"}, 0},
		{"longer equal prefix", []string{"b", "bb", "ba"}, 2},
		{"prefix of the previous", []string{"b", "bb", "b"}, 2},
	} {
		for _, enc := range []DataBlockEncoding{EncodingNone, EncodingFastDiff} { // FAST_DIFF: appendSameRowRunFastDiff
			t.Run(tc.name+"-"+enc.String(), func(t *testing.T) {
				o := DefaultWriterOptions()
				o.Encoding = enc
				var one, many bytes.Buffer
				w1, _ := NewWriter(&one, o)
				w2, _ := NewWriter(&many, o)
				row := []byte("row-with-a-head-of-twenty")
				for _, w := range []*Writer{w1, w2} {
					if err := w.AppendParts(row, []byte("f"), []byte("a"), 5, kv.TypePut, []byte("v"), nil); err != nil {
						t.Fatal(err)
					}
				}
				var run []SameRowCell
				var err1 error
				for i, q := range tc.quals {
					run = append(run, SameRowCell{Qualifier: []byte(q), Value: []byte("value")})
					if err1 == nil {
						if err1 = w1.AppendSameRow([]byte(q), []byte("value")); err1 != nil && i != tc.n {
							t.Fatalf("AppendSameRow refused cell %d, want %d: %v", i, tc.n, err1)
						}
					}
				}
				n, err2 := w2.AppendSameRowCells(run)
				if n != tc.n || err2 == nil || err1 == nil || err2.Error() != err1.Error() {
					t.Fatalf("AppendSameRowCells: %d, %v; want %d, %v", n, err2, tc.n, err1)
				}
				for _, w := range []*Writer{w1, w2} {
					if err := w.AppendSameRow([]byte("z"), []byte("last")); err != nil {
						t.Fatal(err)
					}
					if err := w.Close(); err != nil {
						t.Fatal(err)
					}
				}
				compareBytes(t, tc.name, many.Bytes(), one.Bytes())
			})
		}
	}
}
