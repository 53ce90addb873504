package engine

import (
	"bytes"
	"fmt"
	"math/bits"
	"strconv"
	"sync"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/hfload/hfload/pipeline"
	"github.com/hfload/hfload/sorter"
)

// stream applies the duplicates policy to a sorted iterator and hands each cell to write to a
// fileWriter. The iterator yields views (consecutive cells of one record); equal keys arrive in input
// order, and since the cells of a view are distinct, a cell can only equal the last cell of the previous
// view. With a combiner the sorter has folded equal keys already.
//
// With row records (rowrecords.go) the iterator's cells are every family's: each cell is taken back to
// its family, qualifier and family's fileWriter (cell). Equal keys are then still adjacent, and a
// view's cells still distinct, but consecutive cells of a view may go to different files.
type stream struct {
	o    *outputWriter
	it   *sorter.Iterator
	d    *cellrec.Dict
	pol  DuplicatePolicy
	fws  []*fileWriter    // by family rank with row records; else the one family's
	rows *rowRecords      // nil: one family's stream
	hdrs []cellrec.Header // with rows: the current view's header in each family, by rank
	// hashRows: with rows, some family's file has a ROW bloom; each view's row is hashed once for all
	// of them (hfilewriter.HashRow) instead of once in each family's writer.
	hashRows bool
	// share: with rows, the region's shared ROW bloom (bloomshare.go), nil without. The stream adds each
	// row's hash to it and drops a family that did not get the previous row: by rank bit (rows have at
	// most maxRowFamilies families), shareLive holds the families not dropped and shareGot those that
	// got a written cell of the current row (all of them before the first row).
	share     *hfilewriter.RowBloomShare
	shareLive uint32
	shareGot  uint32
	// rowNo numbers the rows of a row-record stream (views of one row share it): a family's writer
	// starts a row in its file where the number changes.
	rowNo int64

	// prevRank: in runRows, the family of prev's cell (prev's row and family are set only to compare).
	prevRank int

	// The last cell handed on: its seq, and with policy last its key (copies).
	prev    cellrec.Header
	prevQ   []byte
	prevKQ  []byte // prev's qualifier: prevQ, or in runRows a dictionary qualifier itself (setPrevRow)
	pseq    uint64
	hasPrev bool
	prevRow []byte // backing of prev.Row
	prevFam []byte // backing of prev.Family
	heldH   cellrec.Header
	heldQ   []byte // last: the pending cell (copies)
	heldV   []byte
	heldT   []byte
	heldRow []byte
	heldFam []byte
	heldW   int // the held cell's fileWriter (index in fws)
	hasHeld bool
	keyBuf  []byte              // flat keys for duplicate examples
	same    []kv.QualifierValue // run: the cells of a view that go to the writer together
}

// newStream returns a stream of it into fws: a region's finished stream (releaseStream) set up anew,
// keeping its buffers, or a new one.
func (o *outputWriter) newStream(it *sorter.Iterator, fws []*fileWriter) *stream {
	pol := o.spec.DuplicatePolicy()
	if o.spec.Combine != nil {
		pol = DuplicatesKeep
	}
	s := o.spareStreams.get()
	if s == nil {
		s = &stream{}
	}
	// s cleared, its buffers kept: the buffers taken out, the struct zeroed in place and the fields
	// set one by one (a composite literal assigned over it was built on the stack and copied in, ~260
	// instructions a region).
	prevQ, prevRow, prevFam, heldQ, heldV := s.prevQ[:0], s.prevRow[:0], s.prevFam[:0], s.heldQ[:0], s.heldV[:0]
	heldT, heldRow, heldFam, keyBuf, same := s.heldT[:0], s.heldRow[:0], s.heldFam[:0], s.keyBuf[:0], s.same[:0]
	*s = stream{}
	s.o, s.it, s.d, s.pol, s.fws, s.rows = o, it, o.dict, pol, fws, o.rows
	s.prevQ, s.prevRow, s.prevFam, s.heldQ, s.heldV = prevQ, prevRow, prevFam, heldQ, heldV
	s.heldT, s.heldRow, s.heldFam, s.keyBuf, s.same = heldT, heldRow, heldFam, keyBuf, same
	if s.rows != nil {
		s.hdrs = make([]cellrec.Header, len(fws))
		for rank := range s.hdrs {
			s.hdrs[rank].Family = s.rows.rd.Family(rank)
			if fws[rank].writerOptions().Bloom == hfilewriter.BloomRow {
				s.hashRows = true
			}
		}
	}
	return s
}

