package sorter

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
	"github.com/klauspost/compress/s2"
)

const (
	codecRaw    = 0
	codecSnappy = 1 // snappy block format (written by s2.EncodeSnappy, read by s2.Decode)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// runInfo describes one sorted run file.
type runInfo struct {
	path    string
	id      uint64 // creation order, for deterministic planning
	records int64
	size    int64 // bytes on disk
	maxDisk int   // largest chunk on disk (header included): the read buffer of a reader
	maxRaw  int   // largest raw chunk of a compressed chunk (0 if none is compressed): the decompression buffer
	// chunks locates every chunk by the row of its first record, so that a range merge can start
	// reading a run near a row instead of at its beginning.
	chunks []chunkRef
}

// chunkRef is where a chunk is on disk (offset and length, header included) and the row of its first
// record.
type chunkRef struct {
	off  int64
	disk int
	row  []byte
}

// seek returns the index of the chunk to start reading at to see every record whose row is >= lo: the
// chunk before the first one starting at a row >= lo (that row may begin in the previous chunk).
func (r *runInfo) seek(lo []byte) int {
	if lo == nil || len(r.chunks) == 0 {
		return 0
	}
	j := sort.Search(len(r.chunks), func(i int) bool { return bytes.Compare(r.chunks[i].row, lo) >= 0 })
	return max(j-1, 0)
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

// bufBytes is the read-buffer memory a reader of this run needs.
func (r *runInfo) bufBytes() int64 { return int64(r.maxDisk + r.maxRaw) }

func (r *runInfo) remove() error {
	if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing run %s: %w", r.path, err)
	}
	return nil
}

// slotBuffers sizes the buffers of a spill slot: chunk assembly (header + chunk) and, with compression,
// the compressed chunk.
func (p *Pool) slotBuffers() (raw, enc int) {
	raw = chunkHdrSz + p.chunkSize
	if p.compress {
		enc = chunkHdrSz + s2.MaxEncodedLen(p.chunkSize)
	}
	return raw, enc
}

// runWriter writes one run using the buffers of a slot, each chunk in one write.
type runWriter struct {
	f     *os.File
	info  *runInfo
	sl    *slot
	p     *Pool
	chunk int
	raw   []byte // chunkHdrSz bytes of room, then the chunk's entries
	first []byte // row of the current chunk's first record
	pre   []byte // entry prefix of an oversized record
	prev  entryState
	// stable: the views' rows and families stay where they are until the run is finished (a resolver
	// over an arena, nothing folding), so prev keeps slices of them instead of copies.
	stable bool
}

// entryState is what an entry is encoded against: the previous entry of its chunk (zero at the start
// of a chunk). row and family are copies (a writer) or slices of the reader's buffers.
type entryState struct {
	seq    uint64
	row    []byte
	family []byte
	ts     int64
	typ    byte
	hdr    bool   // family, ts and typ are set
	prefix uint64 // cellrec.Prefix(row) (a writer's)
}

func (p *Pool) createRun(sl *slot) (*runWriter, error) {
	if sl.raw == nil {
		rawSize, encSize := p.slotBuffers()
		sl.raw = make([]byte, 0, rawSize)
		if encSize > 0 {
			sl.enc = make([]byte, encSize)
		}
	}
	id := p.fileSeq.Add(1)
	path := filepath.Join(p.dir, fmt.Sprintf("run-%08d", id))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating run file: %w", err)
	}
	return &runWriter{f: f, info: &runInfo{path: path, id: id}, sl: sl, p: p, chunk: p.chunkSize,
		raw: sl.raw[:chunkHdrSz]}, nil
}

// entryBound bounds the encoded length of v's entry (see appendEntryHead).
func entryBound(v *view) int {
	return 5*binary.MaxVarintLen64 + len(v.h.Row) + len(v.h.Family) + 9 + len(v.cells)
}

