package pipeline

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"
	"unsafe"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// Mapper maps batches with one Mapping. It holds the reusable scratch space of one worker (values, key
// and qualifier buffers, pending rejects), so that mapping a row allocates nothing in steady state.
// A Mapper is not safe for concurrent use; make one per goroutine.
type Mapper struct {
	m  *Mapping
	kb keyBuilder
	// keyField is the value slot of a row key that is one bytes column as it is (ImportTsv's
	// HBASE_ROW_KEY), -1 otherwise: such a key is the field itself (rowKey), not a copy of it.
	keyField int
	keyUTF8  bool // the key field's type is string: its bytes must be valid UTF-8
	// keyDirect: the key field is not trimmed, so that a plain mapping's key is its field in the batch.
	keyDirect bool
	// row is the current row's key: mp.key, or the key field's bytes in the batch (keyField).
	row    []byte
	vals   []value
	absent []bool
	pos    []int
	key    []byte
	qual   []byte
	// prevQual keeps the last data-built qualifier of the open record while mp.qual builds the next.
	prevQual []byte
	val      []byte
	tags     []byte // the row's cell tags (CellTags mappings)
	// per-column scratch for Parquet values that need formatting (large decimals, uint64, times of day)
	colText [][]byte

	// plainAt is the plain cells' fields under the current binding when every one of them has a one-byte
	// qualifier code (appendPlainFields), nil otherwise; plainMax is the highest field they read.
	plainAt  []plainField
	plainMax int
	// plainRows is the row plan plainAt was made for (its codes are the row dictionary's), nil for none.
	plainRows *rowPlan

	// binding cache
	boundHeader []string
	boundCols   int
	bound       bool

	rejects rejectBuf
	counts  Counts
	// JobTimestamp is the cell timestamp used when the mapping takes it from the job (RunOptions.Timestamp).
	JobTimestamp int64
	// general maps every row with the general path, also for plain mappings (the differential test).
	general bool
	// rows, when set, makes each row's cells one record for all families (RunOptions.Rows).
	rows *rowPlan
	// rowQual builds a row record's literal qualifier: the family's rank, then the qualifier.
	rowQual []byte
}

// NewMapper returns a Mapper for m.
func (m *Mapping) NewMapper() *Mapper {
	mp := &Mapper{
		m:       m,
		vals:    make([]value, len(m.cols)),
		absent:  make([]bool, len(m.cols)),
		colText: make([][]byte, len(m.cols)),
	}
	mp.keyField, mp.keyUTF8 = m.keyField()
	mp.keyDirect = mp.keyField >= 0 && !m.cols[mp.keyField].trim
	return mp
}

// Counts returns the totals of the batches mapped so far (BytesRead is left to the caller).
func (mp *Mapper) Counts() Counts { return mp.counts }

// MapBatch maps every row of b: good rows become records appended to out (Put cells, RecordRef.Seq =
// SeqOf(b.FileIndex, b.FirstRow+i)), and out.Dict is set to the mapping's Dict; bad rows (including
// b.Bad) go to rej. header holds the input's column names for name-based columns (nil: Parquet batches
// use their schema; positional columns need none). out is appended to, not reset; it must not hold
// records of another mapping. The error is about the batch or the reject limit, not a row.
func (mp *Mapper) MapBatch(b *Batch, header []string, out *CellBatch, rej *RejectSink) error {
	if out.Dict != mp.dict() && len(out.Records) > 0 {
		return fmt.Errorf("%s: the cell batch holds records of another mapping", b.Source)
	}
	if err := mp.mapBatch(b, header, out); err != nil {
		return err
	}
	if rej == nil {
		if mp.rejects.n > 0 {
			return fmt.Errorf("%s", mp.rejects.first)
		}
		return nil
	}
	return rej.add(&mp.rejects)
}

// MapBatch is a convenience for one-off callers (the analyzer): it maps b with a fresh Mapper.
// Workers should keep a Mapper instead.
func (m *Mapping) MapBatch(b *Batch, out *CellBatch, rej *RejectSink) error {
	return m.NewMapper().MapBatch(b, nil, out, rej)
}

func (mp *Mapper) bindFor(b *Batch, header []string) error {
	if b.Record != nil {
		sc := b.Record.Schema()
		names := make([]string, sc.NumFields())
		for i := range names {
			names[i] = sc.Field(i).Name
		}
		pos, err := mp.m.bind(names, len(names))
		if err != nil {
			return err
		}
		mp.pos, mp.bound = pos, false
		return nil
	}
	if mp.bound && b.NumCols == mp.boundCols && sameHeader(header, mp.boundHeader) {
		return nil
	}
	pos, err := mp.m.bind(header, b.NumCols)
	if err != nil {
		return err
	}
	mp.pos, mp.bound, mp.boundCols, mp.boundHeader = pos, true, b.NumCols, header
	mp.plainAt, mp.plainMax = mp.m.plainFields(mp.plainAt[:0], pos, mp.rows)
	mp.plainRows = mp.rows
	return nil
}