// releaseStream keeps s, whose region is written, for the next region's stream (newStream), and its
// file writers, all closed, for the next region's (newFileWriter).
func (o *outputWriter) releaseStream(s *stream) {
	clear(s.same[:cap(s.same)]) // they point into the sorter's memory
	fws := s.fws
	s.it, s.fws, s.hdrs, s.share = nil, nil, nil, nil
	o.spareStreams.put(s, fws)
}

// streamSpares keeps finished streams and their file writers for the next regions: with thousands of
// regions a stream and the buffers it grows (the same-row batch, key copies) were made for every
// region, and so was each file writer (~300 bytes of fresh memory a file at 10,000 regions: ~3 MB,
// ~700 page faults).
type streamSpares struct {
	mu   sync.Mutex
	free []*stream
	fws  []*fileWriter // closed file writers
}

func (p *streamSpares) get() *stream {
	p.mu.Lock()
	defer p.mu.Unlock()
	return popLast(&p.free)
}

// put keeps s and fws, file writers that are closed (no file, no writer) and referenced by nothing else.
func (p *streamSpares) put(s *stream, fws []*fileWriter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, s)
	for _, fw := range fws {
		if fw.w == nil && fw.f == nil {
			p.fws = append(p.fws, fw)
		}
	}
}

// fileWriter returns a kept file writer, or nil.
func (p *streamSpares) fileWriter() *fileWriter {
	p.mu.Lock()
	defer p.mu.Unlock()
	return popLast(&p.fws)
}

// popLast removes the last of *l and returns it (nil when *l is empty), clearing its slot so that the
// list keeps no reference to it.
func popLast[T any](l *[]*T) *T {
	n := len(*l)
	if n == 0 {
		return nil
	}
	v := (*l)[n-1]
	(*l)[n-1] = nil
	*l = (*l)[:n-1]
	return v
}

// rowHeader takes the header of the current view (h) of row records to family rank: the header of the
// view's cells of that family.
func (s *stream) rowHeader(h *cellrec.Header, rank int) *cellrec.Header {
	fh := &s.hdrs[rank]
	fh.Row, fh.TS, fh.Type = h.Row, h.TS, h.Type
	return fh
}

// setPrev remembers the key of the last cell of a view.
func (s *stream) setPrev(h *cellrec.Header, q []byte, seq uint64) {
	if !s.hasPrev || !bytes.Equal(s.prevRow, h.Row) {
		s.prevRow = append(s.prevRow[:0], h.Row...)
	}
	if !s.hasPrev || !bytes.Equal(s.prevFam, h.Family) {
		s.prevFam = append(s.prevFam[:0], h.Family...)
	}
	s.prev = cellrec.Header{Row: s.prevRow, Family: s.prevFam, TS: h.TS, Type: h.Type}
	s.prevQ = append(s.prevQ[:0], q...)
	s.prevKQ = s.prevQ
	s.pseq = seq
	s.hasPrev = true
}

// setPrevRow is setPrev for runRows: the last cell of view vh is of family rank, qualifier q. runRows
// knows whether the view starts a row (newRow: else its row is prevRow already) and whether q is a
// dictionary qualifier (qDict: prev takes it as it is, instead of a copy). Only the key's scalars are
// stored: prev's row and family are set by samePrev, the one that compares (views of a row after its
// first are few).
func (s *stream) setPrevRow(vh *cellrec.Header, rank int, q []byte, seq uint64, newRow, qDict bool) {
	if newRow {
		s.prevRow = append(s.prevRow[:0], vh.Row...)
	}
	if !qDict {
		s.prevQ = append(s.prevQ[:0], q...)
		q = s.prevQ
	}
	s.prevRank, s.prev.TS, s.prev.Type = rank, vh.TS, vh.Type
	s.prevKQ = q
	s.pseq = seq
	s.hasPrev = true
}

// samePrev reports whether the first cell of view vh (family rank, qualifier q) has the key of the last
// cell handed on (setPrevRow), for a view of the row of that cell.
func (s *stream) samePrev(vh *cellrec.Header, rank int, q []byte) bool {
	s.prev.Row, s.prev.Family = s.prevRow, s.hdrs[s.prevRank].Family
	return cellrec.Compare(&s.prev, s.prevKQ, s.rowHeader(vh, rank), q) == 0
}

