package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/partition"
)

// writeRows writes rows rows of one cell each, keys prefix-00000 on, through fw and closes it.
func writeRows(t *testing.T, fw *fileWriter, prefix string, rows int) {
	t.Helper()
	for r := range rows {
		h := cellrec.Header{Row: fmt.Appendf(nil, "%s-%05d-a-row-key-longer-than-rowBuf", prefix, r), Family: []byte("f"),
			TS: 1700000000000, Type: kv.TypePut}
		if err := fw.startRow(&h); err != nil {
			t.Fatal(err)
		}
		if err := fw.append(&h, []byte("a"), []byte("v"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.close(); err != nil {
		t.Fatal(err)
	}
}

// TestFileWriterReusedAfterRelease: releaseStream keeps a region's closed file writers and newFileWriter
// hands them to the next region set up anew (its region, bounds, first part, no rows, an empty last
// row), so that the next region's file has its own name and counts; a writer still open is not kept.
func TestFileWriterReusedAfterRelease(t *testing.T) {
	o, fw := newCountFileWriter(t, "HBASE_ROW_KEY,f:a")
	writeRows(t, fw, "first", 50)
	o.releaseStream(o.newStream(nil, []*fileWriter{fw}))
	start, end := []byte("second"), []byte("third")
	fw2 := o.newFileWriter(context.Background(), 7, 0, start, end)
	if fw2 != fw {
		t.Fatal("the released file writer was not reused")
	}
	if fw2.region != 7 || fw2.part != 0 || fw2.rows != 0 || len(fw2.lastRow) != 0 || fw2.w != nil || fw2.f != nil ||
		string(fw2.regionStart) != "second" || string(fw2.regionEnd) != "third" {
		t.Fatalf("reused file writer not set up anew: region %d part %d rows %d last row %q", fw2.region, fw2.part, fw2.rows, fw2.lastRow)
	}
	if cap(fw2.lastRow) <= rowBufSize {
		t.Fatalf("the row buffer grown past rowBuf (%d bytes) was dropped", cap(fw2.lastRow))
	}
	writeRows(t, fw2, "second", 30)
	if len(o.files) != 2 {
		t.Fatalf("%d file results", len(o.files))
	}
	a, b := o.files[0], o.files[1]
	if a.Region != 0 || a.Rows != 50 || a.Cells != 50 || b.Region != 7 || b.Rows != 30 || b.Cells != 30 || a.Path == b.Path ||
		b.RegionStart != "second" || b.RegionEnd != "third" || b.FirstRow != "second-00000-a-row-key-longer-than-rowBuf" {
		t.Fatalf("results %+v, %+v", a, b)
	}

	open := o.newFileWriter(context.Background(), 8, 0, nil, nil)
	h := cellrec.Header{Row: []byte("r"), Family: []byte("f"), TS: 1, Type: kv.TypePut}
	if err := open.startRow(&h); err != nil {
		t.Fatal(err)
	}
	o.releaseStream(o.newStream(nil, []*fileWriter{open}))
	if got := o.spareStreams.fileWriter(); got != nil {
		t.Fatal("a file writer with an open file was kept")
	}
	open.abort()
}

// TestFileResultsSizedForRegions: with the regions known up front (Spec.Splits), the first file makes the
// list of results as long as one file per region and family, and the files fill it in place.
func TestFileResultsSizedForRegions(t *testing.T) {
	o, fw := newCountFileWriter(t, "HBASE_ROW_KEY,f:a")
	o.spec.Splits = partition.Splits{[]byte("b"), []byte("c"), []byte("d")}
	writeRows(t, fw, "a", 3)
	if len(o.files) != 1 || cap(o.files) != 4 {
		t.Fatalf("%d results, room for %d; want 1, 4", len(o.files), cap(o.files))
	}
	list := &o.files[:1][0]
	for region := 1; region < 4; region++ {
		writeRows(t, o.newFileWriter(context.Background(), region, 0, nil, nil), fmt.Sprint(region), 2)
	}
	if len(o.files) != 4 || &o.files[0] != list {
		t.Fatalf("%d results; moved: %v", len(o.files), &o.files[0] != list)
	}

	o2, fw2 := newCountFileWriter(t, "HBASE_ROW_KEY,f:a") // regions not known: the list doubles from 64
	writeRows(t, fw2, "a", 3)
	if c := cap(o2.files); c < 64 || c >= 128 {
		t.Fatalf("room for %d results without splits; want 64 and a size class's rounding", c)
	}
}