func sameHeader(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0]
}

// mapBatch maps b into out and collects its rejects in mp.rejects (reset first).
func (mp *Mapper) mapBatch(b *Batch, header []string, out *CellBatch) error {
	mp.rejects.reset(b)
	m := mp.m
	out.Dict = mp.dict()
	mp.counts.RowsRead += int64(b.NumRows + len(b.Bad))
	mp.counts.RowsRejected += int64(len(b.Bad))
	// Bad rows from the source are reported in input order among the mapped rows.
	nextBad := 0
	flushBad := func(before int64) {
		for nextBad < len(b.Bad) && b.Bad[nextBad].Line < before {
			mp.rejects.addBad(b, &b.Bad[nextBad])
			nextBad++
		}
	}
	defer flushBad(math.MaxInt64)
	if b.NumRows == 0 {
		return nil
	}
	if err := mp.bindFor(b, header); err != nil {
		return fmt.Errorf("%s: %w", b.Source, err)
	}
	numCols := b.NumCols
	if b.Record != nil {
		numCols = int(b.Record.NumCols())
		if int(b.Record.NumRows()) < b.NumRows {
			return fmt.Errorf("%s: batch says %d rows, record has %d", b.Source, b.NumRows, b.Record.NumRows())
		}
	} else if len(b.Ends) < b.NumRows*b.NumCols || len(b.Nulls) < b.NumRows*b.NumCols {
		return fmt.Errorf("%s: malformed batch: %d rows × %d columns but %d field ends", b.Source, b.NumRows, b.NumCols, len(b.Ends))
	}
	if m.importTsv && numCols > m.importTsvWidth {
		reason := fmt.Sprintf("excessive columns: %d fields, the column spec has %d", numCols, m.importTsvWidth)
		for i := 0; i < b.NumRows; i++ {
			flushBad(rowLine(b, i))
			mp.rejects.addRow(b, i, reason, nil)
		}
		mp.counts.RowsRejected += int64(b.NumRows)
		return nil
	}

	if mp.plainBatch(b, numCols) {
		return mp.mapPlainRows(b, numCols, out)
	}
	if mp.plainRowRecordsBatch(b, numCols) {
		return mp.mapPlainRowRecords(b, numCols, out)
	}
	for i := 0; i < b.NumRows; i++ {
		if nextBad < len(b.Bad) {
			flushBad(rowLine(b, i))
		}
		reason, err := mp.mapRow(b, i, numCols, out)
		if err != nil {
			return err
		}
		if reason != "" {
			mp.rejects.addRow(b, i, reason, &mp.kb.enc)
			mp.counts.RowsRejected++
		}
	}
	return nil
}

