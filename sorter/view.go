package sorter

import (
	"bytes"

	"github.com/hfload/hfload/internal/cellrec"
)

// view is the unit every stage of the sorter produces: one or more consecutive cells of one record,
// with the record's header and seq. The views of one source are in (key, seq) order and never overlap:
// every cell of a view sorts before every cell of the source's next view. A multi-cell view is the
// common case (a whole input row); a record is cut into smaller views only where cells of another record
// of the same row and family sort between its cells.
type view struct {
	h      cellrec.Header
	cells  []byte // the view's cells, encoded (at least one)
	q, v   []byte // qualifier and value of the first cell
	seq    uint64
	prefix uint64 // cellrec.Prefix(h.Row)
}

// set fills v from a header and a non-empty, well-formed cells region.
func (v *view) set(d *cellrec.Dict, h *cellrec.Header, cells []byte, seq uint64) {
	v.h = *h
	v.cells = cells
	v.q, v.v, _ = d.Next(cells)
	v.seq = seq
	v.prefix = cellrec.Prefix(h.Row)
}

// drop removes the first n bytes of v's cells (whole cells, fewer than all of them) and decodes the new
// first cell.
func (v *view) drop(d *cellrec.Dict, n int) {
	v.cells = v.cells[n:]
	v.q, v.v, _ = d.Next(v.cells)
}

// source is a stream of views. cur is valid until the next call of next; a consumer that is the only
// reader of a source may shorten cur's cells (drop) between calls.
type source interface {
	next() (bool, error)
	cur() *view
}

// cmpCells orders two cells by (key, seq), then by value so that equal keys with a reused seq still come
// out in one deterministic order.
func cmpCells(ah *cellrec.Header, aq, av []byte, aseq uint64, bh *cellrec.Header, bq, bv []byte, bseq uint64) int {
	if c := cellrec.Compare(ah, aq, bh, bq); c != 0 {
		return c
	}
	return cmpSeqValue(aseq, av, bseq, bv)
}

// cmpCellsInRow is cmpCells for two cells known to have equal rows.
func cmpCellsInRow(ah *cellrec.Header, aq, av []byte, aseq uint64, bh *cellrec.Header, bq, bv []byte, bseq uint64) int {
	if c := cellrec.CompareInRow(ah, aq, bh, bq); c != 0 {
		return c
	}
	return cmpSeqValue(aseq, av, bseq, bv)
}

func cmpSeqValue(aseq uint64, av []byte, bseq uint64, bv []byte) int {
	switch {
	case aseq < bseq:
		return -1
	case aseq > bseq:
		return 1
	}
	return bytes.Compare(av, bv)
}

// cmpViews orders two views by their first cells.
func cmpViews(a, b *view) int {
	if a.prefix != b.prefix {
		if a.prefix < b.prefix {
			return -1
		}
		return 1
	}
	return cmpCells(&a.h, a.q, a.v, a.seq, &b.h, b.q, b.v, b.seq)
}

// below returns how many bytes of top's cells sort before the first cell of bound: the part of top that
// can be handed on before anything of bound. top's first cell must not sort after bound's (top is the
// smallest of a merge), and at least that cell is counted. A nil bound takes all of top. When the rows
// or the families differ, that decides for every cell of top at once; only cells of one row and family
// are compared one by one.
func below(d *cellrec.Dict, top, bound *view) int {
	if bound == nil || top.prefix != bound.prefix {
		return len(top.cells)
	}
	if !bytes.Equal(top.h.Row, bound.h.Row) || !bytes.Equal(top.h.Family, bound.h.Family) {
		return len(top.cells)
	}
	_, _, rest := d.Next(top.cells) // the first cell goes in any case
	for len(rest) > 0 {
		q, v, r := d.Next(rest)
		if cmpCells(&top.h, q, v, top.seq, &bound.h, bound.q, bound.v, bound.seq) >= 0 {
			break
		}
		rest = r
	}
	return len(top.cells) - len(rest)
}
