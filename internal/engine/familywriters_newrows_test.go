package engine

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/sorter"
)

// newRowsTestRun writes rows views through familyWriters into three families' fileWriters (region 0)
// and returns the files, their results, the cells and bytes counted and how many cells took
// appendNewRowCells. hashed: the views carry their rows' hashes (viewHashed), which the lane for rows
// of one cell needs; without, every cell takes the general path (the writers hash the rows themselves),
// and the files must be the same.
//
// Most rows have one cell in each family; some have two in b, none in c, a delete's type, a cell with
// a value longer than a block, or come as two views (a and b's first cell, then b's second and c; b's
// second is a literal cell or one of the usual form).
func newRowsTestRun(t *testing.T, rows int, maxFileSize int64, hashed bool) (map[string][]byte, []FileResult, int64, int64, int64) {
	t.Helper()
	families := []string{"a", "b", "c"}
	d := cellrec.NewDict([][]byte{[]byte("v"), []byte("x")})
	rd, err := cellrec.NewRowDict(d, [][]byte{[]byte("a"), []byte("b"), []byte("c")})
	if err != nil {
		t.Fatal(err)
	}
	rr := &rowRecords{rd: rd, fam: []int{0, 1, 2}}
	sink := &memSink{}
	spec := &Spec{Table: "t", MaxFileSize: maxFileSize, Family: func(string) hfilewriter.WriterOptions {
		o := hfilewriter.DefaultWriterOptions()
		o.BlockSize, o.BloomBlockSize = 4096, 512
		return o
	}}
	pool, err := sorter.NewPool(sorter.PoolOptions{Memory: 64 << 20, TempDir: t.TempDir(), Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	o := newOutputWriter(spec, sink, families, 0, pool)
	o.rows, o.dict = rr, d
	fws := make([]*fileWriter, len(families))
	for rank := range fws {
		fws[rank] = o.newFileWriter(context.Background(), 0, rank, nil, nil)
	}
	fw := newFamilyWriters(fws, rr)
	famCells := func(rank int, cells []byte) []byte {
		t.Helper()
		out, err := rd.AppendCells(nil, rank, cells)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	addFlags := func(row []byte, typ kv.Type, no int64, drop uint8, parts [3][]byte) {
		t.Helper()
		var cells []byte
		ranges := make([]uint32, 4)
		for rank, p := range parts {
			ranges[rank] = uint32(len(cells))
			if p != nil {
				cells = append(cells, famCells(rank, p)...)
			}
		}
		ranges[3] = uint32(len(cells))
		flags := drop
		var rh hfilewriter.RowHash
		if hashed {
			flags, rh = flags|viewHashed, hfilewriter.HashRow(row)
		}
		if err := fw.sendFull(); err != nil {
			t.Fatal(err)
		}
		if err := fw.add(&cellrec.Header{Row: row, TS: 1700000000000 - no%3, Type: typ}, cells, ranges, no, flags, rh); err != nil {
			t.Fatal(err)
		}
	}
	add := func(row []byte, typ kv.Type, no int64, parts [3][]byte) {
		t.Helper()
		addFlags(row, typ, no, 0, parts)
	}
	for i := 0; i < rows; i++ {
		row := fmt.Appendf(nil, "row%07d", i*7)
		value := func(f string) []byte {
			v := fmt.Appendf(nil, "%s-%d", f, i)
			if i%101 == 0 {
				v = bytes.Repeat(v, 1000) // longer than a block
			}
			return v
		}
		one := func(f string) []byte { return d.AppendCell(nil, 0, value(f)) }
		typ, no := kv.TypePut, int64(i+1)
		a, b, c := one("a"), one("b"), one("c")
		switch {
		case i%17 == 5:
			typ = kv.TypeDeleteColumn
			a, b, c = d.AppendCell(nil, 0, nil), d.AppendCell(nil, 0, nil), d.AppendCell(nil, 0, nil)
		case i%13 == 3:
			c = nil
		case i%11 == 7:
			b = cellrec.AppendLiteralCell(b, []byte("w"), value("w"))
		case i%19 == 9: // the row in two views
			add(row, typ, no, [3][]byte{a, b, nil})
			add(row, typ, no, [3][]byte{nil, cellrec.AppendLiteralCell(nil, []byte("w"), value("w")), c})
			continue
		case i%23 == 11: // the row in two views, b's cell in the second of the usual form but not a new row
			add(row, typ, no, [3][]byte{a, b, nil})
			add(row, typ, no, [3][]byte{nil, d.AppendCell(nil, 1, value("x")), c})
			continue
		case i%29 == 13: // policy last: c's cell replaced by the next view's (dropLast), the only c of the row
			add(row, typ, no, [3][]byte{a, b, c})
			fw.dropLast()
			add(row, typ, no, [3][]byte{nil, nil, one("c2")})
			continue
		case i%31 == 17: // policies first and error: the second view's first cell dropped (b's)
			add(row, typ, no, [3][]byte{a, nil, nil})
			addFlags(row, typ, no, viewDropFirst, [3][]byte{nil, b, c})
			continue
		case i%37 == 19: // a view's first cell dropped, the family's only cell of the row
			addFlags(row, typ, no, viewDropFirst, [3][]byte{a, b, c})
			add(row, typ, no, [3][]byte{a, nil, nil})
			continue
		}
		add(row, typ, no, [3][]byte{a, b, c})
	}
	if err := fw.finish(true); err != nil {
		t.Fatal(err)
	}
	var lean int64
	for _, f := range fws {
		if err := f.close(); err != nil {
			t.Fatal(err)
		}
		lean += f.newRowCells
	}
	o.sortFiles()
	return sink.files, o.files, o.cells.Load(), o.bytesDone.Load(), lean
}

// The rows of one cell a family's writer gathers for appendNewRowCells give the same files, results and
// counts as the general path, with and without rolling files (also within a gathered run of rows), and
// most cells of such a stream take them.
func TestFamilyWritersNewRowCells(t *testing.T) {
	const rows = 6000
	for _, maxFileSize := range []int64{0, 24 << 10, 100 << 10} {
		t.Run(fmt.Sprint(maxFileSize), func(t *testing.T) {
			files, results, cells, bytesDone, lean := newRowsTestRun(t, rows, maxFileSize, true)
			wfiles, wresults, wcells, wbytes, wlean := newRowsTestRun(t, rows, maxFileSize, false)
			if wlean != 0 {
				t.Fatalf("%d cells took appendNewRowCells without row hashes", wlean)
			}
			if len(files) != len(wfiles) || len(files) < 3 {
				t.Fatalf("%d files, want %d (at least 3)", len(files), len(wfiles))
			}
			for name, b := range wfiles {
				if !bytes.Equal(files[name], b) {
					t.Errorf("%s: %d bytes, want %d (other bytes)", name, len(files[name]), len(b))
				}
			}
			if !reflect.DeepEqual(results, wresults) || cells != wcells || bytesDone != wbytes {
				t.Fatalf("results differ: %d cells, %d bytes, %+v\nwant %d cells, %d bytes, %+v", cells, bytesDone, results, wcells, wbytes, wresults)
			}
			if lean < cells*3/4 {
				t.Fatalf("%d of %d cells took appendNewRowCells", lean, cells)
			}
			if maxFileSize > 0 && len(files) < 9 {
				t.Fatalf("%d files: the families' files should roll", len(files))
			}
			t.Logf("%d files, %d cells, %d of them through appendNewRowCells", len(files), cells, lean)
		})
	}
}

// collectNewRows gathers the usual views' cells of a family and stops where its entry checks say the
// views, their ranges or the rows' room end: it never reads or writes past them.
func TestCollectNewRowsBounds(t *testing.T) {
	f := &familyWriters{quals: [][]byte{[]byte("v"), []byte("w")}}
	// Views of two families (n = 3 ranges each): family 0's cell is code 1 ("w"), family 1 has none.
	b := &viewBatch{}
	for i := 0; i < 6; i++ {
		row := fmt.Appendf(nil, "row%d", i)
		cells := []byte{3, 2, 'x', byte('0' + i)}
		b.views = append(b.views, rowView{off: uint32(len(b.buf)), cl: uint32(len(cells)), rl: uint16(len(row)),
			flags: viewHashed | viewNewRows, typ: kv.TypePut, ts: int64(i), rh: hfilewriter.HashRow(row), row: int64(i + 1)})
		b.ranges = append(b.ranges, 0, uint32(len(cells)), uint32(len(cells)))
		b.buf = append(append(b.buf, row...), cells...)
	}
	check := func(name string, b *viewBatch, room, want int) {
		t.Helper()
		rows := make([]hfilewriter.NewRowCell, 0, room)
		i, j, last, got := f.collectNewRows(b, 1, 3, 3, 1, rows)
		if len(got) != want || i != 1+want || j != 3+3*want || last != int64(1+want) {
			t.Fatalf("%s: %d cells gathered (views to %d, ranges %d, last row %d), want %d", name, len(got), i, j, last, want)
		}
		for k, c := range got {
			v := &b.views[1+k]
			if c.Row != v.off || c.RowLen != v.rl || c.Qual != 1 || c.ValueLen != 2 || c.Value != v.off+uint32(v.rl)+2 || c.TS != v.ts {
				t.Fatalf("%s: cell %d is %+v, view %+v", name, k, c, *v)
			}
		}
	}
	check("all", b, 5, 5)
	check("no room for every view", b, 4, 0)
	short := &viewBatch{views: b.views, ranges: b.ranges[:len(b.ranges)-2], buf: b.buf} // the last view's ranges cut
	check("ranges short", short, 5, 0)
	short.ranges, short.buf = b.ranges, b.buf[:len(b.buf)-3] // the last cell's bytes cut
	check("buffer short", short, 5, 4)
	stop := &viewBatch{views: append([]rowView(nil), b.views...), ranges: b.ranges, buf: b.buf}
	stop.views[3].flags &^= viewNewRows
	check("a view not of new rows", stop, 5, 2)
	stop.views[3].flags |= viewNewRows
	stop.views[3].row = 3 // the row of the view before
	check("a row in two views", stop, 5, 2)
	f.quals = f.quals[:1]
	check("a code past the qualifiers", b, 5, 0)
}
