package engine

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// familyWriters writes the families of a row-record stream in parallel: the stream resolves the
// views (order, duplicates) and copies each view once, its row and every family's cells, into a batch
// that every family's writer reads; each family's fileWriter runs on a goroutine of its own, takes
// its family's cells out of each view (the stream notes where they are) and does the costly part
// (encoding, compression, checksums, verification, blooms). So a region's families are written on as
// many cores as separate family streams had, and row records pay off however few regions there are.
//
// One copy per view, not one per cell: with five one-column families a row is one view of five cells,
// and copying each cell with its own row and key fields into its family's batch cost the stream more
// than a family's writer spends parsing its cells out of the view (readRows).
type familyWriters struct {
	fws  []*fileWriter
	fams [][]byte      // family names by rank
	d    *cellrec.Dict // the row records' dictionary
	// quals holds the dictionary's qualifiers by code without their rank byte (cellrec.Dict.UsualQualifiers):
	// the qualifiers of the cells gathered for appendNewRowCells (hfilewriter.NewRowData.Quals). Nil when
	// the records carry tags.
	quals [][]byte
	in    []chan *viewBatch
	cur   *viewBatch
	free  chan *viewBatch
	wg    sync.WaitGroup

	mu     sync.Mutex
	err    error
	failed chan struct{} // closed on the first error
}

// viewBatch is views on their way to every family's writer: each view's row and cells back to back in
// buf, and where each family's cells are.
type viewBatch struct {
	buf   []byte
	views []rowView
	// ranges holds len(fams)+1 offsets per view: view i's cells of family rank are
	// cells[ranges[i*(n+1)+rank]:ranges[i*(n+1)+rank+1]] (a view's cells are in family rank order).
	ranges []uint32
	left   atomic.Int32 // writers that have yet to read the batch
}

// rowView is one view of a row record: its row at off in the batch's buffer, then its cells (cl bytes,
// every family's), with the header's timestamp and type, the row's bloom hash rh when hashed (the
// stream hashes a row once for every family's file) and the stream's number of the row (views of one
// row share it: a family's writer starts a row in its file when the number changes).
type rowView struct {
	off   uint32
	cl    uint32
	rl    uint16
	flags uint8
	typ   kv.Type
	ts    int64
	rh    hfilewriter.RowHash
	row   int64
}

// rowView flags: which of the view's cells the duplicate policy drops, and whether rh is set.
const (
	viewDropFirst = 1 << iota // the first cell duplicates the last one handed on (policies error, first)
	viewDropLast              // the last cell is replaced by an equal one of the next view (policy last)
	viewHashed
	// viewNewRows: the view's cells may go to appendNewRowCells (add sets it for a put with its row
	// hashed and no cell dropped; dropLast clears it), one flag for collectNewRows' loop to test.
	viewNewRows
)

// Batches are handed on once their buffer passes viewBatchBytes; each family has at most
// viewBatchesInFlight of them queued, so a stream holds a few hundred KiB (within memoryReserve).
const (
	viewBatchBytes      = 64 << 10
	viewBatchesInFlight = 2
)

func newFamilyWriters(fws []*fileWriter, rows *rowRecords) *familyWriters {
	n := len(fws)
	fw := &familyWriters{fws: fws, fams: make([][]byte, n), d: rows.rd.Dict(), in: make([]chan *viewBatch, n),
		free: make(chan *viewBatch, viewBatchesInFlight+2), failed: make(chan struct{})}
	for _, q := range fw.d.UsualQualifiers() {
		if len(q) == 0 { // not a row record's qualifier (which starts with its family's rank): not gathered
			fw.quals = nil
			break
		}
		fw.quals = append(fw.quals, q[1:])
	}
	for rank := range fws {
		fw.fams[rank] = rows.rd.Family(rank)
		fw.in[rank] = make(chan *viewBatch, viewBatchesInFlight)
		fw.wg.Add(1)
		go fw.write(rank)
	}
	return fw
}