// hold keeps a copy of a cell (policy last) until the next view shows whether a later duplicate replaces it.
func (s *stream) hold(w int, h *cellrec.Header, q, v, tags []byte) {
	s.heldW = w
	s.heldRow = append(s.heldRow[:0], h.Row...)
	s.heldFam = append(s.heldFam[:0], h.Family...)
	s.heldH = cellrec.Header{Row: s.heldRow, Family: s.heldFam, TS: h.TS, Type: h.Type}
	s.heldQ = append(s.heldQ[:0], q...)
	s.heldV = append(s.heldV[:0], v...)
	s.heldT = append(s.heldT[:0], tags...)
	s.hasHeld = true
}

func (s *stream) writeHeld() error {
	if !s.hasHeld {
		return nil
	}
	s.hasHeld = false
	fw := s.fws[s.heldW]
	if err := fw.startRow(&s.heldH); err != nil {
		return err
	}
	return fw.append(&s.heldH, s.heldQ, s.heldV, s.heldT)
}

// writeSame writes cells of h without tags, the first with append unless a cell of the view is written
// already (*written), the others together.
func (s *stream) writeSame(fw *fileWriter, h *cellrec.Header, cells []kv.QualifierValue, written *bool) error {
	if len(cells) == 0 {
		return nil
	}
	if !*written {
		if err := fw.append(h, cells[0].Qualifier, cells[0].Value, nil); err != nil {
			return err
		}
		*written = true
		cells = cells[1:]
	}
	if len(cells) == 0 {
		return nil
	}
	return fw.appendSameRowCells(cells)
}

// run writes every cell the policy keeps, of one family's stream (s.rows nil) into s.fws[0].
func (s *stream) run() error {
	last := s.pol == DuplicatesLast
	fw := s.fws[0]
	quals := s.d.UsualQualifiers()
	for s.it.Next() {
		h, seq := s.it.Header(), s.it.Seq()
		cells := s.it.Cells()
		if !last {
			// The usual view: its cells without tags from the first on, written together (the first
			// starts the row) unless the first is a duplicate to drop; usual cells straight from the
			// record when the writer's run takes them.
			if quals != nil {
				// A row after the file's last: the roll check, the row's start and its first cells
				// in one call (writeUsual's first way, here: a call a row less).
				if fw.w != nil && fw.w.NewRowCodedOK() {
					if used := fw.appendNewRowCoded(h, quals, cells); used > 0 { // a new row: no duplicate, no roll
						if used < len(cells) {
							if _, err := s.writeRest(fw, h, nil, cells[used:], true); err != nil {
								return err
							}
						}
						s.pseq = seq
						continue
					}
				}
				if done, err := s.writeUsual(fw, h, seq, quals, cells); done || err != nil {
					if err != nil {
						return err
					}
					continue
				}
			}
			if same, rest := s.d.AppendUntagged(s.same[:0], cells); len(same) > 0 {
				s.same = same
				if err := s.writeView(fw, h, seq, same, rest); err != nil {
					return err
				}
				continue
			}
		}
		q, v, t, rest := s.d.NextTags(cells)
		// A duplicate equals the last cell handed on: with policy last the held one (kept in s.prev);
		// otherwise the last cell written, or one equal to it that was dropped (the writer has its key).
		var dup bool
		if last {
			dup = s.hasPrev && cellrec.Compare(&s.prev, s.prevKQ, h, q) == 0
		} else {
			dup = fw.w != nil && fw.w.IsLast(h.Row, h.Family, q, h.TS, h.Type)
		}
		if dup {
			s.keyBuf = cellrec.AppendKey(s.keyBuf[:0], h, q)
			s.o.recordDup(s.keyBuf, s.pseq, seq)
		}
		if last && !dup {
			if err := s.writeHeld(); err != nil {
				return err
			}
		}
		if err := fw.startRow(h); err != nil {
			return err
		}
		// With policy last the first cell is written unless it ends the view (then it is held);
		// otherwise unless it is a duplicate to drop.
		written := last || !dup || s.pol == DuplicatesKeep
		switch {
		case last && len(rest) == 0:
			s.hold(0, h, q, v, t) // a duplicate replaces the held cell: the later input wins
		case written:
			s.hasHeld = false
			if err := fw.append(h, q, v, t); err != nil {
				return err
			}
		}
		q, err := s.writeRest(fw, h, q, rest, written)
		if err != nil {
			return err
		}
		if last {
			s.setPrev(h, q, seq)
		}
		s.pseq = seq
	}
	clear(s.same[:cap(s.same)]) // they point into the sorter's memory
	if err := s.it.Err(); err != nil {
		return nil // reported by writeStream
	}
	return s.writeHeld()
}

