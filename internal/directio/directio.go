package directio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"unsafe"

	"github.com/hfload/hfload/internal/hugepage"
)

// Align is the alignment of O_DIRECT buffers, lengths and file offsets (the page size, which covers
// every logical block size in use).
const Align = 4096

// alignedBuf returns a zeroed buffer of n bytes (n a multiple of Align) whose first byte is aligned.
func alignedBuf(n int) []byte { return alignedTo(n, Align) }

// alignedTo returns a zeroed buffer of n bytes whose first byte is aligned to align (a power of two).
func alignedTo(n, align int) []byte {
	b := make([]byte, n+align)
	off := int(uintptr(unsafe.Pointer(&b[0])) & uintptr(align-1))
	if off != 0 {
		off = align - off
	}
	return b[off : off+n : off+n]
}

// File is an open file and whether it bypasses the page cache. Its descriptor is released by Close
// only (a Writer's or Reader's).
type File struct {
	sysFile
	direct bool
	// promote: created by CreateSmall; a Writer turns O_DIRECT on when the file outgrows its first
	// buffer.
	promote bool
}

// Direct reports whether the file currently bypasses the page cache.
func (f *File) Direct() bool { return f.direct }

// Create creates a new file for writing (it must not exist), with O_DIRECT when possible.
func Create(path string, perm os.FileMode) (*File, error) {
	return openFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
}

// CreateSmall creates a new file for writing that is expected to be small: through the page cache
// (no O_DIRECT, so no switching it off for the tail of a file that fits one buffer), until a Writer
// of it fills its first buffer; from there on the Writer writes it with O_DIRECT where the file system
// allows, as a file made by Create.
func CreateSmall(path string, perm os.FileMode) (*File, error) {
	f, err := open(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return nil, err
	}
	return &File{sysFile: f, promote: true}, nil
}

// Writer buffers writes in aligned buffers that a background goroutine writes to the file in order, so
// that several O_DIRECT writes (which wait for the device) are in flight while the caller fills the next
// buffer. It is not safe for concurrent use.
type Writer struct {
	f       *File
	own     File   // f, for a Writer made by Dir.CreateSmallIn
	buf     []byte // the buffer being filled
	n       int
	free    chan []byte // buffers to fill
	full    chan []byte // buffers to write, in order
	done    chan struct{}
	started bool // the background goroutine runs (from the first full buffer on)
	closed  bool // full is closed and the goroutine has ended
	size    int  // the largest buffer size
	made    int  // buffers made so far (at most WriterBuffers)
	// written counts the bytes the file system has accepted (write's results): the file's size, since
	// every file a Writer writes was created empty (O_EXCL) and only the Writer writes it. Only one
	// goroutine writes at a time (write), and CloseSize reads it after the last.
	written int64
	bufs    *Buffers

	mu  sync.Mutex
	err error // first write error (sticky)
}

// WriterBuffers is the number of buffers of a Writer: one being filled, the others queued or being
// written.
const WriterBuffers = 3

// WriterMemory is the memory a Writer made with NewWriter(f, size) holds.
func WriterMemory(size int) int64 {
	return int64(WriterBuffers) * int64(max(Align, (size+Align-1)&^(Align-1)))
}

// firstBuffer is the size of a Writer's first buffer; each next one doubles, up to the Writer's size.
const firstBuffer = 64 << 10

// NewWriter returns a Writer for f with buffers of up to size bytes (rounded up to Align, at least
// Align); it holds at most WriterBuffers of them (WriterMemory). Large buffers matter: the background
// goroutine needs a processor again after every write, and on a machine busy producing the data that
// wait is of the order of the write itself, so each buffer should carry a few MiB. They grow with the
// file, from firstBuffer, doubling: a small file (a region with little data) costs a small buffer, not
// WriterBuffers large ones to allocate and zero.
func NewWriter(f *File, size int) *Writer {
	return NewWriterBuffers(f, size, nil)
}

// NewWriterBuffers is NewWriter taking its buffers from bufs and giving them back at Close (nil: its
// own). The goroutine that writes full buffers starts with the first one: a file that fits its first
// buffer (a region with a few rows) is one write at Close, with no goroutine and no fresh buffer.
func NewWriterBuffers(f *File, size int, bufs *Buffers) *Writer {
	return NewWriterFirst(f, size, firstBuffer, bufs)
}

