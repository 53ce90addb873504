package beamtask

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A run file holds the records one map unit routed to one (region, family), sorted by the map task
// (the views of hfload's sorter written out as records: in (key, seq) order, none overlapping the
// next), so that the reduce task merges runs instead of sorting them. Each record is framed as
//
//	uvarint(len(rec)+1) rec uvarint(seq)
//
// after an 8-byte magic, and the file ends with a trailer: a zero byte, the uvarint record count. A file
// without its trailer (a map attempt that died while writing it) is refused by the reader.
//
// Next to it the map task stores the run's index (runIndexName): the offset and row of a record at
// least every indexEvery bytes, the offset of the trailer and the record count, so that a reduce task
// of a sub-range starts reading each run near its first row and stops at its last, and the plan of
// sub-ranges is made from the indexes alone, without reading the runs.
const (
	runMagic   = "HFLRUN2\n"
	indexMagic = "HFLIDX1\n"
)

// runIndexName is the index of run file rel.
func runIndexName(rel string) string { return strings.TrimSuffix(rel, ".run") + ".idx" }

// runWriter writes one sorted run file: a local file (tmp, see stores.tmpFile) that commit publishes
// under the run file's shared name (rel), after its index.
type runWriter struct {
	rel, tmp  string
	f         *os.File
	bw        *bufio.Writer
	n         int64
	bytes     int64 // record frames written
	off       int64 // offset of the next record
	every     int64
	lastIndex int64
	entries   int64
	index     []byte // the index's entries
	frame     []byte
}

func createRun(rel, tmp string, bufSize int, every int64) (*runWriter, error) {
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return nil, fmt.Errorf("run file: %w", err)
	}
	f, err := os.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("run file: %w", err)
	}
	w := &runWriter{rel: rel, tmp: tmp, f: f, bw: bufio.NewWriterSize(f, bufSize), off: int64(len(runMagic)), every: max(every, 1)}
	if _, err := w.bw.WriteString(runMagic); err != nil {
		w.abort()
		return nil, fmt.Errorf("run file: %w", err)
	}
	return w, nil
}

// add appends one record; records must come in sorted order (the caller's sorter's).
func (w *runWriter) add(rec []byte, seq uint64, row []byte) error {
	if w.n == 0 || w.off-w.lastIndex >= w.every {
		w.index = binary.AppendUvarint(w.index, uint64(w.off))
		w.index = binary.AppendUvarint(w.index, uint64(len(row)))
		w.index = append(w.index, row...)
		w.lastIndex = w.off
		w.entries++
	}
	w.frame = appendFrame(w.frame[:0], rec, seq)
	if _, err := w.bw.Write(w.frame); err != nil {
		return fmt.Errorf("run file %s: %w", w.rel, err)
	}
	w.n++
	w.bytes += int64(len(w.frame))
	w.off += int64(len(w.frame))
	return nil
}

func appendFrame(dst, rec []byte, seq uint64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(rec))+1)
	dst = append(dst, rec...)
	return binary.AppendUvarint(dst, seq)
}

// commit writes the trailer, stores the index and publishes the file (synced first when a rename
// publishes it). It returns the index's size.
func (w *runWriter) commit(ctx context.Context, s *stores) (int64, error) {
	t := binary.AppendUvarint([]byte{0}, uint64(w.n))
	_, err := w.bw.Write(t)
	if err == nil {
		err = w.bw.Flush()
	}
	if err == nil && s.dir != "" {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(w.tmp)
		return 0, fmt.Errorf("run file %s: %w", w.rel, err)
	}
	idx := binary.AppendUvarint([]byte(indexMagic), uint64(w.entries))
	idx = append(idx, w.index...)
	idx = binary.AppendUvarint(idx, uint64(w.off))
	idx = binary.AppendUvarint(idx, uint64(w.n))
	if err := s.put(ctx, runIndexName(w.rel), idx); err != nil {
		os.Remove(w.tmp)
		return 0, fmt.Errorf("run file %s: index: %w", w.rel, err)
	}
	if err := s.putFile(ctx, w.rel, w.tmp); err != nil {
		return 0, fmt.Errorf("run file %s: %w", w.rel, err)
	}
	return int64(len(idx)), nil
}

func (w *runWriter) abort() {
	w.f.Close()
	os.Remove(w.tmp)
}

// runIndex is a run file's index, read back.
type runIndex struct {
	offs    []int64
	rows    [][]byte
	end     int64 // offset of the trailer
	records int64
	size    int64 // of the index
}

// readRunIndex reads the index of run file rel.
func readRunIndex(ctx context.Context, s *stores, rel string) (*runIndex, error) {
	b, err := s.get(ctx, runIndexName(rel))
	if err != nil {
		return nil, fmt.Errorf("run file %s: index: %w", rel, err)
	}
	bad := fmt.Errorf("run file %s: corrupt index", rel)
	if !strings.HasPrefix(string(b), indexMagic) {
		return nil, bad
	}
	ix := &runIndex{size: int64(len(b))}
	p := b[len(indexMagic):]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, false
		}
		p = p[n:]
		return v, true
	}
	count, ok := next()
	if !ok || count > uint64(len(p)) {
		return nil, bad
	}
	var last int64
	for range count {
		off, ok1 := next()
		l, ok2 := next()
		if !ok1 || !ok2 || l > uint64(len(p)) || int64(off) < last {
			return nil, bad
		}
		ix.offs = append(ix.offs, int64(off))
		ix.rows = append(ix.rows, p[:l:l])
		p = p[l:]
		last = int64(off)
	}
	end, ok1 := next()
	records, ok2 := next()
	if !ok1 || !ok2 || len(p) != 0 || int64(end) < last {
		return nil, bad
	}
	ix.end, ix.records = int64(end), int64(records)
	return ix, nil
}