// add appends a view as one entry (see appendEntryHead; putEntry writes the same bytes).
func (w *runWriter) add(v *view) error {
	need := entryBound(v)
	if len(w.raw) > chunkHdrSz && len(w.raw)-chunkHdrSz+need > w.chunk {
		if err := w.flush(); err != nil {
			return err
		}
	}
	w.info.records++
	if len(w.raw) == chunkHdrSz {
		w.first = append(w.first[:0], v.h.Row...)
		w.prev.seq, w.prev.row, w.prev.hdr, w.prev.prefix = 0, w.prev.row[:0], false, 0
	}
	if need > w.chunk {
		// An oversized record: a raw chunk of its own, written from the view's cells (no copy of them).
		w.pre = appendEntryHead(w.pre[:0], &w.prev, v)
		rawLen := len(w.pre) + len(v.cells)
		var hdr [chunkHdrSz]byte
		putHeader(hdr[:], rawLen, rawLen, codecRaw, crc32.Update(crc32.Checksum(w.pre, castagnoli), castagnoli, v.cells))
		return w.write(v.h.Row, hdr[:], w.pre, v.cells)
	}
	n := len(w.raw)
	if n+need > cap(w.raw) { // not with a slot's buffer (it holds a chunk); kept for safety
		w.raw = slices.Grow(w.raw, need)
	}
	newHdr := !w.prev.hdr || w.prev.ts != v.h.TS || w.prev.typ != byte(v.h.Type) || !sameBytes(w.prev.family, v.h.Family)
	w.raw = w.raw[:n+putEntry(w.raw[n:n+need], &w.prev, v, newHdr)]
	if w.stable {
		w.prev.row = v.h.Row
	} else {
		w.prev.row = append(w.prev.row[:0], v.h.Row...)
	}
	if newHdr {
		if w.stable {
			w.prev.family = v.h.Family
		} else {
			w.prev.family = append(w.prev.family[:0], v.h.Family...)
		}
		w.prev.ts, w.prev.typ, w.prev.hdr = v.h.TS, byte(v.h.Type), true
	}
	w.prev.seq, w.prev.prefix = v.seq, v.prefix
	return nil
}