// NewWriterFirst is NewWriterBuffers with a first buffer of first bytes (rounded up to Align, at most
// size) instead of firstBuffer: a file expected to be about that large is then one write at Close.
func NewWriterFirst(f *File, size, first int, bufs *Buffers) *Writer {
	w := &Writer{}
	w.init(f, size, first, bufs)
	return w
}

// InitWriterFirst makes *w, a zero Writer, what NewWriterFirst(f, size, first, bufs) returns (first <= 0:
// NewWriterBuffers's), in place: a caller that holds the Writer in an object of its own (a sink's file)
// then allocates one object for both.
func InitWriterFirst(w *Writer, f *File, size, first int, bufs *Buffers) {
	if first <= 0 {
		first = firstBuffer
	}
	w.init(f, size, first, bufs)
}

// init makes *w, a zero Writer, NewWriterFirst's Writer.
func (w *Writer) init(f *File, size, first int, bufs *Buffers) {
	size = max(Align, (size+Align-1)&^(Align-1))
	first = max(Align, (first+Align-1)&^(Align-1))
	w.f, w.size, w.made, w.bufs = f, size, 1, bufs
	w.buf = w.alloc(min(size, first))
}

// CreateSmallIn is CreateSmall of the file name in d, with InitWriterFirst(w, f, size, first, bufs) of
// it: the File is kept in the Writer, so that a small file's Writer and File are one allocation, the
// caller's. w must be a zero Writer; it is left zero if the create fails.
func (d *Dir) CreateSmallIn(w *Writer, name string, perm os.FileMode, size, first int, bufs *Buffers) error {
	f, err := d.createSmall(name, perm)
	if err != nil {
		return err
	}
	w.own = File{sysFile: f, promote: true}
	InitWriterFirst(w, &w.own, size, first, bufs)
	return nil
}

// alloc returns an aligned buffer of n bytes (n a multiple of Align), from bufs if set.
func (w *Writer) alloc(n int) []byte {
	if w.bufs != nil {
		return w.bufs.get(n)
	}
	return alignedBuf(n)
}

// start starts the background writer. A file made by CreateSmall has outgrown its first buffer: the
// rest of it, from this aligned offset on, is written around the page cache where the file system
// allows (nothing is written yet, so no cached page can go stale).
func (w *Writer) start() {
	if w.f.promote {
		w.f.promote = false
		if setDirect(w.f, true) != nil {
			w.f.direct = false // refused (tmpfs): ordinary I/O, as Create falls back to
		}
	}
	w.free, w.full, w.done = make(chan []byte, WriterBuffers), make(chan []byte, WriterBuffers), make(chan struct{})
	w.started = true
	go w.loop()
}

// next returns the buffer to fill after a full one of n bytes: one the background writer is done with
// if there is one (replaced by a larger one, twice n up to size, while they are still growing);
// otherwise a new one of that size while fewer than WriterBuffers exist; otherwise the next one the
// background writer is done with. A buffer is made only when none is free: a file whose writes keep
// up with its filling (each write takes less than filling a buffer) is written through two buffers,
// not WriterBuffers (families-5 at 1M rows: 50 buffers for 25 files, not 75), and the third is made
// when a write lags (a busy disk, or a writer waiting for a processor).
func (w *Writer) next(n int) []byte {
	want := min(2*n, w.size)
	var b []byte
	select {
	case b = <-w.free:
	default:
		if w.made < WriterBuffers {
			w.made++
			return w.alloc(want)
		}
		b = <-w.free
	}
	if len(b) < want {
		w.recycle(b)
		b = w.alloc(want)
	}
	return b
}

// recycle gives a buffer back to bufs, if set.
func (w *Writer) recycle(b []byte) {
	if w.bufs != nil && b != nil {
		w.bufs.put(b)
	}
}

// loop writes full buffers in order until full is closed; after an error it only recycles them.
func (w *Writer) loop() {
	defer close(w.done)
	for b := range w.full {
		if w.error() == nil {
			if err := w.write(b); err != nil {
				w.setError(err)
			}
		}
		w.free <- b[:cap(b)]
	}
}

// error returns the first write error (without a defer: it runs for every Write of thousands of
// small files).
func (w *Writer) error() error {
	w.mu.Lock()
	err := w.err
	w.mu.Unlock()
	return err
}

func (w *Writer) setError(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
}

