package hfilewriter

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hfload/hfload/internal/kv"
)

// TestWriterAppendNewRowCodedMatchesAppendRowCoded: AppendNewRowCoded takes, row by row, exactly the
// cells AppendRowCoded takes in an unencoded or FAST_DIFF file without a ROWCOL bloom (none in other files), except
// that it takes none of a row once EstimatedSize() has reached maxSize (a limit equal to an estimate the
// rows pass through, so the boundary itself is checked); the files are Append's, for every format
// version, codec, encoding and bloom type.
func TestWriterAppendNewRowCodedMatchesAppendRowCoded(t *testing.T) {
	writerMatrix(func(i int, name string, o WriterOptions) {
		o.IndexBlockMaxSize, o.BloomBlockSize = 512, 256
		o.BulkLoad = &BulkLoadInfo{Time: 1}
		t.Run(name, func(t *testing.T) {
			cells := sameRowRunCells(rand.New(rand.NewPCG(uint64(i), 13)), 600, o.FormatVersion == 3)
			want := partsTestWrite(t, o, cells, partsAPIAppend)
			write := func(by func(w *Writer, c *Cell, quals [][]byte, enc []byte) (int, int)) ([]byte, WriterStats) {
				rng := rand.New(rand.NewPCG(uint64(i), 14)) // the same dictionaries for each path
				file, st, _ := rowCodedWriteBy(t, o, cells, newCodedDict(cells, rng), 10, rng, by)
				compareBytes(t, name, file, want.file)
				if !reflect.DeepEqual(st, want.stats[len(want.stats)-1]) {
					t.Fatalf("Stats after Close: got %+v, want %+v", st, want.stats[len(want.stats)-1])
				}
				return file, st
			}
			var takes []int
			var sizes []int64
			write(func(w *Writer, c *Cell, quals [][]byte, enc []byte) (int, int) {
				sizes = append(sizes, w.EstimatedSize())
				n, used := w.AppendRowCoded(c.Row, c.Family, c.Timestamp, c.Type, quals, enc)
				takes = append(takes, n)
				return n, used
			})
			fast := (o.Encoding == EncodingNone || o.Encoding == EncodingFastDiff) && o.Bloom != BloomRowCol
			for _, maxSize := range []int64{0, sizes[len(sizes)/2]} {
				k, taken, refused := 0, 0, 0
				write(func(w *Writer, c *Cell, quals [][]byte, enc []byte) (int, int) {
					est := w.EstimatedSize()
					n, used := w.AppendNewRowCoded(c.Row, c.Family, c.Timestamp, c.Type, quals, enc, maxSize)
					wantN := takes[k]
					if !fast || maxSize > 0 && est >= maxSize {
						wantN = 0
						refused += min(takes[k], 1)
					}
					if n != wantN {
						t.Fatalf("maxSize %d, row %d (%s), estimated size %d: AppendNewRowCoded took %d cells, AppendRowCoded %d",
							maxSize, k, c, est, n, takes[k])
					}
					k++
					taken += n
					return n, used
				})
				if k != len(takes) || fast != (taken > 0) || fast && maxSize > 0 && refused == 0 {
					t.Fatalf("maxSize %d: %d rows of %d, %d cells taken, %d rows refused for the size", maxSize, k, len(takes), taken, refused)
				}
			}
		})
	})
}

// TestWriterAppendNewRowCodedRefuses: AppendNewRowCoded takes no cell, and writes nothing, of the last
// row again, a row before it, a delete, a first cell that is not a coded cell, another family, or a file
// at its size limit; the same row is then taken below the limit.
func TestWriterAppendNewRowCodedRefuses(t *testing.T) {
	w, err := NewWriter(&bytes.Buffer{}, DefaultWriterOptions())
	if err != nil {
		t.Fatal(err)
	}
	fam := []byte("f")
	if err := w.Append(&Cell{Row: []byte("row-0000000000001"), Family: fam, Qualifier: []byte("a"), Type: kv.TypePut,
		Value: []byte("a twenty-byte value.")}); err != nil {
		t.Fatal(err)
	}
	row := []byte("row-0000000000002")
	quals := [][]byte{[]byte("a"), []byte("b")}
	coded := []byte{1, 1, 'x', 3, 2, 'y', 'z'}
	size := w.EstimatedSize()
	for _, tc := range []struct {
		name    string
		row     []byte
		fam     []byte
		typ     Type
		coded   []byte
		maxSize int64
	}{
		{"the last row", []byte("row-0000000000001"), fam, kv.TypePut, coded, 0},
		{"a row before the last", []byte("row-0000000000000"), fam, kv.TypePut, coded, 0},
		{"a delete", row, fam, kv.TypeDelete, coded, 0},
		{"a literal qualifier", row, fam, kv.TypePut, []byte{2, 1, 'x'}, 0},
		{"a code past the qualifiers", row, fam, kv.TypePut, []byte{5, 1, 'x'}, 0},
		{"a long value", row, fam, kv.TypePut, []byte{1, 0x80, 'x'}, 0},
		{"another family", row, []byte("g"), kv.TypePut, coded, 0},
		{"a key head too long", bytes.Repeat([]byte{'z'}, 61), fam, kv.TypePut, coded, 0},
		{"the size limit", row, fam, kv.TypePut, coded, size},
		{"past the size limit", row, fam, kv.TypePut, coded, size - 1},
	} {
		before := w.Stats()
		if n, used := w.AppendNewRowCoded(tc.row, tc.fam, 5, tc.typ, quals, tc.coded, tc.maxSize); n != 0 || used != 0 {
			t.Fatalf("%s: AppendNewRowCoded took %d cells in %d bytes", tc.name, n, used)
		}
		if after := w.Stats(); !reflect.DeepEqual(after, before) {
			t.Fatalf("%s: Stats changed: %+v, before %+v", tc.name, after, before)
		}
	}
	if n, used := w.AppendNewRowCoded(row, fam, 5, kv.TypePut, quals, coded, size+1); n != 2 || used != len(coded) {
		t.Fatalf("AppendNewRowCoded took %d cells in %d bytes, want 2 in %d", n, used, len(coded))
	}
	if !bytes.Equal(w.LastRow(), row) {
		t.Fatalf("LastRow %q, want %q", w.LastRow(), row)
	}
}