// writeView is run's work for a view (policy not last) whose first cells, same, have no tags (all of
// them, without tags in the records), rest the others: the first cell of same is a duplicate or starts
// its row, and they all go to the writer in one call unless it is a duplicate to drop.
func (s *stream) writeView(fw *fileWriter, h *cellrec.Header, seq uint64, same []kv.QualifierValue, rest []byte) error {
	q := same[0].Qualifier
	dup := fw.w != nil && fw.w.IsLast(h.Row, h.Family, q, h.TS, h.Type)
	if dup {
		s.keyBuf = cellrec.AppendKey(s.keyBuf[:0], h, q)
		s.o.recordDup(s.keyBuf, s.pseq, seq)
	}
	if err := fw.startRow(h); err != nil {
		return err
	}
	written := !dup || s.pol == DuplicatesKeep
	var err error
	if written {
		err = fw.appendRow(h, same)
	} else {
		err = s.writeSame(fw, h, same[1:], &written)
	}
	if err == nil && len(rest) > 0 {
		_, err = s.writeRest(fw, h, same[len(same)-1].Qualifier, rest, written)
	}
	s.pseq = seq
	return err
}

// writeUsual is writeView for a view whose first cells are usual cells (quals: the dictionary's
// qualifiers), handed to the writer as they are in the record when its first cell starts a row in an
// open file, when fileWriter.appendNewRowCoded (run's first way: for a row after the file's last, the
// roll check, the row's start and its first cells in one call) took none: startRow and
// fileWriter.appendRowCoded. It reports
// whether it wrote the view, and writes nothing when it did not (the caller then takes writeView;
// startRow may have been called).
func (s *stream) writeUsual(fw *fileWriter, h *cellrec.Header, seq uint64, quals [][]byte, cells []byte) (bool, error) {
	if fw.w == nil || !fw.w.RowCodedOK(len(h.Row), len(h.Family)) {
		return false, nil // a row key too long, or a file the writer's coded run does not take: writeView
	}
	q, _, _, ok := s.d.NextUsual(cells)
	if !ok || fw.w.IsLast(h.Row, h.Family, q, h.TS, h.Type) {
		return false, nil // a duplicate goes through writeView, which records it
	}
	if err := fw.startRow(h); err != nil {
		return true, err
	}
	used := fw.appendRowCoded(h, quals, cells)
	if used == 0 {
		return false, nil
	}
	var err error
	if rest := cells[used:]; len(rest) > 0 {
		_, err = s.writeRest(fw, h, nil, rest, true)
	}
	s.pseq = seq
	return true, err
}

// writeRest writes the rest of a view after its first cell (q, written or not): distinct keys, each
// greater than the first. Once a cell of the view is in the file, the next ones share its row, family,
// timestamp and type: those without tags go to the writer together (same, in order); a cell with tags
// goes alone. It returns the qualifier of the view's last cell.
func (s *stream) writeRest(fw *fileWriter, h *cellrec.Header, q, rest []byte, written bool) ([]byte, error) {
	last := s.pol == DuplicatesLast
	same := s.same[:0]
	defer func() { s.same = same[:0] }()
	for len(rest) > 0 {
		same, rest = s.d.AppendUntagged(same[:0], rest)
		if n := len(same); n > 0 {
			q = same[n-1].Qualifier
			held := last && len(rest) == 0
			if held {
				same = same[:n-1]
			}
			if err := s.writeSame(fw, h, same, &written); err != nil {
				return q, err
			}
			if held {
				s.hold(0, h, q, same[:n][n-1].Value, nil)
				break
			}
		}
		if len(rest) == 0 {
			break
		}
		var v, t []byte
		q, v, t, rest = s.d.NextTags(rest)
		if last && len(rest) == 0 {
			s.hold(0, h, q, v, t)
			break
		}
		var err error
		if written {
			err = fw.appendSameRow(h, q, v, t)
		} else {
			err = fw.append(h, q, v, t)
			written = true
		}
		if err != nil {
			return q, err
		}
	}
	return q, nil
}