// mapRow maps row i into records appended to out. A non-empty reason rejects the row (nothing was
// appended to out); an error is about the batch.
func (mp *Mapper) mapRow(b *Batch, i, numCols int, out *CellBatch) (string, error) {
	m := mp.m
	mp.kb.resetRow(len(m.cols))
	// 1. Read the fields the mapping uses into values: for a plain mapping of a text batch, only the key's
	// (its cells take their values straight from the batch, in step 5).
	plain := m.plain != nil && b.Record == nil && !mp.general
	// 2. The row key. A plain mapping whose key is one untrimmed column as it is takes the key field
	// straight from the batch (keyDirect) unless it is NULL (a default, or a NULL key's reason) or not
	// UTF-8 for type string (the reason): then, as for every other key, the values are read and it is built.
	direct := false
	if plain && mp.keyDirect {
		if p := mp.pos[mp.keyField]; p < numCols {
			if k := i*b.NumCols + p; !b.Nulls[k] {
				row := fieldText(b.Data, b.Ends, k)
				if direct = !mp.keyUTF8 || utf8.Valid(row); direct {
					mp.row = row
				}
			}
		}
	}
	var err error
	if !direct {
		if err := mp.readColumns(b, i, numCols, plain); err != nil {
			return "", err
		}
		if mp.row, err = mp.rowKey(); err != nil {
			return "row key: " + err.Error(), nil
		}
	}
	if len(mp.row) == 0 {
		return "empty row key", nil
	}
	if len(mp.row) > kv.MaxRowLength {
		return fmt.Sprintf("row key of %d bytes exceeds HBase's limit of %d", len(mp.row), kv.MaxRowLength), nil
	}

	// 3. The timestamp.
	ts := mp.JobTimestamp
	switch m.ts {
	case tsFixed:
		ts = m.tsFixed
	case tsColumn:
		c := &m.cols[m.tsCol]
		ts, err = mp.kb.millis(mp.vals, m.cols, m.tsCol)
		if err != nil {
			return fmt.Sprintf("timestamp column %q: %v", c.name, err), nil
		}
		if ts < 0 {
			return fmt.Sprintf("timestamp column %q: negative timestamp %d", c.name, ts), nil
		}
	}

	// 4. The row's cell tags, as ImportTsv's TextSortReducer builds them: visibility first, then TTL.
	tagged := m.CellTags()
	mp.tags = mp.tags[:0] // every cell of the row carries them (none without a ttl or visibility column)
	if tagged {
		reason := ""
		if mp.tags, reason = mp.rowTags(mp.tags[:0]); reason != "" {
			return reason, nil
		}
	}

	// 5. The cells, as records: consecutive cells of one family with strictly ascending qualifiers share
	// a record (all of a family's cells, for mappings whose qualifiers are all fixed: they are sorted). The
	// open record and the buffers are kept in locals and stored in out at the end of the row; on a bad
	// value, nothing this row appended is kept.
	seq := SeqOf(b.FileIndex, b.FirstRow+int64(i))
	kvRow := 8 + kv.KeyInfrastructureSize + len(mp.row) // KeyValue bytes of a cell, but for family, qualifier, value
	if plain {
		mp.appendPlainCells(b, i, numCols, out, seq, ts, kvRow)
		return "", nil
	}
	buf, recs := out.Buf, out.Records
	markBuf, markRecs := len(buf), len(recs)
	cols, vals, absent := m.cols, mp.vals[:len(m.cols)], mp.absent[:len(m.cols)]
	var skipped int64
	var cells int
	var cur RecordRef // the open record, if open
	open := false
	prevIdx := -1    // the open record's last qualifier by dictionary index, -1 when literal
	var prevQ []byte // the open record's last qualifier when literal
	specs := m.cells
	dict, rows := mp.dict(), mp.rows
	var lastFam uint16 // with rows: the family of the open record's last cell
	for k := range specs {
		cs := &specs[k]
		if absent[cs.col] {
			continue
		}
		v := &vals[cs.col]
		col := &cols[cs.col]
		mp.val = mp.val[:0]
		empty := v.empty()
		if v.kind == vkNull && !col.nullEmpty || empty && col.skipEmpty {
			skipped++ // NULL with on_null: skip, or NULL/empty with skip_empty
			continue
		}
		val := mp.val
		switch {
		case v.kind == vkNull: // on_null: empty gives an empty value
		case col.typ == TypeBytes && (v.kind == vkText || v.kind == vkBinary):
			val = v.b // bytes as they are: no copy before the one into the record
		default:
			if mp.val, err = mp.kb.enc.encode(mp.val, v, col.typ, &col.tf); err != nil {
				out.Buf, out.Records = buf[:markBuf], recs[:markRecs]
				return fmt.Sprintf("column %q: %v", col.name, err), nil
			}
			val = mp.val
		}
		qual, qidx := cs.qual, cs.qidx
		if cs.qparts != nil {
			mp.qual, err = mp.kb.appendParts(mp.qual[:0], cs.qparts, mp.vals, m.cols)
			if err != nil {
				out.Buf, out.Records = buf[:markBuf], recs[:markRecs]
				return "qualifier: " + err.Error(), nil
			}
			qual = mp.qual
		}
		kvLen := kvRow + len(cs.fam) + len(qual) + len(val)
		if tagged {
			kvLen += 2 + len(mp.tags) // int16 tagsLen | tags after the value
		}
		// Does the cell continue the open record? Same family (with rows: any family, in a record not yet
		// rowRecordSplit long), and a qualifier that sorts strictly after the previous one: by index when
		// both are in the (sorted) dictionary, else by bytes. With rows, qualifiers are the row dictionary's
		// (the family's rank, then the qualifier).
		fam := cs.fam
		if rows != nil {
			fam = nil
			if qidx >= 0 {
				qidx = rows.cells[k]
				qual = dict.At(qidx)
			} else {
				mp.rowQual = append(append(mp.rowQual[:0], rows.rank[cs.family]), qual...)
				qual = mp.rowQual
			}
		}
		newRecord := !open || uint64(cur.KVBytes)+uint64(kvLen) > math.MaxUint32
		if rows == nil {
			newRecord = newRecord || cur.Family != cs.family
		} else {
			newRecord = newRecord || lastFam != cs.family && len(buf)-int(cur.Off) >= rowRecordSplit
		}
		if !newRecord {
			if qidx >= 0 && prevIdx >= 0 {
				newRecord = qidx <= prevIdx
			} else {
				pq := prevQ
				if prevIdx >= 0 {
					pq = dict.At(prevIdx)
				}
				newRecord = bytes.Compare(qual, pq) <= 0
			}
		}
		if newRecord {
			if open {
				cur.Len = uint32(len(buf)) - cur.Off
				recs = append(recs, cur)
			}
			cur, open = RecordRef{Off: uint32(len(buf)), Family: cs.family, Seq: seq}, true
			buf = cellrec.AppendHeader(buf, mp.row, fam, ts, kv.TypePut)
		}
		if qidx >= 0 {
			buf = dict.AppendCellTags(buf, qidx, val, mp.tags)
		} else {
			buf = dict.AppendLiteralCellTags(buf, qual, val, mp.tags)
			// mp.qual is rebuilt for the next data-built qualifier: keep this one in mp.prevQual.
			mp.prevQual = append(mp.prevQual[:0], qual...)
			prevQ = mp.prevQual
		}
		prevIdx, lastFam = qidx, cs.family
		cur.Cells++
		cur.KVBytes += uint32(kvLen)
		cells++
	}
	mp.endRow(out, buf, recs, cur, open, skipped, cells)
	return "", nil
}

