package pipeline

import (
	"math"
	"slices"
	"unicode/utf8"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// plainRowRecordsBatch reports whether mapBatch maps b's rows with mapPlainRowRecords: plainBatch's
// conditions for row records (RunOptions.Rows) whose plain cells make one record per row (rowPlan.plainOne,
// the fields' codes the row dictionary's): a text batch without bad rows, every cell's field in reach with
// a one-byte qualifier code (plainAt) and a row key that is its field in the batch (keyDirect).
func (mp *Mapper) plainRowRecordsBatch(b *Batch, numCols int) bool {
	m := mp.m
	return m.plain != nil && mp.rows != nil && mp.rows.plainOne && b.Record == nil && !mp.general && len(b.Bad) == 0 &&
		m.ts != tsColumn && !m.CellTags() && mp.keyDirect && mp.pos[mp.keyField] < numCols && mp.plainAt != nil &&
		mp.plainRows == mp.rows && mp.plainMax < numCols && b.NumCols == numCols
}

// mapPlainRowRecords is mapPlainRows for row records (plainRowRecordsBatch): the rows of b in one loop whose
// per-batch decisions are taken once, each row's one record for all families made as appendPlainRowRecord
// makes it (no family in the header; the record's family the first written cell's). A row whose key field
// is NULL, empty, past HBase's limit or (type string) not UTF-8, or whose record could reach rowRecordSplit
// bytes (appendPlainRowRecord cuts such a row), goes through mapRow, which also says why a row is rejected.
func (mp *Mapper) mapPlainRowRecords(b *Batch, numCols int, out *CellBatch) error {
	m := mp.m
	ts := mp.JobTimestamp
	if m.ts == tsFixed {
		ts = m.tsFixed
	}
	at, pcs := mp.plainAt, m.plain
	kf, keyUTF8 := mp.pos[mp.keyField], mp.keyUTF8
	data, ends, nulls := b.Data, b.Ends, b.Nulls
	src, room := data[:cap(data)], plainCellRoom*len(at)
	buf, recs := out.Buf, out.Records
	var keyed, skipped, cells int64
	for i := 0; i < b.NumRows; i++ {
		base := i * numCols
		k := base + kf
		var row []byte
		if !nulls[k] {
			row = fieldText(data, ends, k)
		}
		if len(row) == 0 || len(row) > kv.MaxRowLength || keyUTF8 && !utf8.Valid(row) {
			if err := mp.mapOtherRow(b, i, numCols, out, &buf, &recs); err != nil {
				return err
			}
			continue
		}
		start := int32(0)
		if base > 0 {
			start = ends[base-1]
		}
		// A record that cannot reach rowRecordSplit (its values are at most the row's field bytes, each
		// after a code and a length of at most 3 bytes) is never cut; mapRow cuts the others.
		off := len(buf)
		buf = cellrec.AppendHeader(buf, row, nil, ts, kv.TypePut)
		if span := int(ends[base+numCols-1] - start); len(buf)-off+span+4*len(at) >= rowRecordSplit {
			buf = buf[:off]
			if err := mp.mapOtherRow(b, i, numCols, out, &buf, &recs); err != nil {
				return err
			}
			continue
		}
		// appendPlainFields, with its usual path (plainShort taking the whole row) written out here.
		if cap(buf)-len(buf) < room {
			buf = slices.Grow(buf, room)
		}
		rowEnds, rowNulls := ends[base:base+numCols], nulls[base:base+numCols]
		l, sum, k0, n := plainShort(buf[:cap(buf)], len(buf), src, rowEnds, rowNulls, start, at)
		buf = buf[:l]
		if k0 < len(at) {
			buf, sum, n = appendPlainRest(buf, data, rowEnds, rowNulls, start, at[k0:], sum, n)
		}
		kvBytes := uint64(n)*uint64(8+kv.KeyInfrastructureSize+len(row)) + sum
		if kvBytes > math.MaxUint32 {
			buf = buf[:off]
			if err := mp.mapOtherRow(b, i, numCols, out, &buf, &recs); err != nil {
				return err
			}
			continue
		}
		if n == 0 {
			buf = buf[:off]
		} else {
			first := 0 // the first cell's family, or the first written when some were skipped
			if n < len(at) {
				first = firstPlainWritten(rowEnds, rowNulls, start, at)
			}
			recs = append(recs, RecordRef{Off: uint32(off), Len: uint32(len(buf) - off), Cells: uint32(n),
				KVBytes: uint32(kvBytes), Family: pcs[first].family, Seq: SeqOf(b.FileIndex, b.FirstRow+int64(i))})
		}
		keyed++
		skipped += int64(len(at) - n)
		cells += int64(n)
	}
	out.Buf, out.Records = buf, recs
	mp.counts.RowsKeyed += keyed
	mp.counts.NullsSkipped += skipped
	mp.counts.CellsEmitted += cells
	return nil
}