// write is the goroutine of one family: it appends the family's cells of every batch to its files.
// After an error it only drains its batches. The last writer to finish a batch frees it.
func (f *familyWriters) write(rank int) {
	defer f.wg.Done()
	fw := f.fws[rank]
	var last int64 // the number of the last row written (rows are numbered from 1)
	var bufs cellBuffers
	for b := range f.in[rank] {
		if f.error() == nil {
			if err := f.writeBatch(fw, rank, b, &last, &bufs); err != nil {
				f.fail(err)
			}
			bufs.clear() // they point into the batch, about to be reused
		}
		if b.left.Add(-1) == 0 {
			b.buf, b.views, b.ranges = b.buf[:0], b.views[:0], b.ranges[:0]
			select {
			case f.free <- b:
			default:
			}
		}
	}
}

// cellBuffers holds a family writer's cells that go to the file together: the cells of a view after
// its first (same), and rows of one cell (rows).
type cellBuffers struct {
	same []hfilewriter.SameRowCell
	rows []hfilewriter.NewRowCell
}

func (c *cellBuffers) clear() {
	clear(c.same[:cap(c.same)])
	clear(c.rows[:cap(c.rows)])
}

// writeBatch writes family rank's cells of b's views; *last is the number of the row last written, bufs
// the buffers for the cells that go to the writer together.
//
// A view whose only cell of the family is an untagged put that starts a row in the family's files, with
// its row hashed and no cell dropped (every view of a mapping whose families have one column each),
// joins the rows gathered for appendNewRowCells; any other view first writes those, then its own cells.
func (f *familyWriters) writeBatch(fw *fileWriter, rank int, b *viewBatch, last *int64, bufs *cellBuffers) error {
	var err error
	*last, bufs.same, bufs.rows, err = f.writeViews(fw, rank, b, *last, bufs.same[:0], bufs.rows[:0])
	bufs.same, bufs.rows = bufs.same[:0], bufs.rows[:0]
	return err
}

// writeViews is writeBatch with the number of the row last written and the buffers as values, which it
// returns (the buffers grown, the number of the row last written now): kept in registers, not behind
// pointers.
func (f *familyWriters) writeViews(fw *fileWriter, rank int, b *viewBatch, lastRow int64, same []hfilewriter.SameRowCell,
	rows []hfilewriter.NewRowCell) (int64, []hfilewriter.SameRowCell, []hfilewriter.NewRowCell, error) {
	h := cellrec.Header{Family: f.fams[rank]}
	nd := hfilewriter.NewRowData{Buf: b.buf, Quals: f.quals}
	n := len(f.fams) + 1
	for i, j := 0, rank; i < len(b.views); i, j = i+1, j+n {
		lo, hi := b.ranges[j], b.ranges[j+1]
		if lo == hi {
			continue
		}
		v := &b.views[i]
		rowEnd := v.off + uint32(v.rl)
		if v.row != lastRow && v.flags&viewNewRows != 0 {
			// This view and the ones after it, as long as they are such views, in a loop of its own.
			rows = slices.Grow(rows, len(b.views)-i)
			if ni, nj, nl, nrows := f.collectNewRows(b, i, j, n, lastRow, rows); ni > i {
				i, j, lastRow, rows = ni-1, nj-n, nl, nrows // the view collectNewRows stopped at is the loop's next
				continue
			}
		}
		if len(rows) > 0 {
			err := fw.appendNewRowCells(h.Family, &nd, rows)
			rows = rows[:0]
			if err != nil {
				return lastRow, same, rows, err
			}
		}
		h.Row, h.TS, h.Type = b.buf[v.off:rowEnd], v.ts, v.typ
		cells := b.buf[rowEnd+lo : rowEnd+hi]
		dropFirst := lo == 0 && v.flags&viewDropFirst != 0
		dropLast := hi == v.cl && v.flags&viewDropLast != 0
		written := false
		for len(cells) > 0 {
			q, val, tags, rest := f.d.NextTags(cells)
			cells = rest
			if dropFirst || dropLast && len(rest) == 0 {
				dropFirst = false
				continue
			}
			q = q[1:] // the rank byte
			var err error
			switch {
			case written && len(tags) == 0:
				// Once a cell of the view is in the file, the next ones share its row, timestamp and type:
				// those without tags go to the writer together.
				same = append(same, hfilewriter.SameRowCell{Qualifier: q, Value: val})
			case written:
				if len(same) > 0 {
					err = fw.appendSameRowCells(same)
					same = same[:0]
				}
				if err == nil {
					err = fw.appendSameRow(&h, q, val, tags)
				}
			default:
				if v.row != lastRow {
					if err := fw.startNewRow(); err != nil {
						return lastRow, same, rows, err
					}
					lastRow = v.row
				}
				if v.flags&viewHashed != 0 {
					err = fw.appendRowHash(&h, q, val, tags, v.rh)
				} else {
					err = fw.append(&h, q, val, tags)
				}
				written = true
			}
			if err != nil {
				return lastRow, same, rows, err
			}
		}
		if len(same) > 0 {
			if err := fw.appendSameRowCells(same); err != nil {
				return lastRow, same, rows, err
			}
			same = same[:0]
		}
	}
	var err error
	if len(rows) > 0 {
		err = fw.appendNewRowCells(h.Family, &nd, rows)
	}
	return lastRow, same, rows, err
}