// rowKey returns the current row's key (its values read): the key field's bytes in the batch when the key
// is that one column as it is (keyField), else the key built in mp.key (which also says why a key is
// refused: NULL, invalid UTF-8 for type string).
func (mp *Mapper) rowKey() ([]byte, error) {
	if f := mp.keyField; f >= 0 {
		if v := &mp.vals[f]; (v.kind == vkText || v.kind == vkBinary) && (!mp.keyUTF8 || utf8.Valid(v.b)) {
			return v.b, nil
		}
	}
	var err error
	mp.key, err = mp.kb.appendParts(mp.key[:0], mp.m.key, mp.vals, mp.m.cols)
	return mp.key, err
}

// endRow closes the row's open record (if open) and stores the row's records and counts.
func (mp *Mapper) endRow(out *CellBatch, buf []byte, recs []RecordRef, cur RecordRef, open bool, skipped int64, cells int) {
	if open {
		cur.Len = uint32(len(buf)) - cur.Off
		recs = append(recs, cur)
	}
	out.Buf, out.Records = buf, recs
	mp.counts.RowsKeyed++
	mp.counts.NullsSkipped += skipped
	mp.counts.CellsEmitted += int64(cells)
}

// readColumns reads row i's fields into mp.vals and mp.absent: every column's, or with keyOnly the
// row key's (Mapping.keyCols).
func (mp *Mapper) readColumns(b *Batch, i, numCols int, keyOnly bool) error {
	m := mp.m
	// The slices are held in locals: through mp and b the compiler would reload them after every store.
	cols, vals, pos, absent := m.cols, mp.vals[:len(m.cols)], mp.pos[:len(m.cols)], mp.absent[:len(m.cols)]
	nulls, ends, data, base := b.Nulls, b.Ends, b.Data, i*b.NumCols
	n, which := len(cols), []int(nil)
	if keyOnly {
		n, which = len(m.keyCols), m.keyCols
	}
	for j := 0; j < n; j++ {
		c := j
		if which != nil {
			c = which[j]
		}
		col := &cols[c]
		v := &vals[c]
		p := pos[c]
		if p >= numCols {
			absent[c] = true
			v.kind = vkNull
			continue
		}
		absent[c] = false
		if b.Record != nil {
			var err error
			mp.colText[c], err = arrowValue(b.Record.Column(p), i, v, mp.colText[c])
			if err != nil {
				return fmt.Errorf("%s: column %q: %w", b.Source, col.name, err)
			}
		} else {
			if k := base + p; nulls[k] {
				v.kind = vkNull
			} else {
				v.kind, v.b = vkText, fieldText(data, ends, k)
			}
		}
		if v.kind == vkText && col.trim {
			v.b = bytes.TrimSpace(v.b)
		}
		if v.kind == vkNull && col.hasDef {
			v.kind, v.b = vkText, col.def
		}
	}
	return nil
}

