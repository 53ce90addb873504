package hfilewriter

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// rowRunWrite writes cells with AppendRow: each stretch of cells that share row, family, timestamp and
// type, from its first on while they have no tags, in one call (now and then in two, the second starting
// inside the row, which AppendRow takes the usual way); a cell with tags alone (AppendParts or
// AppendSameRowTags) and the untagged cells after it with AppendSameRowCells. It checks EstimatedSize
// against one, a writer given the same cells one by one (AppendParts and AppendSameRow), after every
// call, and returns the file and the Stats before and after Close.
func rowRunWrite(t *testing.T, o WriterOptions, cells []Cell, rng *rand.Rand) partsTestResult {
	t.Helper()
	var buf, oneBuf bytes.Buffer
	w, err := NewWriter(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	one, err := NewWriter(&oneBuf, o)
	if err != nil {
		t.Fatal(err)
	}
	same := func(i int) bool {
		a, b := &cells[i-1], &cells[i]
		return bytes.Equal(a.Row, b.Row) && a.Timestamp == b.Timestamp && a.Type == b.Type
	}
	var run []SameRowCell
	for i := 0; i < len(cells); {
		c := &cells[i]
		start := i == 0 || !same(i)
		if len(c.Tags) > 0 {
			if start {
				err = w.AppendParts(c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value, c.Tags)
			} else {
				err = w.AppendSameRowTags(c.Qualifier, c.Value, c.Tags)
			}
			if err != nil {
				t.Fatalf("cell %d (%s): %v", i, c, err)
			}
			if err := one.AppendParts(c.Row, c.Family, c.Qualifier, c.Timestamp, c.Type, c.Value, c.Tags); err != nil {
				t.Fatal(err)
			}
			i++
			continue
		}
		// The untagged cells from i on in c's row, or the first few of them.
		j := i + 1
		for j < len(cells) && same(j) && len(cells[j].Tags) == 0 {
			j++
		}
		if j-i > 1 && rng.IntN(5) == 0 {
			j = i + 1 + rng.IntN(j-i-1)
		}
		run = run[:0]
		for k := i; k < j; k++ {
			run = append(run, SameRowCell{Qualifier: cells[k].Qualifier, Value: cells[k].Value})
			if err := one.AppendParts(cells[k].Row, cells[k].Family, cells[k].Qualifier, cells[k].Timestamp, cells[k].Type, cells[k].Value, nil); err != nil {
				t.Fatal(err)
			}
		}
		var n int
		if start || rng.IntN(2) == 0 {
			n, err = w.AppendRow(c.Row, c.Family, c.Timestamp, c.Type, run)
		} else {
			n, err = w.AppendSameRowCells(run)
		}
		if err != nil || n != len(run) {
			t.Fatalf("cells %d to %d: %d, %v", i, j, n, err)
		}
		if a, b := w.EstimatedSize(), one.EstimatedSize(); a != b {
			t.Fatalf("after cell %d: EstimatedSize %d, %d one by one", j-1, a, b)
		}
		i = j
	}
	res := partsTestResult{stats: []WriterStats{w.Stats()}, estimates: []int64{w.EstimatedSize()}}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res.stats = append(res.stats, w.Stats())
	res.file = buf.Bytes()
	return res
}

// TestWriterAppendRowMatchesAppend: AppendRow writes what Append writes, for every format version,
// codec, encoding and bloom type, with rows whose key head is shorter than, within and longer than
// what the run keeps in an array, qualifiers and values shorter and longer than the run's word moves
// take, and many blocks (boundaries inside rows).
func TestWriterAppendRowMatchesAppend(t *testing.T) {
	writerMatrix(func(i int, name string, o WriterOptions) {
		o.IndexBlockMaxSize, o.BloomBlockSize = 512, 256
		o.BulkLoad = &BulkLoadInfo{Time: 1} // the file info then holds the time range and the earliest put
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 11))
			cells := sameRowRunCells(rng, 600, o.FormatVersion == 3)
			want := partsTestWrite(t, o, cells, partsAPIAppend)
			got := rowRunWrite(t, o, cells, rng)
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

// shortRowCells returns the cells of TestWriterAppendRowShortCells: 2,000 rows of 13 to 16 bytes (key
// heads of 17 to 20 bytes with family "f"), each with 1 to 6 ascending qualifiers of up to 9 bytes, values
// of 0 to 33 bytes and a random timestamp per row.
func shortRowCells(rng *rand.Rand) []Cell {
	var cells []Cell
	for r := 0; r < 2000; r++ {
		row := []byte{byte('a' + r/256), byte(r), 'r', 'o', 'w', '-', 'k', 'e', 'y', '-', 'x', '-', '0', '1', '2', '3'}
		row = row[:13+rng.IntN(4)]
		q, ts := []byte{}, rng.Int64N(1<<40)
		for k := rng.IntN(6); k >= 0; k-- {
			q = append(bytes.Clone(q), bytes.Repeat([]byte{byte('a' + rng.IntN(3))}, 1+rng.IntN(3))...)
			if len(q) > 9 {
				break
			}
			cells = append(cells, Cell{Row: row, Family: []byte("f"), Qualifier: q, Timestamp: ts,
				Type: kv.TypePut, Value: bytes.Repeat([]byte{byte(r)}, rng.IntN(34))})
		}
	}
	return cells
}

// TestWriterAppendRowShortCells: rows of puts with qualifiers of 0 to 9 bytes and values of 0 to 33 (the
// lengths around what the run moves as words) and timestamps at random (the time range comes from rows
// AppendRow takes in one pass), in blocks of 128 bytes and 4 KiB, written with AppendRow, are the same
// file as written cell by cell.
func TestWriterAppendRowShortCells(t *testing.T) {
	for i, o := range []WriterOptions{DefaultWriterOptions(), {FormatVersion: 2, NoMVCC: true}} {
		o.BlockSize = 128 << (5 * i)
		o.BulkLoad = &BulkLoadInfo{Time: 1} // the file info then holds the time range and the earliest put
		rng := rand.New(rand.NewPCG(5, 5))
		cells := shortRowCells(rng)
		want := partsTestWrite(t, o, cells, partsAPIAppend)
		got := rowRunWrite(t, o, cells, rand.New(rand.NewPCG(1, 2)))
		compareBytes(t, "short cells", got.file, want.file)
		if !reflect.DeepEqual(got.stats[1], want.stats[len(want.stats)-1]) {
			t.Fatalf("Stats after Close: got %+v, want %+v", got.stats[1], want.stats[len(want.stats)-1])
		}
	}
}

// TestWriterAppendRowErrors: AppendRow stops at the cell AppendParts (the first) or AppendSameRow (the
// others) refuses, with their error; the cells before it are in the file, and the writer goes on as
// theirs does.
func TestWriterAppendRowErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		row   string
		quals []string
		n     int // cells appended
	}{
		{"row before the last", "row-with-a-head-of-twent", []string{"a", "b"}, 0},
		{"duplicate of the last", "row-with-a-head-of-twenty", []string{"a", "b"}, 0},
		{"duplicate inside", "row-with-a-head-of-twenty-one", []string{"b", "c", "c", "d"}, 2},
		{"out of order inside", "row-with-a-head-of-twenty-one", []string{"b", "d", "c"}, 2},
		{"longer equal prefix", "row-with-a-head-of-twenty-one", []string{"b", "bb", "ba"}, 2},
		{"empty after empty", "row-with-a-head-of-twenty-one", []string{"", ""}, 1},
		{"long qualifiers", "row-with-a-head-of-twenty-one", []string{"qualifier-1", "qualifier-2", "qualifier-10"}, 2},
		{"short head", "s", []string{"a", "b", "b"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultWriterOptions()
			var one, many bytes.Buffer
			w1, _ := NewWriter(&one, o)
			w2, _ := NewWriter(&many, o)
			for _, w := range []*Writer{w1, w2} {
				if err := w.AppendParts([]byte("row-with-a-head-of-twenty"), []byte("f"), []byte("a"), 5, kv.TypePut, []byte("v"), nil); err != nil {
					t.Fatal(err)
				}
			}
			checkAppendRowStopsLikeOneByOne(t, tc.name, w1, w2, &one, &many, tc.row, "f", tc.quals, tc.n)
		})
	}
}

