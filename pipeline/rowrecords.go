package pipeline

import (
	"fmt"

	"github.com/hfload/hfload/internal/cellrec"
)

// rowPlan is how a Mapper emits row records (RunOptions.Rows): one record per input row for all of
// the mapping's families, under a cellrec.RowDict, instead of one per (row, family). Cells stay in
// the mapping's order; a cell continues the open record when its (family rank, qualifier) sorts after
// the previous cell's, so a mapping that lists its families in byte order makes one record per row.
type rowPlan struct {
	rd    *cellrec.RowDict
	rank  []byte // by the mapping's family index
	cells []int  // by Mapping.cells: the fixed qualifier's index in the row dictionary (-1: built from data)
	plain []int  // by Mapping.plain: the same
	// plainOne: plain's indexes ascend strictly, so each row of a plain mapping is one record (but for
	// rowRecordSplit), made by appendPlainRecord.
	plainOne bool
}

// rowRecordSplit: a row record already this long starts a new record at the next family, so that a
// wide row does not make one record many times larger than its families' records.
const rowRecordSplit = 64 << 10

// newRowPlan checks that rd's families are m's and its dictionary is over m's, and indexes m's cells.
func (m *Mapping) newRowPlan(rd *cellrec.RowDict) (*rowPlan, error) {
	if rd.Families() != len(m.families) || rd.Dict().Len() != len(m.families)*m.dict.Len() ||
		rd.Dict().Tagged() != m.dict.Tagged() {
		return nil, fmt.Errorf("row records: the row dictionary is not the mapping's (%d families %v)", len(m.families), m.families)
	}
	p := &rowPlan{rd: rd, rank: make([]byte, len(m.families))}
	for i, f := range m.families {
		r, ok := rd.Rank([]byte(f))
		if !ok {
			return nil, fmt.Errorf("row records: family %q is not in the row dictionary", f)
		}
		p.rank[i] = byte(r)
	}
	index := func(family uint16, qidx int) int {
		if qidx < 0 {
			return -1
		}
		return int(p.rank[family])*m.dict.Len() + qidx
	}
	for _, cs := range m.cells {
		p.cells = append(p.cells, index(cs.family, cs.qidx))
	}
	p.plainOne = len(m.plain) > 0
	for k, cs := range m.plain {
		p.plain = append(p.plain, index(cs.family, cs.qidx))
		if k > 0 && p.plain[k] <= p.plain[k-1] {
			p.plainOne = false
		}
	}
	return p, nil
}

// dict is the dictionary of the records mp emits: the mapping's, or with row records the row
// dictionary.
func (mp *Mapper) dict() *cellrec.Dict {
	if mp.rows != nil {
		return mp.rows.rd.Dict()
	}
	return mp.m.dict
}