// appendPlainCells is step 5 of mapRow for a plain mapping (Mapping.plain) of a text batch: each cell's
// value is its field as it is. It makes the records the general loop makes from the same row (the
// differential test checks it), with fewer decisions per cell: a plain cell is never rejected.
func (mp *Mapper) appendPlainCells(b *Batch, i, numCols int, out *CellBatch, seq uint64, ts int64, kvRow int) {
	m := mp.m
	if mp.rows == nil {
		if m.plainOne && mp.appendPlainRecord(b, i, numCols, out, seq, ts, kvRow) {
			return
		}
	} else if mp.rows.plainOne && mp.appendPlainRowRecord(b, i, numCols, out, seq, ts, kvRow) {
		return
	}
	pcs, pos, dict := m.plain, mp.pos[:len(m.cols)], mp.dict()
	nulls, ends, data, base := b.Nulls, b.Ends, b.Data, i*b.NumCols
	buf, recs := out.Buf, out.Records
	var skipped int64
	var cells int
	var cur RecordRef
	open := false
	prevIdx := -1
	var rowQ []int // with rows: each plain cell's qualifier index in the row dictionary
	if mp.rows != nil {
		rowQ = mp.rows.plain
	}
	var lastFam uint16
	for k := range pcs {
		cs := &pcs[k]
		p := pos[cs.col]
		if p >= numCols {
			continue // absent: the row has no such field
		}
		val, ok := cs.value(data, ends, nulls, base+p)
		if !ok {
			skipped++
			continue
		}
		kvLen := kvRow + cs.famQual + len(val)
		qidx, fam, newRecord := cs.qidx, cs.fam, false
		if rowQ == nil {
			newRecord = !open || cur.Family != cs.family || qidx <= prevIdx
		} else {
			qidx, fam = rowQ[k], nil
			newRecord = !open || qidx <= prevIdx || lastFam != cs.family && len(buf)-int(cur.Off) >= rowRecordSplit
		}
		if newRecord || uint64(cur.KVBytes)+uint64(kvLen) > math.MaxUint32 {
			if open {
				cur.Len = uint32(len(buf)) - cur.Off
				recs = append(recs, cur)
			}
			cur, open = RecordRef{Off: uint32(len(buf)), Family: cs.family, Seq: seq}, true
			buf = cellrec.AppendHeader(buf, mp.row, fam, ts, kv.TypePut)
		}
		buf = dict.AppendCell(buf, qidx, val)
		prevIdx, lastFam = qidx, cs.family
		cur.Cells++
		cur.KVBytes += uint32(kvLen)
		cells++
	}
	mp.endRow(out, buf, recs, cur, open, skipped, cells)
}

// value returns cs's value from field f of a batch, and false when the cell is skipped: a NULL
// field without null_empty, or an empty one with skip_empty.
func (cs *plainCell) value(data []byte, ends []int32, nulls []bool, f int) ([]byte, bool) {
	if nulls[f] {
		return nil, cs.nullEmpty && !cs.skipEmpty
	}
	val := fieldText(data, ends, f)
	return val, len(val) != 0 || !cs.skipEmpty
}

// appendPlainRecord is appendPlainCells for a mapping whose plain cells make one record per row
// (Mapping.plainOne): without the per-cell decision whether to start a record, and with the usual
// one-byte qualifier code and value length written directly. It reports false, having appended
// nothing, for a row whose KeyValue bytes do not fit a record's uint32 count (appendPlainCells then
// cuts it into several records).
func (mp *Mapper) appendPlainRecord(b *Batch, i, numCols int, out *CellBatch, seq uint64, ts int64, kvRow int) bool {
	pcs, pos, dict := mp.m.plain, mp.pos[:len(mp.m.cols)], mp.dict()
	nulls, ends, data, base := b.Nulls, b.Ends, b.Data, i*b.NumCols
	buf := out.Buf
	off := len(buf)
	buf = cellrec.AppendHeader(buf, mp.row, pcs[0].fam, ts, kv.TypePut)
	if at := mp.plainAt; at != nil && mp.plainRows == nil && mp.plainMax < numCols && b.NumCols == numCols {
		start := int32(0)
		if base > 0 {
			start = ends[base-1]
		}
		buf, sum, cells := appendPlainFields(buf, data, ends[base:base+numCols], nulls[base:base+numCols], start, at)
		return mp.endPlainRecord(out, buf, off, uint64(cells)*uint64(kvRow)+sum, cells, int64(len(at)-cells), pcs[0].family, seq)
	}
	var kvBytes uint64
	var skipped int64
	cells := 0
	for k := range pcs {
		cs := &pcs[k]
		p := pos[cs.col]
		if p >= numCols {
			continue // absent: the row has no such field
		}
		val, ok := cs.value(data, ends, nulls, base+p)
		if !ok {
			skipped++
			continue
		}
		if code := 2*cs.qidx + 1; code < 0x80 && len(val) < 0x80 {
			buf = append(buf, byte(code), byte(len(val)))
			buf = append(buf, val...)
		} else {
			buf = dict.AppendCell(buf, cs.qidx, val)
		}
		kvBytes += uint64(kvRow + cs.famQual + len(val))
		cells++
	}
	return mp.endPlainRecord(out, buf, off, kvBytes, cells, skipped, pcs[0].family, seq)
}

