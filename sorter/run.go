package sorter

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"

	"github.com/klauspost/compress/s2"

	"github.com/hfload/hfload/internal/cellrec"
)

const (
	codecRaw    = 0
	codecSnappy = 1 // snappy block format (written by s2.EncodeSnappy, read by s2.Decode)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// runInfo describes one sorted run file.
type runInfo struct {
	path      string
	id        uint64 // creation order, for deterministic planning
	records   int64
	size      int64 // bytes on disk
	maxRaw    int   // largest raw chunk
	maxStored int   // largest compressed chunk (0 if none)
	// chunks locates every chunk by the row of its first record, so that a range merge can start
	// reading a run near a row instead of at its beginning.
	chunks []chunkRef
}

// chunkRef is the file offset of a chunk and the row of its first record.
type chunkRef struct {
	off int64
	row []byte
}

// seek returns the offset of the chunk to start reading at to see every record whose row is >= lo:
// the chunk before the first one starting at a row >= lo (that row may begin in the previous chunk).
func (r *runInfo) seek(lo []byte) int64 {
	if lo == nil || len(r.chunks) == 0 {
		return 0
	}
	j := sort.Search(len(r.chunks), func(i int) bool { return bytes.Compare(r.chunks[i].row, lo) >= 0 })
	if j == 0 {
		return 0
	}
	return r.chunks[j-1].off
}

// uvarint decodes a uvarint with a fast path for one byte. n <= 0 means malformed (binary.Uvarint).
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// uvarintLen is the length of the uvarint encoding of x.
func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// headerLen is the encoded length of a record header.
func headerLen(h *cellrec.Header) int {
	return uvarintLen(uint64(len(h.Row))) + len(h.Row) + uvarintLen(uint64(len(h.Family))) + len(h.Family) + 9
}

// bufBytes is the read-buffer memory a reader of this run needs.
func (r *runInfo) bufBytes() int64 { return int64(r.maxRaw + r.maxStored) }

func (r *runInfo) remove() error {
	if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing run %s: %w", r.path, err)
	}
	return nil
}

// runWriter writes one run using the buffers of a slot.
type runWriter struct {
	f     *os.File
	info  *runInfo
	sl    *slot
	chunk int
	raw   []byte
	first []byte // row of the current chunk's first record
	pre   []byte // entry prefix of an oversized record
}

func (p *Pool) createRun(sl *slot) (*runWriter, error) {
	if sl.raw == nil {
		sl.raw = make([]byte, 0, p.chunkSize)
		sl.enc = make([]byte, chunkHdrSz+s2.MaxEncodedLen(p.chunkSize))
	}
	id := p.fileSeq.Add(1)
	path := filepath.Join(p.dir, fmt.Sprintf("run-%08d", id))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating run file: %w", err)
	}
	return &runWriter{f: f, info: &runInfo{path: path, id: id}, sl: sl, chunk: p.chunkSize, raw: sl.raw[:0]}, nil
}

