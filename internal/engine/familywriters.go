package engine

import (
	"fmt"
	"math"
	"sync"

	"github.com/hfload/hfload/hfilewriter"
	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// familyWriters writes the families of a row-record stream in parallel: the stream resolves the
// cells (order, duplicates) and copies each into a batch of its family; each family's fileWriter
// runs on a goroutine of its own and does the costly part (encoding, compression, checksums,
// verification, blooms). So a region's families are written on as many cores as separate family
// streams had, and row records pay off however few regions there are.
type familyWriters struct {
	fws  []*fileWriter
	fams [][]byte // family names by rank
	in   []chan *cellBatch
	cur  []*cellBatch
	free chan *cellBatch
	wg   sync.WaitGroup

	mu     sync.Mutex
	err    error
	failed chan struct{} // closed on the first error
}

// cellBatch is a family's cells on their way to its fileWriter: the cells' bytes back to back in buf.
type cellBatch struct {
	buf []byte
	ops []cellOp
}

// cellOp is one cell: row, qualifier, value and tags at off in the batch's buffer. sameRow says that
// the cell follows a cell of the same row, timestamp and type in its file (fileWriter.appendSameRow);
// otherwise the writer appends the whole key, with the row's bloom hash rh when hashed (the stream
// hashes a row once for every family's file), after starting the row in its file when newRow
// (fileWriter.startNewRow: the stream knows which rows a family's file has had, so the file does not
// compare or keep rows; with five one-column families every cell starts a row).
//
// The lengths are as narrow as their limits allow (a row is at most 32,767 bytes, tags 65,535, a
// qualifier or value under 2 GiB, and a batch is handed on once it passes cellBatchBytes), which
// halves the ops the stream writes for every cell: 40 bytes instead of 80.
type cellOp struct {
	off, ql, vl uint32
	rl, tl      uint16
	ts          int64
	rh          hfilewriter.RowHash
	typ         kv.Type
	sameRow     bool
	newRow      bool
	hashed      bool
}

// Batches are handed on at about cellBatchBytes; each family has at most cellBatchesInFlight of them
// queued, so a stream holds a few hundred KiB per family (within memoryReserve).
const (
	cellBatchBytes      = 32 << 10
	cellBatchesInFlight = 2
)

func newFamilyWriters(fws []*fileWriter, rows *rowRecords) *familyWriters {
	n := len(fws)
	fw := &familyWriters{fws: fws, fams: make([][]byte, n), in: make([]chan *cellBatch, n), cur: make([]*cellBatch, n),
		free: make(chan *cellBatch, n*(cellBatchesInFlight+2)), failed: make(chan struct{})}
	for rank := range fws {
		fw.fams[rank] = rows.rd.Family(rank)
		fw.in[rank] = make(chan *cellBatch, cellBatchesInFlight)
		fw.wg.Add(1)
		go fw.write(rank)
	}
	return fw
}

// write is the goroutine of one family: it appends the cells of every batch to the family's files.
// After an error it only drains its batches.
func (f *familyWriters) write(rank int) {
	defer f.wg.Done()
	fw := f.fws[rank]
	for b := range f.in[rank] {
		if f.error() == nil {
			if err := f.writeBatch(fw, rank, b); err != nil {
				f.fail(err)
			}
		}
		b.buf, b.ops = b.buf[:0], b.ops[:0]
		select {
		case f.free <- b:
		default:
		}
	}
}

func (f *familyWriters) writeBatch(fw *fileWriter, rank int, b *cellBatch) error {
	h := cellrec.Header{Family: f.fams[rank]}
	for i := range b.ops {
		op := &b.ops[i]
		p := int(op.off)
		h.Row = b.buf[p : p+int(op.rl)]
		p += int(op.rl)
		q := b.buf[p : p+int(op.ql)]
		p += int(op.ql)
		v := b.buf[p : p+int(op.vl)]
		p += int(op.vl)
		var tags []byte
		if op.tl > 0 {
			tags = b.buf[p : p+int(op.tl)]
		}
		h.TS, h.Type = op.ts, op.typ
		if op.sameRow {
			if err := fw.appendSameRow(&h, q, v, tags); err != nil {
				return err
			}
			continue
		}
		if op.newRow {
			if err := fw.startNewRow(); err != nil {
				return err
			}
		}
		var err error
		if op.hashed {
			err = fw.appendRowHash(&h, q, v, tags, op.rh)
		} else {
			err = fw.append(&h, q, v, tags)
		}
		if err != nil {
			return err
		}
	}
	return nil
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

// put queues one cell of family rank (h's family is not read: the rank says it). newRow: the family's
// file has had no cell of h.Row yet (then sameRow is false). rh is h.Row's hfilewriter.HashRow when
// hashed.
func (f *familyWriters) put(rank int, h *cellrec.Header, q, v, tags []byte, sameRow, newRow bool, rh hfilewriter.RowHash, hashed bool) error {
	b := f.cur[rank]
	if b == nil {
		select {
		case b = <-f.free:
		default:
			b = &cellBatch{buf: make([]byte, 0, cellBatchBytes+cellBatchBytes/4)}
		}
		f.cur[rank] = b
	}
	if len(h.Row) > kv.MaxRowLength || len(tags) > kv.MaxTagsLength || uint64(len(q))+uint64(len(v)) > math.MaxInt32 {
		// Records are checked against these limits when they are made; a cell past them is not narrowed.
		return fmt.Errorf("cell %s: row, qualifier, value or tags too long for an HBase cell",
			kv.FormatKey(h.Row, f.fams[rank], q, h.TS, h.Type))
	}
	b.ops = append(b.ops, cellOp{off: uint32(len(b.buf)), rl: uint16(len(h.Row)), ql: uint32(len(q)), vl: uint32(len(v)),
		tl: uint16(len(tags)), ts: h.TS,
		rh: rh, typ: h.Type, sameRow: sameRow, newRow: newRow, hashed: hashed})
	b.buf = append(append(append(append(b.buf, h.Row...), q...), v...), tags...)
	if len(b.buf) < cellBatchBytes {
		return nil
	}
	return f.send(rank)
}

// send hands family rank's current batch to its goroutine.
func (f *familyWriters) send(rank int) error {
	b := f.cur[rank]
	if b == nil {
		return nil
	}
	f.cur[rank] = nil
	select {
	case f.in[rank] <- b:
		return nil
	case <-f.failed:
		return f.error()
	}
}

// finish hands on every batch, waits for the writers and returns the first error (nil: every cell
// put is in its family's fileWriter). With flush false (the stream failed) it drops the batches not
// yet handed on. It must be called exactly once.
func (f *familyWriters) finish(flush bool) error {
	var err error
	if flush {
		for rank := range f.cur {
			if err = f.send(rank); err != nil {
				break
			}
		}
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
