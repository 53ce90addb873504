package engine

import (
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// rowRecords is how Load sorts a mapping of several families: one record per input row carrying every
// family's cells (cellrec.RowDict), emitted so by the pipeline (pipeline.RunOptions.Rows), sorted once
// per region, and split back into one HFile stream per family while the region is written
// (stream.rowHeader). Rows whose families the mapping lists out of byte order give several row records,
// which the sorter merges like any records of one row that overlap.
//
// Without, the pipeline emits one record per (row, family). Sorted so, five one-column families make
// five records per row, each with its own copy of the row, header and index entry, and five
// sorters per region: at 1M rows and 256 MiB that was 93 spills instead of 1 for the same cells in one
// family. A row record holds the row once and its cells differ from the family records' only by the
// family's rank byte in front of each qualifier, so the sorter's memory, comparisons and spills follow
// the rows, as they do for one family. The cells come out of the sort in (row, family, qualifier, ts,
// type, seq) order, which for each family is the order its own sorter gave: the HFiles are the same bytes.
type rowRecords struct {
	rd  *cellrec.RowDict
	fam []int // rank -> the mapping's family index
	// usualRank gives the family's rank of a usual cell (cellrec.Dict.NextUsual's form) by its first
	// byte, and 0xff (past every rank: at most maxRowFamilies) for a byte that is not a usual cell's.
	usualRank [256]uint8
}

// maxRowFamilies is the most families Load sorts as row records. A region's row records are written
// with every family's file open at once, and the HFile writers themselves (block, index and bloom
// buffers) are outside the sort budget, in memoryReserve: a bounded number per worker keeps them there.
const maxRowFamilies = 16

// useRowRecords says whether Load sorts row records: for 2 to maxRowFamilies families, unless a sink
// that buffers its files (uploads) cannot hold every family's file of every worker in a quarter of the
// budget. A region's families are written in parallel (familyWriters), so few regions are no reason
// against.
func useRowRecords(families, workers int, sink Sink, budget int64) bool {
	if families < 2 || families > maxRowFamilies {
		return false
	}
	if bs, ok := sink.(BufferingSink); ok && bs.FileMemory()*int64(families*workers) > budget/4 {
		return false
	}
	return true
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
	rr := &rowRecords{rd: rd, fam: make([]int, len(families))}
	for i, name := range names {
		r, _ := rd.Rank(name)
		rr.fam[r] = i
	}
	rr.usualRank = usualRanks(rd.Dict().UsualQualifiers(), len(families))
	return rr, nil
}

// usualRanks returns rowRecords.usualRank for a row dictionary of families families whose usual
// qualifiers (cellrec.Dict.UsualQualifiers) are qs: by a cell's first byte, the rank of the family
// (the qualifier's first byte) when the byte is a usual cell's (code<<1|1, the code below 0x40 and
// one of qs), 0xff otherwise.
func usualRanks(qs [][]byte, families int) [256]uint8 {
	var r [256]uint8
	for b := range r {
		r[b] = 0xff
		if c := b >> 1; b&0x81 == 1 && c < len(qs) && len(qs[c]) > 0 && int(qs[c][0]) < families {
			r[b] = qs[c][0]
		}
	}
	return r
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