// runRows is run for a stream of row records: each view goes, once, to every family's writer (fw),
// which takes its family's cells out of it. Equal keys are adjacent in the stream whatever their
// family, so a duplicate is a cell whose key equals the last cell handed on (s.prev, for every policy):
// the first cell of a view. The policy marks the view: policies error and first drop that cell; with
// last, the last cell of every view is written unless the next view's first cell replaces it (then
// that one is, unless the view after replaces it in turn).
func (s *stream) runRows(fw *familyWriters) error {
	last := s.pol == DuplicatesLast
	ranges := make([]uint32, len(s.fws)+1)
	s.shareStart()
	pending := -1 // policy last: the family of the previous view's last cell, until this view shows whether it is replaced
	for s.it.Next() {
		vh, seq := s.it.Header(), s.it.Seq()
		newRow := !s.hasPrev || !bytes.Equal(s.prevRow, vh.Row)
		if newRow {
			s.rowNo++
		}
		cells := s.it.Cells()
		// The first cell: the usual one inlined (NextUsual), any other through NextTags.
		q, _, rest, ok := s.d.NextUsual(cells)
		if !ok {
			q, _, _, rest = s.d.NextTags(cells)
		}
		w, q := s.rows.rd.Split(q)
		var flags uint8
		var rh hfilewriter.RowHash
		if s.hashRows {
			rh, flags = hfilewriter.HashRow(vh.Row), viewHashed
		}
		dup := !newRow && s.samePrev(vh, w, q) // a new row has no duplicate
		if dup {
			s.keyBuf = cellrec.AppendKey(s.keyBuf[:0], s.rowHeader(vh, w), q)
			s.o.recordDup(s.keyBuf, s.pseq, seq)
		}
		if pending >= 0 {
			if dup {
				fw.dropLast() // the later input wins
			} else {
				s.sharePut(pending)
			}
			pending = -1
		}
		// Only now may the batch holding the previous view go (its last cell is settled).
		if err := fw.sendFull(); err != nil {
			return err
		}
		if newRow && s.share != nil {
			s.shareRow(rh)
		}
		if dup && !last && s.pol != DuplicatesKeep {
			flags |= viewDropFirst
		}
		// Where each family's cells are (a view's cells are in family rank order), and which families
		// get a cell of the row.
		for r := 0; r <= w; r++ {
			ranges[r] = 0
		}
		// shared: family w got a written cell of the view (sharePut).
		shared := false
		if len(rest) == 0 && last {
			pending = w
		} else if flags&viewDropFirst == 0 {
			s.sharePut(w)
			shared = true
		}
		// The rest of the view: only each cell's family matters here, and the last cell's key.
		rq, more, rqDict := q, len(rest) > 0, false
		for len(rest) > 0 {
			// The usual cells (cellrec.Dict.NextUsual's) in a loop that calls nothing; it stops before
			// any other cell, which the lines below take.
			var usual bool
			if rest, rq, w, shared, usual = s.usualCells(cells, rest, ranges, rq, w, shared, last); usual {
				rqDict = true
			}
			if len(rest) == 0 {
				break
			}
			off := len(cells) - len(rest)
			var ok bool
			if rq, _, rest, ok = s.d.NextUsual(rest); !ok {
				rq, _, rest = s.d.Next(rest)
			}
			rqDict = ok
			if w2 := int(rq[0]); w2 != w { // the family's rank (rowRecords.rd.Split)
				if w2 < w {
					return fmt.Errorf("row %s: a row record's cells out of family order", kv.ToStringBinary(vh.Row))
				}
				for r := w + 1; r <= w2; r++ {
					ranges[r] = uint32(off)
				}
				w, shared = w2, false
			}
			if !shared && (len(rest) != 0 || !last) {
				s.sharePut(w)
				shared = true
			}
		}
		if more { // the view's last cell's key (of family w)
			_, q = s.rows.rd.Split(rq)
			if last {
				pending = w
			}
		}
		for r := w + 1; r < len(ranges); r++ {
			ranges[r] = uint32(len(cells))
		}
		if err := fw.add(vh, cells, ranges, s.rowNo, flags, rh); err != nil {
			return err
		}
		s.setPrevRow(vh, w, q, seq, newRow, more && rqDict)
	}
	if err := s.it.Err(); err != nil {
		return nil // reported by writeStream
	}
	if s.share != nil {
		s.share.Finish()
	}
	return nil
}

