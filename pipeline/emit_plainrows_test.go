package pipeline

import (
	"strings"
	"testing"
)

// TestMapPlainRowsShortBatch: a batch whose field ends or NULL flags do not cover its rows is an error
// of mapPlainRows (which slices each row's through unsafe pointers), not a read past them.
func TestMapPlainRowsShortBatch(t *testing.T) {
	cfg, err := ParseColumns("HBASE_ROW_KEY,d:a,d:b")
	if err != nil {
		t.Fatal(err)
	}
	mp := mustCompile(t, cfg).NewMapper()
	rows := [][]string{{"k1", "a", "b"}, {"k2", "c", "d"}}
	var cb CellBatch
	if err := mp.MapBatch(textBatch("f", 0, 0, rows), nil, &cb, NewRejectSink(nil, -1)); err != nil {
		t.Fatal(err)
	}
	if len(cb.Records) != 2 {
		t.Fatalf("%d records, want 2", len(cb.Records))
	}
	for _, cut := range []string{"ends", "nulls"} {
		b := textBatch("f", 0, 0, rows)
		if !mp.plainBatch(b, 3) {
			t.Fatal("the batch is not mapped by mapPlainRows")
		}
		if cut == "ends" {
			b.Ends = b.Ends[:5]
		} else {
			b.Nulls = b.Nulls[:5]
		}
		cb = CellBatch{}
		err := mp.mapPlainRows(b, 3, &cb)
		if err == nil || !strings.Contains(err.Error(), "field ends") {
			t.Fatalf("%s cut: error %v, want one about the batch's field ends", cut, err)
		}
	}
}
