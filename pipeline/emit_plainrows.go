package pipeline

import (
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// plainBatch reports whether mapBatch maps b's rows with mapPlainRows: a text batch without bad rows, a
// plain mapping of one family whose rows are one record each (Mapping.plainOne, no row records), every
// cell's field in reach with a one-byte qualifier code (plainAt), and a row key that is its field in the
// batch (keyDirect).
func (mp *Mapper) plainBatch(b *Batch, numCols int) bool {
	m := mp.m
	return m.plain != nil && m.plainOne && b.Record == nil && !mp.general && len(b.Bad) == 0 && mp.rows == nil &&
		mp.keyDirect && mp.pos[mp.keyField] < numCols && mp.plainAt != nil && mp.plainRows == nil &&
		mp.plainMax < numCols && b.NumCols == numCols
}

// mapPlainRows maps the rows of b (plainBatch) as mapRow does, in one loop whose per-batch decisions are
// taken once: for a row whose key field is not NULL, not empty, within HBase's limit and (type string)
// UTF-8, it appends the row's one record as appendPlainRecord does; any other row (and a row whose
// KeyValue bytes overflow a RecordRef) goes through mapRow, which also says why a row is rejected.
func (mp *Mapper) mapPlainRows(b *Batch, numCols int, out *CellBatch) error {
	m := mp.m
	ts := mp.JobTimestamp
	if m.ts == tsFixed {
		ts = m.tsFixed
	}
	at, fam, family := mp.plainAt, m.plain[0].fam, m.plain[0].family
	kf, keyUTF8 := mp.pos[mp.keyField], mp.keyUTF8
	data, ends, nulls := b.Data, b.Ends, b.Nulls
	if n := b.NumRows * numCols; len(ends) < n || len(nulls) < n {
		return fmt.Errorf("pipeline: a batch of %d rows of %d fields with %d field ends and %d NULL flags", b.NumRows, numCols, len(ends), len(nulls))
	}
	// Each row's ends and NULL flags are sliced through unsafe pointers (two checked slice expressions
	// cost ~32 instructions a row): row i's numCols fields lie within the NumRows*numCols checked above.
	ep, np := unsafe.Pointer(unsafe.SliceData(ends)), unsafe.Pointer(unsafe.SliceData(nulls))
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
		off := len(buf)
		buf = cellrec.AppendHeader(buf, row, fam, ts, kv.TypePut)
		// appendPlainFields, with its usual path (plainShort taking the whole row) written out here.
		if cap(buf)-len(buf) < room {
			buf = slices.Grow(buf, room)
		}
		rowEnds := unsafe.Slice((*int32)(unsafe.Add(ep, 4*base)), numCols)
		rowNulls := unsafe.Slice((*bool)(unsafe.Add(np, base)), numCols)
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
			recs = append(recs, RecordRef{Off: uint32(off), Len: uint32(len(buf) - off), Cells: uint32(n),
				KVBytes: uint32(kvBytes), Family: family, Seq: SeqOf(b.FileIndex, b.FirstRow+int64(i))})
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

// mapOtherRow maps row i of mapPlainRows' batch through mapRow, with the loop's buffers stored in out
// before and taken back after, and records its reject.
func (mp *Mapper) mapOtherRow(b *Batch, i, numCols int, out *CellBatch, buf *[]byte, recs *[]RecordRef) error {
	out.Buf, out.Records = *buf, *recs
	reason, err := mp.mapRow(b, i, numCols, out)
	if err != nil {
		return err
	}
	if reason != "" {
		mp.rejects.addRow(b, i, reason, &mp.kb.enc)
		mp.counts.RowsRejected++
	}
	*buf, *recs = out.Buf, out.Records
	return nil
}
