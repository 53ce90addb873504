package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// newCountFileWriter returns an output writer for the columns' mapping (512-byte blocks, a memory sink, a
// sorter pool closed with the test) and a file writer of region 0 on it.
func newCountFileWriter(t *testing.T, columns string) (*outputWriter, *fileWriter) {
	t.Helper()
	cfg, err := pipeline.ParseColumns(columns)
	if err != nil {
		t.Fatal(err)
	}
	m, err := pipeline.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := sorter.NewPool(sorter.PoolOptions{Memory: 16 << 20, TempDir: t.TempDir(), Dict: m.Dict()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close() })
	spec := &Spec{Table: "t", Mapping: m, Memory: 64 << 20, TempDir: t.TempDir(),
		Family: func(string) hfilewriter.WriterOptions { return hfilewriter.WriterOptions{BlockSize: 512} }}
	o := newOutputWriter(spec, &memSink{}, m.Families(), 0, pool)
	return o, o.newFileWriter(context.Background(), 0, 0, nil, nil)
}

// TestFileWriterCountsKeyValueBytes: appendRow and appendSameRowCells count each cell's KeyValue size
// as the record stands for it (Dict.KeyValueSize: with a tags length when the records carry tags), from
// the writer's totals, for rows that take the writer's one-pass run and rows that do not (long values,
// long qualifiers), with and without tags in the records.
func TestFileWriterCountsKeyValueBytes(t *testing.T) {
	for _, columns := range []string{"HBASE_ROW_KEY,f:a,f:b,f:c", "HBASE_ROW_KEY,f:a,f:b,f:c,HBASE_CELL_TTL"} {
		t.Run(columns, func(t *testing.T) {
			o, fw := newCountFileWriter(t, columns)
			d := o.dict
			var cells, bytes int64
			for r := 0; r < 300; r++ {
				h := cellrec.Header{Row: fmt.Appendf(nil, "row-%05d", r), Family: []byte("f"), TS: 1700000000000, Type: kv.TypePut}
				var run []hfilewriter.SameRowCell
				for i := 0; i < 1+r%4; i++ {
					q := []byte{byte('a' + i)}
					if r%7 == 3 {
						q = append(q, "-a-long-qualifier"...)
					}
					v := fmt.Appendf(nil, "value-%d", r*i)
					if r%5 == 2 {
						v = append(v, "-and-more-than-thirty-two-bytes-of-it"...)
					}
					run = append(run, hfilewriter.SameRowCell{Qualifier: q, Value: v})
					cells++
					bytes += int64(d.KeyValueSize(&h, len(q), len(v), 0))
				}
				if err := fw.startRow(&h); err != nil {
					t.Fatal(err)
				}
				split := len(run) / 2 // the rest of the row as same-row cells
				if split == 0 {
					split = 1
				}
				if err := fw.appendRow(&h, run[:split]); err != nil {
					t.Fatal(err)
				}
				if err := fw.appendSameRowCells(run[split:]); err != nil {
					t.Fatal(err)
				}
			}
			if err := fw.close(); err != nil {
				t.Fatal(err)
			}
			if got, gotBytes := o.cells.Load(), o.bytesDone.Load(); got != cells || gotBytes != bytes {
				t.Fatalf("counted %d cells, %d bytes; want %d, %d", got, gotBytes, cells, bytes)
			}
		})
	}
}

// TestFileWriterAppendRowCoded: appendRowCoded hands a row's usual cells to the writer as the record holds
// them and counts what it writes as count would (Dict.KeyValueSize); the writer takes the first cells of
// most rows, and the cells it does not take go on through appendRow or appendSameRowCells. The file
// has every cell, in order.
func TestFileWriterAppendRowCoded(t *testing.T) {
	o, fw := newCountFileWriter(t, "HBASE_ROW_KEY,f:a,f:b,f:c,f:d")
	var err error
	d := o.dict
	quals := d.UsualQualifiers()
	if d.Len() != 4 || len(quals) != 4 {
		t.Fatalf("dictionary of %d, usual qualifiers %d", d.Len(), len(quals))
	}
	var cells, bytes, taken int64
	var rec []byte
	for r := 0; r < 400; r++ {
		h := cellrec.Header{Row: fmt.Appendf(nil, "row-key-%09d", r), Family: []byte("f"), TS: 1700000000000, Type: kv.TypePut}
		rec = rec[:0]
		for i := 0; i < 1+r%4; i++ {
			v := fmt.Appendf(nil, "value-%d", r*i)
			if r%5 == 2 && i == 1 {
				v = append(v, "-and-more-than-thirty-two-bytes-of-it"...) // the run stops before it
			}
			rec = d.AppendCell(rec, i, v)
			cells++
			bytes += int64(d.KeyValueSize(&h, len(quals[i]), len(v), 0))
		}
		if err := fw.startRow(&h); err != nil {
			t.Fatal(err)
		}
		used := 0
		if fw.w != nil {
			used = fw.appendRowCoded(&h, quals, rec)
		}
		same, rest := d.AppendUntagged(nil, rec[used:])
		if len(rest) != 0 {
			t.Fatalf("row %d: %d bytes of tagged cells", r, len(rest))
		}
		if used > 0 {
			taken++
			err = fw.appendSameRowCells(same)
		} else {
			err = fw.appendRow(&h, same)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.close(); err != nil {
		t.Fatal(err)
	}
	if got, gotBytes := o.cells.Load(), o.bytesDone.Load(); got != cells || gotBytes != bytes {
		t.Fatalf("counted %d cells, %d bytes; want %d, %d", got, gotBytes, cells, bytes)
	}
	if taken < 300 {
		t.Fatalf("appendRowCoded took %d rows of 400", taken)
	}
	if len(o.files) != 1 || o.files[0].Cells != cells || o.files[0].Rows != 400 {
		t.Fatalf("files %+v, want one of %d cells in 400 rows", o.files, cells)
	}
}

// TestFileWriterLastRowInPlace: a new fileWriter keeps the rows startRow copies in its own array while
// they fit (no allocation of their own); a longer row, and a shorter one after it, are kept as well, and
// startRow still tells the last row from a new one.
func TestFileWriterLastRowInPlace(t *testing.T) {
	_, fw := newCountFileWriter(t, "HBASE_ROW_KEY,f:a")
	rows := []string{"a-row-0001", "a-row-0002", strings.Repeat("b", rowBufSize), "c" + strings.Repeat("-", 40), "d-short"}
	for i, row := range rows {
		h := cellrec.Header{Row: []byte(row), Family: []byte("f"), TS: 1700000000000, Type: kv.TypePut}
		for again := 0; again < 2; again++ { // the second startRow of a row counts nothing
			if err := fw.startRow(&h); err != nil {
				t.Fatal(err)
			}
			if fw.rows != int64(i+1) {
				t.Fatalf("row %d: %d rows counted, want %d", i, fw.rows, i+1)
			}
		}
		if err := fw.appendRow(&h, []hfilewriter.SameRowCell{{Qualifier: []byte("a"), Value: []byte("v")}}); err != nil {
			t.Fatal(err)
		}
		if string(fw.lastRow) != row {
			t.Fatalf("row %d: lastRow %q", i, fw.lastRow)
		}
		if inPlace := &fw.lastRow[:1][0] == &fw.rowBuf[0]; inPlace != (i < 3) {
			t.Fatalf("row %d of %d bytes: kept in the fileWriter's array %v, want %v", i, len(row), inPlace, i < 3)
		}
	}
	if err := fw.close(); err != nil {
		t.Fatal(err)
	}
}