// start is the offset to read from for rows at or after lo (nil: the first record): the last indexed
// record whose row sorts before lo (every record before it does too), else the first.
func (ix *runIndex) start(lo []byte) int64 {
	at := int64(len(runMagic))
	if lo == nil {
		return at
	}
	for i, r := range ix.rows {
		if string(r) >= string(lo) {
			break
		}
		at = ix.offs[i]
	}
	return at
}

// runSource reads the records of a sorted run file whose rows are in [lo, hi) (nil: unbounded), as a
// sorter.RecordSource; it adds shift to every seq (a CSV chunk's rows before it).
type runSource struct {
	rel     string
	rc      io.ReadCloser
	br      *bufio.Reader
	whole   bool // read from the first record: the trailer's count is checked
	lo, hi  []byte
	shift   uint64
	rec     []byte
	seq     uint64
	peeked  bool
	done    bool
	n       int64 // records read, in range or not
	records int64 // records handed on
	read    int64 // bytes read
}

// openRunSource opens run file rel at the index's start for lo and reads up to the first record in
// range; it returns nil (and closes it) if there is none.
func openRunSource(ctx context.Context, s *stores, rel string, ix *runIndex, lo, hi []byte, shift uint64, bufSize int) (*runSource, error) {
	if len(ix.rows) == 0 || (hi != nil && string(ix.rows[0]) >= string(hi)) {
		return nil, nil // empty, or every row at or after hi: nothing to read
	}
	off := ix.start(lo)
	rc, err := s.readerAt(ctx, rel, off)
	if err != nil {
		return nil, fmt.Errorf("run file %s: %w", rel, err)
	}
	r := &runSource{rel: rel, rc: rc, br: bufio.NewReaderSize(rc, bufSize), whole: off == int64(len(runMagic)), lo: lo, hi: hi, shift: shift}
	ok, err := r.advance()
	if err != nil || !ok {
		r.close()
		return nil, err
	}
	r.peeked = true
	return r, nil
}

func (r *runSource) bad(what string) error {
	return fmt.Errorf("run file %s: corrupt (%s)", r.rel, what)
}

// advance reads up to the next record in range.
func (r *runSource) advance() (bool, error) {
	for {
		l, err := binary.ReadUvarint(r.br)
		if err != nil {
			return false, r.bad("truncated")
		}
		r.read += int64(uvarintLen(l))
		if l == 0 { // the trailer
			want, err := binary.ReadUvarint(r.br)
			if err != nil {
				return false, r.bad("truncated trailer")
			}
			if r.whole && want != uint64(r.n) {
				return false, r.bad(fmt.Sprintf("%d records, trailer says %d", r.n, want))
			}
			if _, err := r.br.ReadByte(); !errors.Is(err, io.EOF) {
				return false, r.bad("bytes after the trailer")
			}
			r.done = true
			return false, nil
		}
		l--
		if l > 1<<31 {
			return false, r.bad("record length")
		}
		if uint64(cap(r.rec)) < l {
			r.rec = make([]byte, l)
		}
		r.rec = r.rec[:l]
		if _, err := io.ReadFull(r.br, r.rec); err != nil {
			return false, r.bad("truncated record")
		}
		seq, err := binary.ReadUvarint(r.br)
		if err != nil {
			return false, r.bad("truncated record")
		}
		r.read += int64(l) + int64(uvarintLen(seq))
		r.n++
		row, err := recordRow(r.rec)
		if err != nil {
			return false, r.bad("record row")
		}
		if r.lo != nil && string(row) < string(r.lo) {
			continue
		}
		if r.hi != nil && string(row) >= string(r.hi) {
			r.done = true // sorted: nothing further is in range
			return false, nil
		}
		r.seq = seq + r.shift
		r.records++
		return true, nil
	}
}

// Next implements sorter.RecordSource.
func (r *runSource) Next() ([]byte, uint64, bool, error) {
	if r.peeked {
		r.peeked = false
		return r.rec, r.seq, true, nil
	}
	if r.done {
		return nil, 0, false, nil
	}
	ok, err := r.advance()
	if err != nil || !ok {
		return nil, 0, false, err
	}
	return r.rec, r.seq, true, nil
}

func (r *runSource) close() {
	if r.rc != nil {
		r.rc.Close()
		r.rc = nil
	}
}

// recordRow is the row of a record (cellrec), checked against its length.
func recordRow(rec []byte) ([]byte, error) {
	l, n := binary.Uvarint(rec)
	if n <= 0 || l > uint64(len(rec)-n) {
		return nil, errors.New("short record")
	}
	return rec[n : n+int(l)], nil
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
