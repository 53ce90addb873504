package engine

import (
	"bytes"
	"fmt"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// rowRecords is how Load sorts a mapping of several families: one record per input row carrying every
// family's cells (cellrec.RowDict), sorted once per region, and split back into one HFile stream per
// family while the region is written (stream.cell).
//
// The pipeline emits one record per (row, family). Sorted as they are, five one-column families make
// five records per row, each with its own copy of the row, header and 24-byte index entry, and five
// sorters per region: at 1M rows and 256 MiB that was 93 spills instead of 1 for the same cells in one
// family. A row record holds the row once and its cells differ from the family records' only by the
// family's rank byte in front of each qualifier, so the sorter's memory, comparisons and spills follow
// the rows, as they do for one family. The cells come out of the sort in (row, family, qualifier, ts,
// type, seq) order, which for each family is the order its own sorter gave: the HFiles are the same bytes.
type rowRecords struct {
	rd   *cellrec.RowDict
	rank []int // the mapping's family index -> rank
	fam  []int // rank -> the mapping's family index
}

// useRowRecords says whether Load sorts row records: for more than one family (up to a rank byte's
// worth), and when there are at least as many (region) streams to write as workers, since a region's
// families are then written by one goroutine instead of one per family.
func useRowRecords(families, regions, workers int, ranged bool) bool {
	return families > 1 && families <= cellrec.MaxRowFamilies && (ranged || regions >= workers)
}

func newRowRecords(m *pipeline.Mapping, families []string) (*rowRecords, error) {
	names := make([][]byte, len(families))
	for i, f := range families {
		names[i] = []byte(f)
	}
	rd, err := cellrec.NewRowDict(m.Dict(), names)
	if err != nil {
		return nil, err
	}
	rr := &rowRecords{rd: rd, rank: make([]int, len(families)), fam: make([]int, len(families))}
	for i, name := range names {
		r, _ := rd.Rank(name)
		rr.rank[i], rr.fam[r] = r, i
	}
	return rr, nil
}

// combine is c for the cells of row records: c sees each cell's own family and qualifier.
func (rr *rowRecords) combine(c sorter.CombineFunc) sorter.CombineFunc {
	if c == nil {
		return nil
	}
	return func(dst []byte, h *cellrec.Header, q, a, b []byte) []byte {
		rank, qual := rr.rd.Split(q)
		fh := *h
		fh.Family = rr.rd.Family(rank)
		return c(dst, &fh, qual, a, b)
	}
}

// rowSpan is one row record that rowRecords.build appended to a buffer.
type rowSpan struct {
	off, end int
	seq      uint64
}

// build appends the records of cb to buf as row records, and their spans to spans: consecutive
// records of one input row (same seq, row, timestamp and type) in families of ascending rank become
// one record of at most maxRecord bytes; a record that does not continue the open one starts another
// (the sorter merges records of one row that overlap). A record that does not parse is an error.
func (rr *rowRecords) build(cb *pipeline.CellBatch, buf []byte, spans []rowSpan, maxRecord int) ([]byte, []rowSpan, error) {
	open := false
	var cur rowSpan
	var curH cellrec.Header
	lastRank := -1
	for i := range cb.Records {
		ref := &cb.Records[i]
		rec := cb.Record(i)
		h, cells, err := cellrec.ParseHeader(rec)
		if err != nil {
			return buf, spans, fmt.Errorf("record of %d bytes: %w", len(rec), err)
		}
		rank := rr.rank[ref.Family]
		cont := open && ref.Seq == cur.seq && rank > lastRank && h.TS == curH.TS && h.Type == curH.Type &&
			bytes.Equal(h.Row, curH.Row)
		for {
			if !cont {
				if open {
					cur.end = len(buf)
					spans = append(spans, cur)
				}
				cur, curH, open = rowSpan{off: len(buf), seq: ref.Seq}, h, true
				buf = cellrec.AppendHeader(buf, h.Row, nil, h.TS, h.Type)
			}
			mark := len(buf)
			if buf, err = rr.rd.AppendCells(buf, rank, cells); err != nil {
				return buf, spans, fmt.Errorf("record of %d bytes: %w", len(rec), err)
			}
			if !cont || len(buf)-cur.off <= maxRecord {
				break
			}
			buf, cont = buf[:mark], false // too large together: the record starts a row record of its own
		}
		lastRank = rank
	}
	if open {
		cur.end = len(buf)
		spans = append(spans, cur)
	}
	return buf, spans, nil
}