// add appends a view as one record (its header and its cells) with its seq: entry = uvarint(seq) |
// uvarint(record length) | record.
func (w *runWriter) add(v *view) error {
	recLen := headerLen(&v.h) + len(v.cells)
	need := 2*binary.MaxVarintLen64 + recLen
	if len(w.raw) > 0 && len(w.raw)+need > w.chunk {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.info.records++
	if len(w.raw) == 0 {
		w.first = append(w.first[:0], v.h.Row...)
	}
	if need > w.chunk { // oversized record: a raw chunk of its own, written from the view's cells
		w.info.chunks = append(w.info.chunks, chunkRef{off: w.info.size, row: bytes.Clone(v.h.Row)})
		w.pre = binary.AppendUvarint(w.pre[:0], v.seq)
		w.pre = binary.AppendUvarint(w.pre, uint64(recLen))
		w.pre = cellrec.AppendHeader(w.pre, v.h.Row, v.h.Family, v.h.TS, v.h.Type)
		rawLen := len(w.pre) + len(v.cells)
		crc := crc32.Update(crc32.Checksum(w.pre, castagnoli), castagnoli, v.cells)
		var hdr [chunkHdrSz]byte
		putHeader(hdr[:], rawLen, rawLen, codecRaw, crc)
		w.info.maxRaw = max(w.info.maxRaw, rawLen)
		return w.write(hdr[:], w.pre, v.cells)
	}
	w.raw = appendEntry(w.raw, v, recLen)
	return nil
}

func appendEntry(dst []byte, v *view, recLen int) []byte {
	dst = binary.AppendUvarint(dst, v.seq)
	dst = binary.AppendUvarint(dst, uint64(recLen))
	dst = cellrec.AppendHeader(dst, v.h.Row, v.h.Family, v.h.TS, v.h.Type)
	return append(dst, v.cells...)
}

func putHeader(h []byte, rawLen, storedLen int, codec byte, crc uint32) {
	binary.BigEndian.PutUint32(h[0:], uint32(rawLen))
	binary.BigEndian.PutUint32(h[4:], uint32(storedLen))
	h[8] = codec
	binary.BigEndian.PutUint32(h[9:], crc)
}

func (w *runWriter) write(parts ...[]byte) error {
	for _, b := range parts {
		n, err := w.f.Write(b)
		w.info.size += int64(n)
		if err != nil {
			return fmt.Errorf("writing run %s: %w", w.info.path, err)
		}
	}
	return nil
}

func (w *runWriter) flush() error {
	if len(w.raw) == 0 {
		return nil
	}
	w.info.chunks = append(w.info.chunks, chunkRef{off: w.info.size, row: bytes.Clone(w.first)})
	crc := crc32.Checksum(w.raw, castagnoli)
	enc := s2.EncodeSnappy(w.sl.enc[chunkHdrSz:], w.raw)
	var err error
	if len(enc) < len(w.raw) {
		putHeader(w.sl.enc[:chunkHdrSz], len(w.raw), len(enc), codecSnappy, crc)
		err = w.write(w.sl.enc[:chunkHdrSz+len(enc)])
		w.info.maxStored = max(w.info.maxStored, len(enc))
	} else {
		var hdr [chunkHdrSz]byte
		putHeader(hdr[:], len(w.raw), len(w.raw), codecRaw, crc)
		err = w.write(hdr[:], w.raw)
	}
	w.info.maxRaw = max(w.info.maxRaw, len(w.raw))
	w.raw = w.raw[:0]
	return err
}

// finish flushes and closes the file and returns the run.
func (w *runWriter) finish() (*runInfo, error) {
	if err := w.flush(); err != nil {
		w.abort()
		return nil, err
	}
	if err := w.f.Close(); err != nil {
		w.f = nil
		w.abort()
		return nil, fmt.Errorf("closing run %s: %w", w.info.path, err)
	}
	w.f = nil
	return w.info, nil
}

// abort closes and removes a partly written run.
func (w *runWriter) abort() {
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	os.Remove(w.info.path)
}

// runReader streams the records of a run; it removes the file when closed.
type runReader struct {
	ctx    context.Context
	d      *cellrec.Dict
	info   *runInfo
	f      *os.File
	off    int64
	raw    []byte
	stored []byte
	buf    []byte // current chunk's raw bytes
	pos    int
	v      view
	keep   bool // close leaves the file (a range reader; the sorter removes its runs)
}

func openRun(ctx context.Context, d *cellrec.Dict, info *runInfo) (*runReader, error) {
	return openRunAt(ctx, d, info, 0)
}

// openRunAt opens a run for reading from the chunk at offset off.
func openRunAt(ctx context.Context, d *cellrec.Dict, info *runInfo, off int64) (*runReader, error) {
	f, err := os.Open(info.path)
	if err != nil {
		return nil, fmt.Errorf("opening run: %w", err)
	}
	return &runReader{ctx: ctx, d: d, info: info, f: f, off: off}, nil
}

func (r *runReader) corrupt(format string, args ...any) error {
	return fmt.Errorf("run %s at offset %d: %s", r.info.path, r.off, fmt.Sprintf(format, args...))
}

func (r *runReader) loadChunk() (bool, error) {
	if r.off >= r.info.size {
		return false, nil
	}
	if r.ctx != nil {
		if err := r.ctx.Err(); err != nil {
			return false, err
		}
	}
	var hdr [chunkHdrSz]byte
	if _, err := r.f.ReadAt(hdr[:], r.off); err != nil {
		return false, r.corrupt("reading chunk header: %v", err)
	}
	rawLen := int(binary.BigEndian.Uint32(hdr[0:]))
	storedLen := int(binary.BigEndian.Uint32(hdr[4:]))
	codec := hdr[8]
	crc := binary.BigEndian.Uint32(hdr[9:])
	if rawLen > r.info.maxRaw || rawLen == 0 {
		return false, r.corrupt("bad raw chunk length %d", rawLen)
	}
	if r.raw == nil {
		r.raw = make([]byte, r.info.maxRaw)
	}
	var raw []byte
	switch codec {
	case codecRaw:
		if storedLen != rawLen {
			return false, r.corrupt("raw chunk with stored length %d != %d", storedLen, rawLen)
		}
		raw = r.raw[:rawLen]
		if _, err := r.f.ReadAt(raw, r.off+chunkHdrSz); err != nil {
			return false, r.corrupt("reading chunk: %v", err)
		}
	case codecSnappy:
		if storedLen > r.info.maxStored || storedLen == 0 {
			return false, r.corrupt("bad stored chunk length %d", storedLen)
		}
		if r.stored == nil {
			r.stored = make([]byte, r.info.maxStored)
		}
		st := r.stored[:storedLen]
		if _, err := r.f.ReadAt(st, r.off+chunkHdrSz); err != nil {
			return false, r.corrupt("reading chunk: %v", err)
		}
		if n, err := s2.DecodedLen(st); err != nil || n != rawLen {
			return false, r.corrupt("compressed chunk decodes to %d bytes, header says %d (%v)", n, rawLen, err)
		}
		var err error
		raw, err = s2.Decode(r.raw[:rawLen], st)
		if err != nil {
			return false, r.corrupt("decompressing chunk: %v", err)
		}
	default:
		return false, r.corrupt("unknown chunk codec %d", codec)
	}
	if crc32.Checksum(raw, castagnoli) != crc {
		return false, r.corrupt("chunk checksum mismatch")
	}
	r.off += chunkHdrSz + int64(storedLen)
	r.buf, r.pos = raw, 0
	return true, nil
}

func (r *runReader) next() (bool, error) {
	if r.pos >= len(r.buf) {
		ok, err := r.loadChunk()
		if !ok || err != nil {
			return false, err
		}
	}
	b := r.buf[r.pos:]
	seq, n1 := uvarint(b)
	if n1 <= 0 {
		return false, r.corrupt("truncated entry")
	}
	l, n2 := uvarint(b[n1:])
	if n2 <= 0 || l > uint64(len(b)-n1-n2) {
		return false, r.corrupt("entry overruns its chunk")
	}
	// The chunk's CRC matched, so these are the bytes of a record that was validated when it was added:
	// its header is parsed with bounds checks, its cells are not walked again.
	rec := b[n1+n2 : n1+n2+int(l)]
	h, cells, err := cellrec.ParseHeader(rec)
	if err == nil && len(cells) == 0 {
		err = errors.New("record without cells")
	}
	if err != nil {
		return false, r.corrupt("malformed record: %v", err)
	}
	r.v.set(r.d, &h, cells, seq)
	r.pos += n1 + n2 + int(l)
	return true, nil
}

func (r *runReader) cur() *view { return &r.v }

// close closes and removes the run file.
func (r *runReader) close() error {
	var err error
	if r.f != nil {
		err = r.f.Close()
		r.f = nil
	}
	r.raw, r.stored, r.buf, r.v = nil, nil, nil, view{}
	if r.keep {
		return err
	}
	if e := r.info.remove(); e != nil && err == nil {
		err = e
	}
	return err
}
