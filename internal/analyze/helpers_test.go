package analyze

import (
	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/pipeline"
)

// testCell is one cell to put into a test CellBatch.
type testCell struct {
	row, qual, value string
	family           uint16
	ts               int64
	seq              uint64
}

// makeBatch builds a CellBatch with hfilewriter.AppendKeyValue, as the mapping does.
func makeBatch(families []string, cells []testCell) *pipeline.CellBatch {
	cb := &pipeline.CellBatch{}
	for _, c := range cells {
		off := len(cb.Buf)
		cb.Buf = hfilewriter.AppendKeyValue(cb.Buf, []byte(c.row), []byte(families[c.family]), []byte(c.qual),
			c.ts, hfilewriter.TypePut, []byte(c.value))
		cb.Cells = append(cb.Cells, pipeline.CellRef{Off: uint32(off), Len: uint32(len(cb.Buf) - off),
			Family: c.family, Seq: c.seq})
	}
	return cb
}

// rowsToBatches turns one cell per row (qualifier "q", value "v") into batches of size n.
func rowsToBatches(families []string, rows []string, file int, n int) []*pipeline.CellBatch {
	var out []*pipeline.CellBatch
	for start := 0; start < len(rows); start += n {
		var cells []testCell
		for i := start; i < min(start+n, len(rows)); i++ {
			cells = append(cells, testCell{row: rows[i], qual: "q", value: "v", ts: 1, seq: pipeline.SeqOf(file, int64(i))})
		}
		out = append(out, makeBatch(families, cells))
	}
	return out
}

func hasWarning(r *Report, code string) bool {
	for _, w := range r.Warnings {
		if w.Code == code {
			return true
		}
	}
	return false
}