// collectNewRows is writeViews' gathering of rows for appendNewRowCells, for the views from i on (j:
// the index of view i's ranges of the family, n the ranges per view), in a loop of its own that calls
// nothing and so keeps its variables in registers: it appends each view's cell of the family to rows
// (which must have room for every view from i on) while the view is one whose only cell of the family
// is a put of the usual form (cellrec.Dict.NextUsual) that starts a row, with its row hashed and no cell
// dropped, and skips views without a cell of the family. A cell is handed on as offsets into the
// batch's buffer and its qualifier's code (hfilewriter.NewRowCell, four words without pointers). It
// returns the view it stopped at (len(b.views) at the end), its j, the number of the row last gathered
// and rows.
//
// The loop reads the views, their ranges and the cells' first bytes, and writes rows, through unsafe
// pointers at offsets from the slices' starts (with checked slices Go's register allocator reloaded
// half of its values in every step). Every access is in bounds, checked once on entry: view i+x for
// x < m = len(b.views)-i, its ranges j+x*n and j+x*n+1 < len(b.ranges), rows' element len(rows)+x <
// cap(rows); a cell's two bytes at at and at+1 only when at+2 <= len(b.buf).
func (f *familyWriters) collectNewRows(b *viewBatch, i, j, n int, lastRow int64, rows []hfilewriter.NewRowCell) (int, int, int64, []hfilewriter.NewRowCell) {
	views, ranges, buf := b.views, b.ranges, b.buf
	k, out := len(rows), rows[:cap(rows)]
	m := len(views) - i
	if i < 0 || j < 0 || n < 2 || m <= 0 || (len(ranges)-j-2)/n < m-1 || len(ranges) < j+2 || len(out)-k < m {
		return i, j, lastRow, out[:k] // not a batch's views (or no room): none gathered
	}
	nq := uint(len(f.quals))
	vp, rp := unsafe.Pointer(&views[i]), unsafe.Pointer(&ranges[j])
	op, bp := unsafe.Pointer(unsafe.SliceData(out)), unsafe.Pointer(unsafe.SliceData(buf))
	nb, stride := len(buf), uintptr(n)*4
	x := 0 // views taken (gathered or skipped)
	for ; x < m; x++ {
		r := unsafe.Add(rp, uintptr(x)*stride)
		lo, hi := *(*uint32)(r), *(*uint32)(unsafe.Add(r, 4))
		if lo == hi {
			continue
		}
		v := (*rowView)(unsafe.Add(vp, uintptr(x)*unsafe.Sizeof(rowView{})))
		if v.row == lastRow || v.flags&viewNewRows == 0 {
			break
		}
		// The family's only cell, of the usual form (cellrec.Dict.NextUsual), decoded here: its code
		// byte, its value's length (the cells' length less 2), then the value.
		at := int(v.off) + int(v.rl) + int(lo)
		if at+2 > nb {
			break
		}
		c0, c1 := *(*byte)(unsafe.Add(bp, at)), *(*byte)(unsafe.Add(bp, at+1))
		if c0&0x81 != 1 || c1 >= 0x80 || uint32(c1)+2 != hi-lo || uint(c0>>1) >= nq {
			break
		}
		c := (*hfilewriter.NewRowCell)(unsafe.Add(op, uintptr(k)*unsafe.Sizeof(hfilewriter.NewRowCell{})))
		k++
		c.TS, c.Hash, c.Row, c.Value, c.ValueLen, c.RowLen, c.Qual = v.ts, v.rh, v.off, uint32(at)+2, uint32(c1), v.rl, uint16(c0>>1)
		lastRow = v.row
	}
	return i + x, j + x*n, lastRow, out[:k]
}

