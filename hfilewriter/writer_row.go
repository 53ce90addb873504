package hfilewriter

import "github.com/hfload/hfload/internal/kv"

// AppendRow appends the cells of a row after the file's last one, in order: the first as
// AppendParts(row, family, c.Qualifier, ts, typ, c.Value, nil) would, the others as AppendSameRow(
// c.Qualifier, c.Value) (the same checks, the same bytes). It returns how many it appended: all, or
// those before the first that failed, and that one's error.
//
// It is what a mapped input row becomes in one family: a put that starts a row and the cells that share
// its row, family, timestamp and type. The usual such row (an unencoded block with room for it, short
// qualifiers and values) costs one pass over its cells, the first among them (appendRowRun), where
// AppendParts and AppendSameRowCells took a call and a path of its own for the first cell.
func (w *Writer) AppendRow(row, family []byte, ts int64, typ Type, cells []SameRowCell) (int, error) {
	if len(cells) == 0 {
		return 0, nil
	}
	if w.sameRowFD { // FAST_DIFF blocks: writer_samerow_fastdiff.go
		return w.appendRowFastDiff(row, family, ts, typ, cells)
	}
	c := &cells[0]
	n := 0
	if w.newRowFastOK(row, family, c.Qualifier, typ, c.Value, nil) {
		// appendNewRowFast with the cell in the run: the run writes no statistics the first cell of a row
		// changes but those of every cell, and reads none of the writer's last key (it is given row,
		// family, ts and typ), so the rest of the row's bookkeeping follows it.
		if n = w.appendRowRun(row, w.family, ts, kv.TypePut, cells, 1); n == 0 {
			if err := w.appendNewRowFast(row, family, c.Qualifier, ts, c.Value); err != nil {
				return 0, err
			}
			n = 1
		} else {
			if w.bloom != nil { // ROW (newRowFastOK excludes ROWCOL): the row, as addToBlooms adds it
				w.bloom.add(row, row)
			}
			w.lastRow = append(w.lastRow[:0], row...)
			w.notePut(ts)
		}
	}
	return w.appendRowRest(row, family, ts, typ, cells, n)
}

// appendRowRest is AppendRow's end once a fast path appended cells[:n] (n may be 0): cells[0] the
// usual way (appendCell) when none was, then the cells after those with AppendSameRowCells.
func (w *Writer) appendRowRest(row, family []byte, ts int64, typ Type, cells []SameRowCell, n int) (int, error) {
	if n == 0 {
		c := &cells[0]
		if err := w.appendCell(row, family, c.Qualifier, ts, typ, c.Value, nil, 0); err != nil {
			return 0, err
		}
		n = 1
	}
	if n == len(cells) {
		return n, nil
	}
	m, err := w.AppendSameRowCells(cells[n:])
	return n + m, err
}