// usualCells is runRows' walk of a view's cells (cells) from rest on while they are of the usual form
// (cellrec.Dict.NextUsual), in a loop that calls nothing: for each it sets the ranges of the families
// up to the cell's, from family w on (ranges), and notes a family that gets a written cell in the
// shared bloom (sharePut; shared: family w has, last: policy last, whose view's last cell is pending).
// A cell's family comes from its code byte (rowRecords.usualRank, which also refuses a code of another
// form: its rank is past the ranges).
// It returns the rest from the first cell of another form (or one out of family order, or past the
// cells: runRows reports or fails on it), the last cell's qualifier (rq if none; with its rank byte),
// the family and shared of the last cell, and whether it took a cell (the qualifier is then a
// dictionary's).
func (s *stream) usualCells(cells, rest []byte, ranges []uint32, rq []byte, w int, shared, last bool) ([]byte, []byte, int, bool, bool) {
	rank, got := &s.rows.usualRank, s.shareGot
	// Indexes into cells, not slices, and the last cell's code: fewer values across the loop.
	at, rc := len(cells)-len(rest), -1
	for at+1 < len(cells) {
		b0, b1 := cells[at], cells[at+1]
		end := at + 2 + int(b1)
		if b1 >= 0x80 || end > len(cells) {
			break
		}
		// The family's rank (rowRecords.rd.Split); the family w's rank is a usual code's.
		if w2 := int(rank[b0]); w2 != w {
			if w2 < w || w2 >= len(ranges) { // out of family order, or not a usual code
				break
			}
			ranges[w2] = uint32(at)
			for r := w + 1; r < w2; r++ { // families without a cell
				ranges[r] = uint32(at)
			}
			w, shared = w2, false
		}
		at, rc = end, int(b0>>1)
		if !shared && (at != len(cells) || !last) {
			got |= 1 << (w & 31) // w < maxRowFamilies
			shared = true
		}
	}
	s.shareGot = got
	if rc >= 0 {
		rq = s.d.UsualQualifiers()[rc]
	}
	return cells[at:], rq, w, shared, rc >= 0
}

// shareStart sets up the shared bloom's families before the first row: every family is in it and is
// taken to have got the row before.
func (s *stream) shareStart() {
	if s.share != nil {
		s.shareLive = 1<<len(s.fws) - 1
		s.shareGot = s.shareLive
	}
}

// shareRow starts a row in the shared bloom, with hash rh: first every family that did not get the
// previous row is dropped (its writer will see the difference and set its own bits).
func (s *stream) shareRow(rh hfilewriter.RowHash) {
	if miss := s.shareLive &^ s.shareGot; miss != 0 {
		s.shareLive &^= miss
		for ; miss != 0; miss &= miss - 1 {
			s.share.Drop(bits.TrailingZeros32(miss))
		}
	}
	s.shareGot = 0
	s.share.Add(rh)
}

// sharePut notes that family rank got a cell of the current shared row.
func (s *stream) sharePut(rank int) {
	s.shareGot |= 1 << (rank & 31) // rank < maxRowFamilies
}

// maxDupExamples is how many duplicate keys a run reports as examples.
const maxDupExamples = 5

// recordDup counts a duplicate key (seqA and seqB its two inputs' positions), keeping the first ones
// as examples.
func (o *outputWriter) recordDup(key []byte, seqA, seqB uint64) {
	n := o.dups.Add(1)
	if n > maxDupExamples {
		return
	}
	ex := fmt.Sprintf("%s (%s and %s)", kv.Key(key), o.rowName(seqA), o.rowName(seqB))
	o.mu.Lock()
	o.dupExamples = append(o.dupExamples, ex)
	o.mu.Unlock()
}

// rowName names the input row of seq for messages: file and data row.
func (o *outputWriter) rowName(seq uint64) string {
	f, r := pipeline.SeqFile(seq), pipeline.SeqRow(seq)
	name := strconv.Itoa(f)
	if f < len(o.spec.Inputs) {
		name = o.spec.Inputs[f].Path
	}
	return fmt.Sprintf("%s data row %d", name, r+1)
}