// AvailableBuffer returns an empty slice whose capacity is the rest of the buffer being filled
// (bufio.Writer's contract): a caller may build its next write in it, and Write of a slice starting
// there then costs no copy. It is valid until the next Write; nil after Close.
func (w *Writer) AvailableBuffer() []byte {
	if w.closed {
		return nil
	}
	return w.buf[w.n:w.n:len(w.buf)]
}

// Write buffers p, queueing every full buffer for the background writer. A p built in
// AvailableBuffer is already in place and is not copied.
func (w *Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, errors.New("directio: write after Close")
	}
	if err := w.error(); err != nil {
		return 0, err
	}
	total := 0
	for len(p) > 0 {
		k := len(p)
		if k > len(w.buf)-w.n || &p[0] != &w.buf[w.n] { // not built in place (AvailableBuffer)
			k = copy(w.buf[w.n:], p)
		}
		w.n += k
		p = p[k:]
		total += k
		if w.n == len(w.buf) {
			n := len(w.buf)
			if !w.started {
				w.start()
			}
			w.full <- w.buf
			w.buf, w.n = w.next(n), 0
			if err := w.error(); err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// write writes b (aligned in memory and length while direct), leaving direct mode if the file system
// turns out to refuse it. Only one goroutine writes at a time (the loop, or Close after it ended).
func (w *Writer) write(b []byte) error {
	for len(b) > 0 {
		n, err := w.f.Write(b)
		b = b[n:]
		w.written += int64(n)
		if err != nil && w.f.direct && n == 0 && isInvalid(err) {
			if derr := setDirect(w.f, false); derr != nil {
				return fmt.Errorf("directio: %s: %w", w.f.Name(), derr)
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Close writes what is buffered (the aligned part directly, the tail through the page cache) and closes
// the file. It does not fsync.
func (w *Writer) Close() error {
	_, err := w.close(false)
	return err
}

// CloseSize is Close that also returns the file's size (-1 with an error): the bytes the file system
// accepted for it, which is what a stat of its path says until something else changes the file (every
// file a Writer writes is created empty, O_EXCL, and written by the Writer alone). It used to ask the
// file system (fstat), one system call more for each of thousands of small files.
func (w *Writer) CloseSize() (int64, error) {
	return w.close(true)
}

func (w *Writer) close(size bool) (int64, error) {
	err := w.flushTail()
	n := int64(-1)
	if err == nil && size {
		n = w.written
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.release()
	return n, err
}

// release gives the buffers back to bufs once the background writer has ended.
func (w *Writer) release() {
	if w.bufs == nil || !w.closed {
		return
	}
	w.recycle(w.buf)
	w.buf, w.n = nil, 0
	for w.started {
		select {
		case b := <-w.free:
			w.recycle(b)
		default:
			return
		}
	}
}

// Sync writes what is buffered and fsyncs; after it the Writer only accepts Close.
func (w *Writer) Sync() error {
	if err := w.flushTail(); err != nil {
		return err
	}
	return w.f.Sync()
}

// flushTail waits for the queued buffers, then writes the last, partial one.
func (w *Writer) flushTail() error {
	if !w.closed {
		w.closed = true
		if w.started {
			close(w.full)
			<-w.done
		}
	}
	if err := w.error(); err != nil {
		return err
	}
	if w.n == 0 {
		return nil
	}
	if w.f.direct && w.made == 1 && w.n < len(w.buf) {
		// The whole file is in the first buffer (a small file): one write through the page cache costs
		// no wait for the device, which a direct write of its aligned part would.
		if err := setDirect(w.f, false); err != nil {
			err = fmt.Errorf("directio: %s: %w", w.f.Name(), err)
			w.setError(err)
			return err
		}
	}
	if w.f.direct {
		if aligned := w.n &^ (Align - 1); aligned > 0 {
			if err := w.write(w.buf[:aligned]); err != nil {
				w.setError(err)
				return err
			}
			copy(w.buf, w.buf[aligned:w.n])
			w.n -= aligned
		}
		if w.n > 0 && w.f.direct {
			if err := setDirect(w.f, false); err != nil {
				err = fmt.Errorf("directio: %s: %w", w.f.Name(), err)
				w.setError(err)
				return err
			}
		}
	}
	if err := w.write(w.buf[:w.n]); err != nil {
		w.setError(err)
		return err
	}
	w.n = 0
	return nil
}

// Reader reads a file through an aligned window, so that small sequential ReadAt calls (block headers,
// blocks) become one large read per window. It is safe for concurrent use.
type Reader struct {
	f    *File
	size int64

	mu     sync.Mutex
	win    []byte
	winOff int64
	winLen int
}

// Open opens path for reading with O_DIRECT when possible, with a 1 MiB window.
func Open(path string) (*Reader, error) {
	f, err := openFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	size, err := f.size()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Reader{f: f, size: size, win: alignedBuf(1 << 20), winOff: -1}, nil
}

// Size returns the file's size.
func (r *Reader) Size() int64 { return r.size }

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

// ReadAt implements io.ReaderAt.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("directio: negative offset")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	total := 0
	for len(p) > 0 {
		if off >= r.size {
			return total, io.EOF
		}
		if r.winOff < 0 || off < r.winOff || off >= r.winOff+int64(r.winLen) {
			if err := r.fill(off); err != nil {
				return total, err
			}
		}
		k := copy(p, r.win[off-r.winOff:r.winLen])
		p = p[k:]
		off += int64(k)
		total += k
	}
	return total, nil
}

// fill reads the window that starts at the aligned offset at or below off.
func (r *Reader) fill(off int64) error {
	start := off &^ (Align - 1)
	want := int(min(int64(len(r.win)), (r.size-start+Align-1)&^(Align-1)))
	n := 0
	for n < want {
		k, err := r.f.ReadAt(r.win[n:want], start+int64(n))
		n += k
		if err == io.EOF || (err == nil && k == 0) {
			break
		}
		if err != nil && r.f.direct && k == 0 && isInvalid(err) {
			if derr := setDirect(r.f, false); derr != nil {
				return fmt.Errorf("directio: %s: %w", r.f.Name(), derr)
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	if n == 0 {
		return io.ErrUnexpectedEOF
	}
	r.winOff, r.winLen = start, n
	return nil
}

// Buffers recycles the aligned buffers of closed Writers (NewWriterBuffers) for the next ones, so
// that a run writing thousands of small files does not make and zero a buffer for each. It holds what
// the Writers gave back: no more than they held at once. A buffer it has none of to give back is cut
// from a chunk of fresh memory that asks for transparent huge pages (bufChunk): the blocks compressed
// straight into a buffer (the HFile writer's) then fault its memory in 2 MiB at a time, not a 4 KiB
// page at a time. Safe for concurrent use; the zero value is ready.
type Buffers struct {
	mu    sync.Mutex
	free  map[int][][]byte // by length
	chunk []byte           // the rest of the current chunk, not handed out yet
}

// bufChunk is the least size of the chunks Buffers cuts new buffers from, a multiple of hugepage.Size.
// Each first touch of a 4 KiB page of fresh memory is a page fault (on a virtual machine, a trap to the
// hypervisor too): customer-order at 1M rows wrote 31 MiB of fresh output buffers, 7,900 of the run's
// 19,500 faults, ~4% of its CPU in the compressor's faults. In huge pages that is 16 faults.
const bufChunk = 8 << 20

// get returns an aligned buffer of n bytes (a multiple of Align); its contents are arbitrary.
func (p *Buffers) get(n int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[n] = l[:len(l)-1]
		return b
	}
	if len(p.chunk) < n {
		// A new chunk; the rest of the last one is left untouched (no memory of its own until written).
		p.chunk = hugeBuf(max(bufChunk, (n+hugepage.Size-1)&^(hugepage.Size-1)))
	}
	b := p.chunk[:n:n]
	p.chunk = p.chunk[n:]
	return b
}

// hugeBuf returns a zeroed buffer of n bytes (a multiple of hugepage.Size), aligned to hugepage.Size,
// for which transparent huge pages are asked (hugepage.AdviseAligned; where they are refused, it has
// small pages).
func hugeBuf(n int) []byte {
	b := alignedTo(n, hugepage.Size)
	hugepage.AdviseAligned(b)
	return b
}

// put keeps b for a later get of its length.
func (p *Buffers) put(b []byte) {
	p.mu.Lock()
	if p.free == nil {
		p.free = map[int][][]byte{}
	}
	p.free[len(b)] = append(p.free[len(b)], b[:len(b):len(b)])
	p.mu.Unlock()
}