// TestWriterKeyValueBytes: KeyValueBytes is the sum of the cells' KeyValue sizes without tags after
// every cell, whichever way each was appended (with tags, in runs, rows together, encoded blocks).
func TestWriterKeyValueBytes(t *testing.T) {
	for _, enc := range []DataBlockEncoding{EncodingNone, EncodingFastDiff} {
		o := DefaultWriterOptions()
		o.Encoding, o.BlockSize = enc, 1024
		rng := rand.New(rand.NewPCG(9, 9))
		cells := sameRowRunCells(rng, 500, true)
		w, err := NewWriter(&bytes.Buffer{}, o)
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for i := 0; i < len(cells); {
			c := &cells[i]
			j := i + 1
			for j < len(cells) && bytes.Equal(cells[j].Row, c.Row) && cells[j].Timestamp == c.Timestamp && cells[j].Type == c.Type &&
				len(cells[j].Tags) == 0 && len(c.Tags) == 0 {
				j++
			}
			if j-i > 1 {
				run := make([]SameRowCell, 0, j-i)
				for k := i; k < j; k++ {
					run = append(run, SameRowCell{Qualifier: cells[k].Qualifier, Value: cells[k].Value})
				}
				if n, err := w.AppendRow(c.Row, c.Family, c.Timestamp, c.Type, run); err != nil || n != len(run) {
					t.Fatalf("%d, %v", n, err)
				}
			} else if err := w.Append(c); err != nil {
				t.Fatal(err)
			}
			for k := i; k < j; k++ {
				want += int64(8 + cells[k].KeyLen() + len(cells[k].Value))
			}
			if got := w.KeyValueBytes(); got != want {
				t.Fatalf("%s: after cell %d: KeyValueBytes %d, want %d", enc, j-1, got, want)
			}
			i = j
		}
	}
}

