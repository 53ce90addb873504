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
	"sync"
)

// A run file holds the records one map unit routed to one (region, family), in the order the unit's
// batches were mapped (the reducer sorts them; Seq orders equal keys). Each record is framed as
//
//	uvarint(len(rec)+1) rec uvarint(seq)
//
// after an 8-byte magic, and the file ends with a trailer: a zero byte, the uvarint record count. A file
// without its trailer (a map attempt that died while writing it) is refused by the reader.
const runMagic = "HFLRUN1\n"

// runWriter appends records to one run file: a local file (tmp, see stores.tmpFile) that commit
// publishes under the run file's shared name (rel).
type runWriter struct {
	mu    sync.Mutex
	rel   string
	tmp   string
	f     *os.File
	bw    *bufio.Writer
	n     int64
	bytes int64
}

func createRun(rel, tmp string, bufSize int) (*runWriter, error) {
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		return nil, fmt.Errorf("run file: %w", err)
	}
	f, err := os.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("run file: %w", err)
	}
	w := &runWriter{rel: rel, tmp: tmp, f: f, bw: bufio.NewWriterSize(f, bufSize)}
	if _, err := w.bw.WriteString(runMagic); err != nil {
		w.abort()
		return nil, fmt.Errorf("run file: %w", err)
	}
	return w, nil
}

// write appends pre-framed records (appendFrame) holding n records.
func (w *runWriter) write(frames []byte, n int64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.bw.Write(frames); err != nil {
		return fmt.Errorf("run file %s: %w", w.rel, err)
	}
	w.n += n
	w.bytes += int64(len(frames))
	return nil
}

func appendFrame(dst, rec []byte, seq uint64) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(rec))+1)
	dst = append(dst, rec...)
	return binary.AppendUvarint(dst, seq)
}

// commit writes the trailer and publishes the file (synced first when a rename publishes it).
func (w *runWriter) commit(ctx context.Context, s *stores) error {
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
		return fmt.Errorf("run file %s: %w", w.rel, err)
	}
	if err := s.putFile(ctx, w.rel, w.tmp); err != nil {
		return fmt.Errorf("run file %s: %w", w.rel, err)
	}
	return nil
}

func (w *runWriter) abort() {
	w.f.Close()
	os.Remove(w.tmp)
}

// readRun calls add for every record of the shared run file rel and returns how many there were.
func readRun(ctx context.Context, s *stores, rel string, add func(rec []byte, seq uint64) error) (int64, error) {
	f, err := s.reader(ctx, rel)
	if err != nil {
		return 0, fmt.Errorf("run file %s: %w", rel, err)
	}
	defer f.Close()
	path := rel
	br := bufio.NewReaderSize(f, 1<<20)
	bad := func(what string) error { return fmt.Errorf("run file %s: corrupt (%s)", path, what) }
	head := make([]byte, len(runMagic))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != runMagic {
		return 0, bad("no header")
	}
	var n int64
	var rec []byte
	for {
		l, err := binary.ReadUvarint(br)
		if err != nil {
			return n, bad("truncated")
		}
		if l == 0 { // the trailer
			want, err := binary.ReadUvarint(br)
			if err != nil {
				return n, bad("truncated trailer")
			}
			if want != uint64(n) {
				return n, bad(fmt.Sprintf("%d records, trailer says %d", n, want))
			}
			if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
				return n, bad("bytes after the trailer")
			}
			return n, nil
		}
		l--
		if l > 1<<31 {
			return n, bad("record length")
		}
		if uint64(cap(rec)) < l {
			rec = make([]byte, l)
		}
		rec = rec[:l]
		if _, err := io.ReadFull(br, rec); err != nil {
			return n, bad("truncated record")
		}
		seq, err := binary.ReadUvarint(br)
		if err != nil {
			return n, bad("truncated record")
		}
		if err := add(rec, seq); err != nil {
			return n, err
		}
		n++
	}
}
