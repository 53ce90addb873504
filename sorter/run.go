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

	"github.com/golang/snappy"

	"github.com/hfload/hfload/hfilewriter"
)

const (
	codecRaw    = 0
	codecSnappy = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// runInfo describes one sorted run file.
type runInfo struct {
	path      string
	id        uint64 // creation order, for deterministic planning
	records   int64
	size      int64 // bytes on disk
	maxRaw    int   // largest raw chunk
	maxStored int   // largest snappy-compressed chunk (0 if none)
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

// kvRow returns the row of a KeyValue record.
func kvRow(kv []byte) []byte {
	rl := int(binary.BigEndian.Uint16(kv[8:]))
	return kv[10 : 10+rl]
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
}

func (p *Pool) createRun(sl *slot) (*runWriter, error) {
	if sl.raw == nil {
		sl.raw = make([]byte, 0, p.chunkSize)
		sl.enc = make([]byte, chunkHdrSz+snappy.MaxEncodedLen(p.chunkSize))
	}
	id := p.fileSeq.Add(1)
	path := filepath.Join(p.dir, fmt.Sprintf("run-%08d.snappy", id))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating run file: %w", err)
	}
	return &runWriter{f: f, info: &runInfo{path: path, id: id}, sl: sl, chunk: p.chunkSize, raw: sl.raw[:0]}, nil
}

// add appends one record with its seq.
func (w *runWriter) add(kv []byte, seq uint64) error {
	need := binary.MaxVarintLen64 + len(kv)
	if len(w.raw) > 0 && len(w.raw)+need > w.chunk {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.info.records++
	if len(w.raw) == 0 {
		w.first = append(w.first[:0], kvRow(kv)...)
	}
	if need > w.chunk { // oversized record: a raw chunk of its own, written straight from kv
		w.info.chunks = append(w.info.chunks, chunkRef{off: w.info.size, row: bytes.Clone(kvRow(kv))})
		var vb [binary.MaxVarintLen64]byte
		vn := binary.PutUvarint(vb[:], seq)
		rawLen := vn + len(kv)
		crc := crc32.Update(crc32.Update(0, castagnoli, vb[:vn]), castagnoli, kv)
		var hdr [chunkHdrSz]byte
		putHeader(hdr[:], rawLen, rawLen, codecRaw, crc)
		if err := w.write(hdr[:], vb[:vn], kv); err != nil {
			return err
		}
		w.info.maxRaw = max(w.info.maxRaw, rawLen)
		return nil
	}
	w.raw = binary.AppendUvarint(w.raw, seq)
	w.raw = append(w.raw, kv...)
	return nil
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
	enc := snappy.Encode(w.sl.enc[chunkHdrSz:], w.raw)
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
	info   *runInfo
	f      *os.File
	off    int64
	raw    []byte
	stored []byte
	buf    []byte // current chunk's raw bytes
	pos    int
	cur    []byte
	sq     uint64
	keep   bool // close leaves the file (a range reader; the sorter removes its runs)
}

func openRun(ctx context.Context, info *runInfo) (*runReader, error) {
	return openRunAt(ctx, info, 0)
}

// openRunAt opens a run for reading from the chunk at offset off.
func openRunAt(ctx context.Context, info *runInfo, off int64) (*runReader, error) {
	f, err := os.Open(info.path)
	if err != nil {
		return nil, fmt.Errorf("opening run: %w", err)
	}
	return &runReader{ctx: ctx, info: info, f: f, off: off}, nil
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
		if n, err := snappy.DecodedLen(st); err != nil || n != rawLen {
			return false, r.corrupt("snappy chunk decodes to %d bytes, header says %d (%v)", n, rawLen, err)
		}
		var err error
		raw, err = snappy.Decode(r.raw[:rawLen], st)
		if err != nil {
			return false, r.corrupt("snappy: %v", err)
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
			r.cur = nil
			return false, err
		}
	}
	b := r.buf[r.pos:]
	seq, vn := binary.Uvarint(b)
	if vn <= 0 || len(b) < vn+8 {
		return false, r.corrupt("truncated entry")
	}
	klen := uint64(binary.BigEndian.Uint32(b[vn:]))
	vlen := uint64(binary.BigEndian.Uint32(b[vn+4:]))
	n := 8 + klen + vlen
	if klen < 12 || n > uint64(len(b)-vn) {
		return false, r.corrupt("entry of %d bytes overruns its chunk", n)
	}
	if !hfilewriter.Key(b[vn+8 : vn+8+int(klen)]).Valid() {
		return false, r.corrupt("malformed key")
	}
	r.cur = b[vn : vn+int(n) : vn+int(n)]
	r.sq = seq
	r.pos += vn + int(n)
	return true, nil
}

func (r *runReader) kv() []byte  { return r.cur }
func (r *runReader) seq() uint64 { return r.sq }

// close closes and removes the run file.
func (r *runReader) close() error {
	var err error
	if r.f != nil {
		err = r.f.Close()
		r.f = nil
	}
	r.raw, r.stored, r.buf = nil, nil, nil
	if r.keep {
		return err
	}
	if e := r.info.remove(); e != nil && err == nil {
		err = e
	}
	return err
}