// checkAppendRowStopsLikeOneByOne gives w1 the cells of quals (value "value") one by one, AppendParts
// for the first and AppendSameRow for the others, and w2 the same cells with AppendRow: both must stop at
// cell n with the same error and, after one more row and Close, have written the same bytes (one, many).
func checkAppendRowStopsLikeOneByOne(t *testing.T, name string, w1, w2 *Writer, one, many *bytes.Buffer, row, family string, quals []string, n int) {
	t.Helper()
	var run []SameRowCell
	var err1 error
	for i, q := range quals {
		run = append(run, SameRowCell{Qualifier: []byte(q), Value: []byte("value")})
		if err1 != nil {
			continue
		}
		if i == 0 {
			err1 = w1.AppendParts([]byte(row), []byte(family), []byte(q), 5, kv.TypePut, []byte("value"), nil)
		} else {
			err1 = w1.AppendSameRow([]byte(q), []byte("value"))
		}
		if err1 != nil && i != n {
			t.Fatalf("one by one: cell %d refused, want %d: %v", i, n, err1)
		}
	}
	got, err2 := w2.AppendRow([]byte(row), []byte(family), 5, kv.TypePut, run)
	if got != n || err2 == nil || err1 == nil || err2.Error() != err1.Error() {
		t.Fatalf("AppendRow: %d, %v; want %d, %v", got, err2, n, err1)
	}
	for _, w := range []*Writer{w1, w2} {
		if err := w.AppendParts([]byte("zz"), []byte("f"), []byte("z"), 5, kv.TypePut, []byte("last"), nil); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	compareBytes(t, name, many.Bytes(), one.Bytes())
}