// plainField is a plain cell of a one-record row (appendPlainFields) under a binding: its field in the
// row, its one-byte qualifier code, what a cell of it adds to the KeyValue bytes besides the row and
// the value (family and qualifier lengths), and whether the cell is left out when its field is NULL
// (without null_empty, or with skip_empty: a NULL with null_empty alone is an empty value) and when it
// is empty (skip_empty).
type plainField struct {
	f         int32
	famQual   int32
	code      byte
	skipNull  bool
	skipEmpty bool
}

// appendPlainFields appends the cells of one row of a plain one-record mapping to buf, every cell's
// field present (rowEnds and rowNulls are the row's, its first field starting at start in data): the
// loop of appendPlainRecord on locals only, so that it keeps its values in registers. It returns buf,
// the sum over the cells written of famQual and the value's length, and how many it wrote (the others
// were skipped: plainField.skipped).
func appendPlainFields(buf, data []byte, rowEnds []int32, rowNulls []bool, start int32, at []plainField) ([]byte, uint64, int) {
	// A value of up to plainWordMax bytes is copied a word at a time, read from data up to its capacity
	// and written into buf's spare room, instead of through a call to memmove (whose clobbered registers
	// would be reloaded in every iteration): room for that is made once per row.
	if cap(buf)-len(buf) < plainCellRoom*len(at) {
		buf = slices.Grow(buf, plainCellRoom*len(at))
	}
	// The usual row, every value at most plainWordMax bytes, in a leaf loop (plainShort); the rest of
	// the row, from the first other cell on, in appendPlainRest. mapPlainRows has these lines written out.
	l, sum, k0, cells := plainShort(buf[:cap(buf)], len(buf), data[:cap(data)], rowEnds, rowNulls, start, at)
	if k0 == len(at) {
		return buf[:l], sum, cells
	}
	return appendPlainRest(buf[:l], data, rowEnds, rowNulls, start, at[k0:], sum, cells)
}

// appendPlainRest appends the cells of at that plainShort left (at starts at the first of them) as
// appendPlainFields does, after cells written so far whose sum of famQual and value lengths is sum, and
// returns buf, the sum and the count over all the row's cells written.
func appendPlainRest(buf, data []byte, rowEnds []int32, rowNulls []bool, start int32, at []plainField, sum uint64, cells int) ([]byte, uint64, int) {
	for k := range at {
		a := &at[k]
		s, e := start, rowEnds[a.f]
		if a.f > 0 {
			s = rowEnds[a.f-1]
		}
		null := rowNulls[a.f]
		if a.skipped(null, e == s) {
			continue
		}
		if null {
			e = s // NULL with null_empty: an empty value
		}
		n := e - s
		if n < 0x80 {
			buf = append(buf, a.code, byte(n))
		} else {
			buf = binary.AppendUvarint(append(buf, a.code), uint64(n))
		}
		buf = append(buf, data[s:e]...)
		sum += uint64(a.famQual) + uint64(n)
		cells++
	}
	return buf, sum, cells
}

// skipped reports whether a's cell is left out of its row, whose field is NULL or empty as said.
func (a *plainField) skipped(null, empty bool) bool {
	return null && a.skipNull || !null && empty && a.skipEmpty
}

// firstPlainWritten returns the index in at of the first cell appendPlainFields writes for the row
// (rowEnds, rowNulls and start as there), 0 when it writes none.
func firstPlainWritten(rowEnds []int32, rowNulls []bool, start int32, at []plainField) int {
	for k := range at {
		a := &at[k]
		s := start
		if a.f > 0 {
			s = rowEnds[a.f-1]
		}
		if !a.skipped(rowNulls[a.f], rowEnds[a.f] == s) {
			return k
		}
	}
	return 0
}

// plainWordMax is the longest value plainShort copies (a word at a time); plainCellRoom is the room it
// needs a cell: the code, the one-byte length and the value's words.
const (
	plainWordMax  = 64
	plainCellRoom = 2 + plainWordMax
)