func (f *familyWriters) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
		close(f.failed)
	}
}

func (f *familyWriters) error() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// add queues a view: header vh (its row and type; the family is not read), cells (every family's),
// ranges (len(fams)+1 offsets into cells: where each family's cells start, then len(cells)), the
// stream's number of its row, its flags and, with viewHashed, the row's hash rh. The batch is handed
// on only by a later sendFull or finish: until then the stream may still set the view's viewDropLast
// (dropLast). Call sendFull before each add.
func (f *familyWriters) add(vh *cellrec.Header, cells []byte, ranges []uint32, row int64, flags uint8, rh hfilewriter.RowHash) error {
	if len(vh.Row) > kv.MaxRowLength || uint64(len(vh.Row))+uint64(len(cells)) > math.MaxUint32-viewBatchBytes {
		// Records are checked against limits far below these when they are made; a view past them is
		// not narrowed. (The stream sends a full batch before it adds a view: the view starts within
		// the first viewBatchBytes of the buffer.)
		return fmt.Errorf("row %s: row or cells too long", kv.ToStringBinary(vh.Row))
	}
	b := f.cur
	if b == nil {
		select {
		case b = <-f.free:
		default:
			b = &viewBatch{buf: make([]byte, 0, viewBatchBytes+viewBatchBytes/4)}
		}
		f.cur = b
	}
	if flags&(viewDropFirst|viewDropLast|viewHashed|viewNewRows) == viewHashed && vh.Type == kv.TypePut {
		flags |= viewNewRows
	}
	// The view's fields stored in place: appending a rowView literal builds it on the stack with narrow
	// stores and copies it in 16-byte moves, which wait for those stores to be written.
	n := len(b.views)
	if n == cap(b.views) {
		b.views = slices.Grow(b.views, 1)
	}
	b.views = b.views[:n+1]
	v := &b.views[n]
	v.off, v.cl, v.rl, v.flags, v.typ = uint32(len(b.buf)), uint32(len(cells)), uint16(len(vh.Row)), flags, vh.Type
	v.ts, v.rh, v.row = vh.TS, rh, row
	b.ranges = append(b.ranges, ranges...)
	b.buf = append(append(b.buf, vh.Row...), cells...)
	return nil
}

// dropLast marks the last cell of the view added last as replaced by a later duplicate.
func (f *familyWriters) dropLast() {
	if b := f.cur; b != nil && len(b.views) > 0 {
		v := &b.views[len(b.views)-1]
		v.flags = v.flags&^viewNewRows | viewDropLast
	}
}

// sendFull hands the current batch on when it is full.
func (f *familyWriters) sendFull() error {
	if f.cur == nil || len(f.cur.buf) < viewBatchBytes {
		return nil
	}
	return f.send()
}

// send hands the current batch to every family's goroutine.
func (f *familyWriters) send() error {
	b := f.cur
	if b == nil {
		return nil
	}
	f.cur = nil
	b.left.Store(int32(len(f.in)))
	for _, in := range f.in {
		select {
		case in <- b:
		case <-f.failed:
			return f.error()
		}
	}
	return nil
}

// finish hands on the last batch, waits for the writers and returns the first error (nil: every view
// added is in its families' fileWriters). With flush false (the stream failed) it drops the batch not
// yet handed on. It must be called exactly once.
func (f *familyWriters) finish(flush bool) error {
	var err error
	if flush {
		err = f.send()
	}
	for _, c := range f.in {
		close(c)
	}
	f.wg.Wait()
	if ferr := f.error(); ferr != nil {
		return ferr
	}
	return err
}
