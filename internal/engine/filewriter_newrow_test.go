package engine

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// TestFileWriterAppendNewRowCoded: appendNewRowCoded (one call to the writer for a new row: the roll
// check, the row's start and its usual cells) leaves the files, their rows, cells and keys and the
// counters startRow and appendRowCoded leave, with files rolled at a small size (the same cells start
// each file), rows given in two views (the second, at an older timestamp, goes through startRow, which
// must see the row the writer has) and rows with a value the writer's run does not take.
func TestFileWriterAppendNewRowCoded(t *testing.T) {
	type result struct {
		files        map[string][]byte
		results      []FileResult
		cells, bytes int64
		taken        int
	}
	write := func(newRow bool) result {
		o, fw := newCountFileWriter(t, "HBASE_ROW_KEY,f:a,f:b,f:c,f:d")
		o.spec.MaxFileSize = 6 << 10
		d := o.dict
		quals := d.UsualQualifiers()
		taken := 0
		var rec []byte
		for r := 0; r < 900; r++ {
			// Every third view is a second view of the row before, at an older timestamp, with the
			// qualifiers after the first view's (the first has a or a and b; the second c and d).
			row, ts, from, to := fmt.Appendf(nil, "row-key-%09d", r), int64(1700000000000), 0, 1+r%2
			if r%3 == 2 {
				row, ts, from, to = fmt.Appendf(nil, "row-key-%09d", r-1), ts-1, 2, 4
			}
			h := cellrec.Header{Row: row, Family: []byte("f"), TS: ts, Type: kv.TypePut}
			rec = rec[:0]
			for i := from; i < to; i++ {
				v := fmt.Appendf(nil, "value-%d", r*i)
				if r%5 == 2 && i == 1 || r%7 == 5 && i == 3 {
					v = append(v, "-and-more-than-thirty-two-bytes-of-it"...) // the run stops before it
				}
				rec = d.AppendCell(rec, i, v)
			}
			used := 0
			if newRow && fw.w != nil && fw.w.NewRowCodedOK() {
				used = fw.appendNewRowCoded(&h, quals, rec)
				taken += min(used, 1)
			}
			if used == 0 {
				if err := fw.startRow(&h); err != nil {
					t.Fatal(err)
				}
				if fw.w != nil {
					used = fw.appendRowCoded(&h, quals, rec)
				}
			}
			same, _ := d.AppendUntagged(nil, rec[used:])
			var err error
			if used > 0 {
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
		return result{o.sink.(*memSink).files, o.files, o.cells.Load(), o.bytesDone.Load(), taken}
	}
	want, got := write(false), write(true)
	if len(want.results) < 4 || got.taken < 300 {
		t.Fatalf("%d files; appendNewRowCoded took %d rows", len(want.results), got.taken)
	}
	if got.cells != want.cells || got.bytes != want.bytes {
		t.Fatalf("counted %d cells, %d bytes; want %d, %d", got.cells, got.bytes, want.cells, want.bytes)
	}
	if !reflect.DeepEqual(got.results, want.results) {
		t.Fatalf("files\n%+v\nwant\n%+v", got.results, want.results)
	}
	if len(got.files) != len(want.files) {
		t.Fatalf("%d files, want %d", len(got.files), len(want.files))
	}
	for name, b := range want.files {
		if !bytes.Equal(got.files[name], b) {
			t.Fatalf("file %s differs", name)
		}
	}
}