// plainShort is appendPlainFields' loop for the usual cells: it appends the cells of at from the first
// on to dst's first l bytes while each value is at most plainWordMax bytes, leaving out the cells
// appendPlainFields skips, and returns dst's new length, the sum of famQual and the value's length over
// the cells written, how many cells of at it took (written or skipped) and how many it wrote. dst's
// capacity (its length here) has room for plainCellRoom bytes a cell of at, and src is the batch's data
// up to its capacity: each cell is written as its code, its length and 2, 4 or 8 8-byte words of the
// field from src (the bytes past the value are overwritten by the next cell or left beyond the record's
// end).
//
// A leaf loop that reads and writes through unsafe pointers, so that its values stay in registers (with
// checked slices Go's register allocator reloaded them in every step). Every access is in bounds: a cell
// is written at l with l+plainCellRoom <= len(dst) (room for plainCellRoom bytes a cell of at, checked
// on entry, and l grows by at most that a cell); a field f is looked up only when f < len(rowEnds) <=
// len(rowNulls) (checked on entry), and its value's words read only when 0 <= s and s+plainWordMax <=
// len(src).
func plainShort(dst []byte, l int, src []byte, rowEnds []int32, rowNulls []bool, start int32, at []plainField) (int, uint64, int, int) {
	if len(dst)-l < plainCellRoom*len(at) || len(rowNulls) < len(rowEnds) {
		panic("pipeline: plainShort without room for the cells")
	}
	dp, sp := unsafe.Pointer(unsafe.SliceData(dst)), unsafe.Pointer(unsafe.SliceData(src))
	ep, np := unsafe.Pointer(unsafe.SliceData(rowEnds)), unsafe.Pointer(unsafe.SliceData(rowNulls))
	if len(src) < plainWordMax {
		return l, 0, 0, 0
	}
	nf, ns := uint(len(rowEnds)), uint(len(src)-plainWordMax)
	var sum uint64
	// at is walked by index: a pointer walk to its end (one past its last element) is an invalid
	// pointer for the compiler's checkptr mode (make test-checkptr) when at fills its allocation.
	k, skipped := 0, 0
loop:
	for ; k < len(at); k++ {
		pf := &at[k]
		f := uint(pf.f)
		if f >= nf {
			break
		}
		s, e := start, *(*int32)(unsafe.Add(ep, 4*f))
		if f > 0 {
			s = *(*int32)(unsafe.Add(ep, 4*f-4))
		}
		n := e - s
		if null := *(*bool)(unsafe.Add(np, f)); null || uint32(n-1) >= plainWordMax { // or empty, or too long
			switch {
			case null && pf.skipNull, !null && n == 0 && pf.skipEmpty:
				skipped++
				continue
			case null:
				n = 0 // NULL with null_empty: an empty value
			case n != 0:
				break loop
			}
		}
		if uint(int(s)) > ns { // s < 0 is a huge uint
			break
		}
		p, v := unsafe.Add(dp, l), unsafe.Add(sp, s)
		*(*byte)(p), *(*byte)(unsafe.Add(p, 1)) = pf.code, byte(n)
		*(*uint64)(unsafe.Add(p, 2)) = *(*uint64)(v)
		*(*uint64)(unsafe.Add(p, 10)) = *(*uint64)(unsafe.Add(v, 8))
		if n > 16 {
			*(*uint64)(unsafe.Add(p, 18)) = *(*uint64)(unsafe.Add(v, 16))
			*(*uint64)(unsafe.Add(p, 26)) = *(*uint64)(unsafe.Add(v, 24))
			if n > 32 {
				*(*uint64)(unsafe.Add(p, 34)) = *(*uint64)(unsafe.Add(v, 32))
				*(*uint64)(unsafe.Add(p, 42)) = *(*uint64)(unsafe.Add(v, 40))
				*(*uint64)(unsafe.Add(p, 50)) = *(*uint64)(unsafe.Add(v, 48))
				*(*uint64)(unsafe.Add(p, 58)) = *(*uint64)(unsafe.Add(v, 56))
			}
		}
		l += 2 + int(n)
		sum += uint64(pf.famQual) + uint64(n)
	}
	return l, sum, k, k - skipped
}

