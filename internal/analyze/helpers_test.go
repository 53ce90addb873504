package analyze

import (
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/pipeline"
)

// testCell is one cell to put into a test CellBatch.
type testCell struct {
	row, qual, value string
	family           uint16
	ts               int64
	seq              uint64
}

// makeBatch builds a CellBatch of records as the mapping emits them: consecutive cells with the same row,
// family, timestamp and Seq and ascending qualifiers share a record, and qualifiers are dictionary
// indexes (a dictionary of the batch's qualifiers).
func makeBatch(families []string, cells []testCell) *pipeline.CellBatch {
	var quals [][]byte
	for _, c := range cells {
		quals = append(quals, []byte(c.qual))
	}
	cb := &pipeline.CellBatch{Dict: cellrec.NewDict(quals)}
	var rec []byte
	flush := func(prev *testCell) {
		if prev != nil {
			if err := cb.AppendRecord(rec, prev.family, prev.seq); err != nil {
				panic(err)
			}
		}
	}
	for i := range cells {
		c := &cells[i]
		var prev *testCell
		if i > 0 {
			prev = &cells[i-1]
		}
		if prev == nil || prev.row != c.row || prev.family != c.family || prev.ts != c.ts || prev.seq != c.seq || prev.qual >= c.qual {
			flush(prev)
			rec = cellrec.AppendHeader(rec[:0], []byte(c.row), []byte(families[c.family]), c.ts, kv.TypePut)
		}
		rec = cb.Dict.AppendQualifierCell(rec, []byte(c.qual), []byte(c.value))
	}
	if len(cells) > 0 {
		flush(&cells[len(cells)-1])
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