// sameBytes is bytes.Equal with the short case (a family's few bytes) compared in place.
func sameBytes(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 4 {
		return bytes.Equal(a, b)
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// putEntry writes v's entry, encoded against prev as appendEntryHead and its cells, into dst (at
// least entryBound(v) bytes) and returns its length. newHdr says whether v's family, timestamp or type
// differ from prev's (or prev has none). The row's shared prefix comes from the views' row prefixes
// (v.prefix and prev.prefix) as long as it is within their first eight bytes.
func putEntry(dst []byte, prev *entryState, v *view, newHdr bool) int {
	row := v.h.Row
	m := min(len(prev.row), len(row))
	var shared int
	if x := prev.prefix ^ v.prefix; x != 0 {
		shared = min(bits.LeadingZeros64(x)>>3, m)
	} else if m <= 8 {
		shared = m
	} else {
		shared = 8 + kv.CommonPrefix(prev.row[8:m], row[8:m])
	}
	z := uint64(int64(v.seq-prev.seq)<<1) ^ uint64(int64(v.seq-prev.seq)>>63) // zigzag, as binary.AppendVarint
	f := uint64(shared) << 1
	if newHdr {
		f |= 1
	}
	suffix := row[shared:]
	var i int
	if z|f|uint64(len(suffix)) < 0x80 && len(dst) >= 3 { // the usual three one-byte varints
		dst[0], dst[1], dst[2] = byte(z), byte(f), byte(len(suffix))
		i = 3
	} else {
		i = putUvarint(dst, z)
		i += putUvarint(dst[i:], f)
		i += putUvarint(dst[i:], uint64(len(suffix)))
	}
	if len(suffix) <= 8 {
		d := dst[i : i+len(suffix)]
		for k := range d {
			d[k] = suffix[k]
		}
	} else {
		copy(dst[i:], suffix)
	}
	i += len(suffix)
	if newHdr {
		i += putUvarint(dst[i:], uint64(len(v.h.Family)))
		i += copy(dst[i:], v.h.Family)
		binary.BigEndian.PutUint64(dst[i:], uint64(v.h.TS))
		dst[i+8] = byte(v.h.Type)
		i += 9
	}
	i += putUvarint(dst[i:], uint64(len(v.cells)))
	return i + copy(dst[i:], v.cells)
}

// putUvarint is binary.PutUvarint with the one-byte case first.
func putUvarint(dst []byte, x uint64) int {
	if x < 0x80 {
		dst[0] = byte(x)
		return 1
	}
	return binary.PutUvarint(dst, x)
}

// appendEntryHead appends all of v's entry but its cells, encoded against the previous entry of the
// chunk, prev:
//
//	entry := varint(seq - prev.seq)  uvarint(shared<<1 | newHeader)  uvarint(len(suffix)) suffix
//	         [uvarint(len(family)) family  ts (8 bytes, big-endian)  type (1 byte)]  uvarint(len(cells)) cells
//
// where the row is prev.row[:shared] followed by suffix, and the bracketed part is present when
// newHeader is 1: at the start of a chunk and whenever family, timestamp or type change. Entries of a
// run are sorted, so the row usually shares most of its bytes with the previous one, seqs of nearly
// sorted input differ by little, and the family, timestamp and type of an export are the same all
// along: an entry of a typical export row is nearly a quarter smaller than the record it holds.
func appendEntryHead(dst []byte, prev *entryState, v *view) []byte {
	dst = binary.AppendVarint(dst, int64(v.seq-prev.seq))
	shared := kv.CommonPrefix(prev.row, v.h.Row)
	newHdr := !prev.hdr || prev.ts != v.h.TS || prev.typ != byte(v.h.Type) || !bytes.Equal(prev.family, v.h.Family)
	f := uint64(shared) << 1
	if newHdr {
		f |= 1
	}
	dst = binary.AppendUvarint(dst, f)
	dst = binary.AppendUvarint(dst, uint64(len(v.h.Row)-shared))
	dst = append(dst, v.h.Row[shared:]...)
	if newHdr {
		dst = binary.AppendUvarint(dst, uint64(len(v.h.Family)))
		dst = append(dst, v.h.Family...)
		dst = binary.BigEndian.AppendUint64(dst, uint64(v.h.TS))
		dst = append(dst, byte(v.h.Type))
	}
	return binary.AppendUvarint(dst, uint64(len(v.cells)))
}

func putHeader(h []byte, rawLen, storedLen int, codec byte, crc uint32) {
	binary.BigEndian.PutUint32(h[0:], uint32(rawLen))
	binary.BigEndian.PutUint32(h[4:], uint32(storedLen))
	h[8] = codec
	binary.BigEndian.PutUint32(h[9:], crc)
}

// writeChunk writes buf (chunkHdrSz bytes of room, then the entries) as one chunk, compressed when the
// pool compresses runs and it shrinks.
func (w *runWriter) writeChunk(buf []byte) error {
	rawLen := len(buf) - chunkHdrSz
	crc := crc32.Checksum(buf[chunkHdrSz:], castagnoli)
	if w.p.compress {
		enc := s2.EncodeSnappy(w.sl.enc[chunkHdrSz:], buf[chunkHdrSz:])
		if len(enc) < rawLen && &enc[0] == &w.sl.enc[chunkHdrSz] {
			out := w.sl.enc[:chunkHdrSz+len(enc)]
			putHeader(out, rawLen, len(enc), codecSnappy, crc)
			w.info.maxRaw = max(w.info.maxRaw, rawLen)
			return w.write(w.first, out)
		}
	}
	putHeader(buf, rawLen, rawLen, codecRaw, crc)
	return w.write(w.first, buf)
}

// write writes one chunk given in parts (its header first) and records it with the row of its first
// record.
func (w *runWriter) write(first []byte, parts ...[]byte) error {
	n := 0
	for _, b := range parts {
		n += len(b)
	}
	w.info.chunks = append(w.info.chunks, chunkRef{off: w.info.size, disk: n, row: bytes.Clone(first)})
	for _, b := range parts {
		if _, err := w.f.Write(b); err != nil {
			return fmt.Errorf("writing run %s: %w", w.info.path, err)
		}
	}
	w.info.size += int64(n)
	w.info.maxDisk = max(w.info.maxDisk, n)
	return nil
}

func (w *runWriter) flush() error {
	if len(w.raw) == chunkHdrSz {
		return nil
	}
	err := w.writeChunk(w.raw)
	w.raw = w.raw[:chunkHdrSz]
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
	w.p.runBytes.Add(w.info.size)
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
	ctx   context.Context
	d     *cellrec.Dict
	info  *runInfo
	f     *os.File
	chunk int    // index of the next chunk to load
	disk  []byte // read buffer (maxDisk)
	raw   []byte // decompression buffer (maxRaw), when the run has compressed chunks
	buf   []byte // current chunk's raw bytes
	pos   int
	v     view
	row   []byte     // the current entry's row, rebuilt from the previous one
	prev  entryState // the current entry (row and family are slices of row and buf)
	keep  bool       // close leaves the file (a range reader; the sorter removes its runs)
}

func openRun(ctx context.Context, d *cellrec.Dict, info *runInfo) (*runReader, error) {
	return openRunAt(ctx, d, info, 0)
}

// openRunAt opens a run for reading from chunk number chunk.
func openRunAt(ctx context.Context, d *cellrec.Dict, info *runInfo, chunk int) (*runReader, error) {
	f, err := os.Open(info.path)
	if err != nil {
		return nil, fmt.Errorf("opening run: %w", err)
	}
	return &runReader{ctx: ctx, d: d, info: info, f: f, chunk: chunk}, nil
}

func (r *runReader) corrupt(format string, args ...any) error {
	off := int64(-1)
	if i := r.chunk - 1; i >= 0 && i < len(r.info.chunks) {
		off = r.info.chunks[i].off
	}
	return fmt.Errorf("run %s, chunk at offset %d: %s", r.info.path, off, fmt.Sprintf(format, args...))
}

func (r *runReader) loadChunk() (bool, error) {
	if r.chunk >= len(r.info.chunks) {
		return false, nil
	}
	if r.ctx != nil {
		if err := r.ctx.Err(); err != nil {
			return false, err
		}
	}
	c := r.info.chunks[r.chunk]
	r.chunk++
	if c.disk > r.info.maxDisk || c.disk < chunkHdrSz {
		return false, r.corrupt("bad chunk length %d", c.disk)
	}
	if r.disk == nil {
		r.disk = make([]byte, r.info.maxDisk)
	}
	n, err := r.f.ReadAt(r.disk[:c.disk], c.off)
	if err != nil && !(err == io.EOF && n == c.disk) {
		return false, r.corrupt("reading %d bytes: %v", c.disk, err)
	}
	b := r.disk[:c.disk]
	rawLen := int(binary.BigEndian.Uint32(b[0:]))
	storedLen := int(binary.BigEndian.Uint32(b[4:]))
	codec := b[8]
	crc := binary.BigEndian.Uint32(b[9:])
	if storedLen == 0 || chunkHdrSz+storedLen != c.disk {
		return false, r.corrupt("bad stored chunk length %d", storedLen)
	}
	stored := b[chunkHdrSz : chunkHdrSz+storedLen]
	var raw []byte
	switch codec {
	case codecRaw:
		if storedLen != rawLen {
			return false, r.corrupt("raw chunk with stored length %d != %d", storedLen, rawLen)
		}
		raw = stored
	case codecSnappy:
		if rawLen > r.info.maxRaw || rawLen == 0 {
			return false, r.corrupt("bad raw chunk length %d", rawLen)
		}
		if n, err := s2.DecodedLen(stored); err != nil || n != rawLen {
			return false, r.corrupt("compressed chunk decodes to %d bytes, header says %d (%v)", n, rawLen, err)
		}
		if r.raw == nil {
			r.raw = make([]byte, r.info.maxRaw)
		}
		if raw, err = s2.Decode(r.raw[:rawLen], stored); err != nil {
			return false, r.corrupt("decompressing chunk: %v", err)
		}
	default:
		return false, r.corrupt("unknown chunk codec %d", codec)
	}
	if crc32.Checksum(raw, castagnoli) != crc {
		return false, r.corrupt("chunk checksum mismatch")
	}
	r.buf, r.pos = raw, 0
	return true, nil
}

func (r *runReader) next() (bool, error) {
	if r.pos >= len(r.buf) {
		ok, err := r.loadChunk()
		if !ok || err != nil {
			return false, err
		}
		r.prev.seq, r.prev.row, r.prev.hdr = 0, r.row[:0], false
	} else if r.prev.hdr && r.nextUsual() {
		return true, nil
	}
	return r.nextEntry()
}

// nextUsual reads the usual entry, when it is one, and reports whether it did: an entry after another
// of its chunk (the view holds the previous one), with no new header, whose seq delta, shared row
// length and suffix length are one byte each, whose suffix fits the row buffer's room and whose
// cells' length is one or two bytes. It writes the view's fields that change (the header's family,
// timestamp and type are the previous entry's) and keeps its row prefix from the previous one's
// shared bytes: no Header built and copied, no view.set. Anything else is left to nextEntry.
func (r *runReader) nextUsual() bool {
	buf, i := r.buf, r.pos
	if i+4 > len(buf) {
		return false
	}
	z, f, sl := buf[i], int(buf[i+1]), int(buf[i+2])
	shared, end := f>>1, f>>1+sl
	if (z|buf[i+1]|buf[i+2])&0x80 != 0 || f&1 != 0 || shared > len(r.prev.row) || end > cap(r.row) {
		return false
	}
	i += 3
	if sl > len(buf)-i-1 {
		return false
	}
	row := r.row[:end]
	if sl <= 8 {
		suffix := buf[i : i+sl]
		for k := range suffix {
			row[shared+k] = suffix[k]
		}
	} else {
		copy(row[shared:], buf[i:i+sl])
	}
	i += sl
	cl := int(buf[i])
	i++
	if cl >= 0x80 {
		if i >= len(buf) || buf[i] >= 0x80 {
			return false // not the usual case: nextEntry reads the entry again, the row rebuilt the same
		}
		cl = cl&0x7f | int(buf[i])<<7
		i++
	}
	if cl == 0 || cl > len(buf)-i {
		return false
	}
	cells := buf[i : i+cl : i+cl]
	r.pos = i + cl
	// The row prefix keeps the previous row's shared bytes (bytes past them are zero), then takes the
	// suffix's, up to eight.
	p := r.v.prefix
	if shared < 8 {
		p &^= ^uint64(0) >> (8 * shared)
		for k := shared; k < min(end, 8); k++ {
			p |= uint64(row[k]) << (56 - 8*k)
		}
	}
	r.row = row
	r.prev.row = row[:end:end]
	r.prev.seq += uint64(int64(z>>1) ^ -int64(z&1)) // zigzag
	v := &r.v
	v.h.Row, v.cells, v.seq, v.prefix = r.prev.row, cells, r.prev.seq, p
	v.q, v.v, _ = r.d.Next(cells)
	return true
}

// nextEntry reads any entry (see appendEntryHead) into the view.
func (r *runReader) nextEntry() (bool, error) {
	// The chunk's CRC matched, so these are the bytes of entries written from records that were
	// validated when they were added: the entry is parsed with bounds checks, its cells are not walked
	// again.
	b := r.buf[r.pos:]
	d, n := binary.Varint(b)
	if n <= 0 {
		return false, r.corrupt("truncated entry")
	}
	b = b[n:]
	f, n := uvarint(b)
	if n <= 0 || f>>1 > uint64(len(r.prev.row)) {
		return false, r.corrupt("malformed entry: shared row length")
	}
	b = b[n:]
	sl, n := uvarint(b)
	if n <= 0 || sl > uint64(len(b)-n) {
		return false, r.corrupt("entry overruns its chunk")
	}
	// The row is rebuilt in place: the previous view's row is no longer needed (cur is valid until
	// the next call of next).
	r.row = append(r.row[:f>>1], b[n:n+int(sl)]...)
	b = b[n+int(sl):]
	if f&1 != 0 {
		fl, n := uvarint(b)
		if n <= 0 || fl > uint64(len(b)-n) || len(b)-n-int(fl) < 9 {
			return false, r.corrupt("entry overruns its chunk")
		}
		r.prev.family = b[n : n+int(fl) : n+int(fl)]
		b = b[n+int(fl):]
		r.prev.ts, r.prev.typ, r.prev.hdr = int64(binary.BigEndian.Uint64(b)), b[8], true
		b = b[9:]
	} else if !r.prev.hdr {
		return false, r.corrupt("malformed entry: no header")
	}
	cl, n := uvarint(b)
	if n <= 0 || cl > uint64(len(b)-n) {
		return false, r.corrupt("entry overruns its chunk")
	}
	if cl == 0 {
		return false, r.corrupt("malformed entry: record without cells")
	}
	cells := b[n : n+int(cl) : n+int(cl)]
	r.prev.seq += uint64(d)
	r.prev.row = r.row[:len(r.row):len(r.row)]
	h := cellrec.Header{Row: r.prev.row, Family: r.prev.family, TS: r.prev.ts, Type: kv.Type(r.prev.typ)}
	r.v.set(r.d, &h, cells, r.prev.seq)
	r.pos = len(r.buf) - len(b) + n + int(cl)
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
	r.disk, r.raw, r.buf, r.v, r.row, r.prev = nil, nil, nil, view{}, nil, entryState{}
	if r.keep {
		return err
	}
	if e := r.info.remove(); e != nil && err == nil {
		err = e
	}
	return err
}