// appendPlainRowRecord is appendPlainRecord for row records (rowPlan.plainOne: the plain cells' indexes
// in the row dictionary ascend): one record per row for all families, its family the first cell's. It
// also reports false, having appended nothing, for a row record that reaches rowRecordSplit bytes
// before a family's cells (appendPlainCells then cuts it there). A function of its own, so that the
// one-family loop keeps its registers.
func (mp *Mapper) appendPlainRowRecord(b *Batch, i, numCols int, out *CellBatch, seq uint64, ts int64, kvRow int) bool {
	pcs, pos, dict := mp.m.plain, mp.pos[:len(mp.m.cols)], mp.dict()
	nulls, ends, data, base := b.Nulls, b.Ends, b.Data, i*b.NumCols
	rowQ := mp.rows.plain // each plain cell's qualifier index in the row dictionary
	buf := out.Buf
	off := len(buf)
	buf = cellrec.AppendHeader(buf, mp.row, nil, ts, kv.TypePut)
	if at := mp.plainAt; at != nil && mp.plainRows == mp.rows && mp.plainMax < numCols && b.NumCols == numCols {
		start := int32(0)
		if base > 0 {
			start = ends[base-1]
		}
		// A record that cannot reach rowRecordSplit (its values are at most the row's field bytes, each
		// after a code and a length of at most 3 bytes) is never cut: the one-family loop makes it.
		if span := int(ends[base+numCols-1] - start); len(buf)-off+span+4*len(at) < rowRecordSplit {
			rowEnds, rowNulls := ends[base:base+numCols], nulls[base:base+numCols]
			// appendPlainFields, written out as in mapPlainRows.
			if cap(buf)-len(buf) < plainCellRoom*len(at) {
				buf = slices.Grow(buf, plainCellRoom*len(at))
			}
			l, sum, k0, cells := plainShort(buf[:cap(buf)], len(buf), data[:cap(data)], rowEnds, rowNulls, start, at)
			buf = buf[:l]
			if k0 < len(at) {
				buf, sum, cells = appendPlainRest(buf, data, rowEnds, rowNulls, start, at[k0:], sum, cells)
			}
			first := 0 // the first cell's family, or the first written when some were skipped
			if cells < len(at) {
				first = firstPlainWritten(rowEnds, rowNulls, start, at)
			}
			return mp.endPlainRecord(out, buf, off, uint64(cells)*uint64(kvRow)+sum, cells, int64(len(at)-cells),
				pcs[first].family, seq)
		}
	}
	var kvBytes uint64
	var skipped int64
	cells := 0
	family, lastFam := pcs[0].family, pcs[0].family // the first and the last cell's
	for k := range pcs {
		cs := &pcs[k]
		p := pos[cs.col]
		if p >= numCols {
			continue // absent: the row has no such field
		}
		val, ok := cs.value(data, ends, nulls, base+p)
		if !ok {
			skipped++
			continue
		}
		qidx := rowQ[k]
		if cells == 0 {
			family = cs.family
		} else if cs.family != lastFam && len(buf)-off >= rowRecordSplit {
			out.Buf = buf[:off]
			return false
		}
		lastFam = cs.family
		if code := 2*qidx + 1; code < 0x80 && len(val) < 0x80 {
			buf = append(buf, byte(code), byte(len(val)))
			buf = append(buf, val...)
		} else {
			buf = dict.AppendCell(buf, qidx, val)
		}
		kvBytes += uint64(kvRow + cs.famQual + len(val))
		cells++
	}
	return mp.endPlainRecord(out, buf, off, kvBytes, cells, skipped, family, seq)
}

// endPlainRecord ends a row that appendPlainRecord or appendPlainRowRecord built in buf from off: it
// reports false, with nothing appended, when the row's KeyValue bytes overflow a RecordRef's 32 bits
// (the caller then takes the general path), drops a row with no cells, and adds the row's one record of
// family otherwise.
func (mp *Mapper) endPlainRecord(out *CellBatch, buf []byte, off int, kvBytes uint64, cells int, skipped int64,
	family uint16, seq uint64) bool {
	if kvBytes > math.MaxUint32 {
		out.Buf = buf[:off]
		return false
	}
	recs := out.Records
	if cells == 0 {
		buf = buf[:off]
	} else {
		recs = append(recs, RecordRef{Off: uint32(off), Len: uint32(len(buf) - off), Cells: uint32(cells),
			KVBytes: uint32(kvBytes), Family: family, Seq: seq})
	}
	mp.endRow(out, buf, recs, RecordRef{}, false, skipped, cells)
	return true
}

// rowTags appends the current row's cell tags to dst, or returns why the row is rejected.
func (mp *Mapper) rowTags(dst []byte) ([]byte, string) {
	m := mp.m
	if c := m.visCol; c >= 0 && !mp.absent[c] {
		v := &mp.vals[c]
		switch {
		case v.empty():
		case v.kind != vkText && v.kind != vkBinary:
			return dst, fmt.Sprintf("visibility column %q: not text", m.cols[c].name)
		default:
			vt, err := kv.VisibilityTags(string(v.b), m.labels)
			if err != nil {
				return dst, fmt.Sprintf("visibility column %q: %v", m.cols[c].name, err)
			}
			dst = append(dst, vt...)
		}
	}
	if c := m.ttlCol; c >= 0 && !mp.absent[c] {
		v := &mp.vals[c]
		if !v.empty() {
			ttl, err := mp.kb.millis(mp.vals, m.cols, c)
			if err != nil {
				return dst, fmt.Sprintf("ttl column %q: %v", m.cols[c].name, err)
			}
			if ttl > 0 { // as ImportTsv: no tag for a TTL of 0 or less
				dst = append(dst, kv.TTLTag(ttl)...)
			}
		}
	}
	if len(dst) > kv.MaxTagsLength {
		return dst, fmt.Sprintf("cell tags of %d bytes exceed HBase's limit of %d", len(dst), kv.MaxTagsLength)
	}
	return dst, ""
}

// rowLine is the position of row i comparable with BadRow.Line: its line (CSV) or ordinal (Parquet).
func rowLine(b *Batch, i int) int64 {
	if b.Record == nil && i < len(b.Lines) {
		return b.Lines[i]
	}
	return b.FirstRow + int64(i)
}
