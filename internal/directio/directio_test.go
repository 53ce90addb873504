package directio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// dirs returns the directories to test in: the test's temp dir and, where it exists, a tmpfs
// (/dev/shm), whose refusal of O_DIRECT exercises the fallback.
func dirs(t *testing.T) []string {
	out := []string{t.TempDir()}
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "directio-test-")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			out = append(out, d)
		}
	}
	return out
}

func TestWriteReadRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dir := range dirs(t) {
		for _, size := range []int{0, 1, Align - 1, Align, Align + 1, 3*Align + 17, 1<<20 + 13, 3 << 20} {
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			path := filepath.Join(dir, "f")
			os.Remove(path)
			f, err := Create(path, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			direct := f.Direct()
			w := NewWriter(f, 8<<10)
			for rest := data; len(rest) > 0; { // writes of random sizes
				k := min(len(rest), 1+rng.IntN(20000))
				if n, err := w.Write(rest[:k]); err != nil || n != k {
					t.Fatalf("%s size %d: write %d: %d, %v", dir, size, k, n, err)
				}
				rest = rest[k:]
			}
			if err := w.Close(); err != nil {
				t.Fatalf("%s size %d: close: %v", dir, size, err)
			}
			got, err := os.ReadFile(path)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s size %d (direct %v): file differs (%d bytes read, %v)", dir, size, direct, len(got), err)
			}
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Size() != int64(size) {
				t.Fatalf("Size() = %d, want %d", r.Size(), size)
			}
			for k := 0; k < 50 && size > 0; k++ {
				off := rng.IntN(size)
				n := 1 + rng.IntN(min(size-off, 70000))
				p := make([]byte, n)
				if m, err := r.ReadAt(p, int64(off)); m != n || (err != nil && err != io.EOF) || !bytes.Equal(p, data[off:off+n]) {
					t.Fatalf("%s size %d: ReadAt(%d, %d) = %d, %v, equal %v", dir, size, n, off, m, err, bytes.Equal(p[:m], data[off:off+m]))
				}
			}
			// A sequential scan, as verification reads a file.
			var scan []byte
			for off := 0; off < size; {
				n := min(size-off, []int{33, 70000, 1 << 20}[rng.IntN(3)])
				p := make([]byte, n)
				if m, err := r.ReadAt(p, int64(off)); m != n || (err != nil && err != io.EOF) {
					t.Fatalf("%s size %d: sequential ReadAt(%d, %d) = %d, %v", dir, size, n, off, m, err)
				}
				scan = append(scan, p...)
				off += n
			}
			if !bytes.Equal(scan, data) {
				t.Fatalf("%s size %d: sequential scan differs", dir, size)
			}
			p := make([]byte, 10)
			if m, err := r.ReadAt(p, int64(size)); m != 0 || err != io.EOF {
				t.Fatalf("ReadAt at the end = %d, %v; want 0, EOF", m, err)
			}
			if size > 5 {
				if m, err := r.ReadAt(p, int64(size-5)); m != 5 || err != io.EOF {
					t.Fatalf("ReadAt across the end = %d, %v; want 5, EOF", m, err)
				}
			}
			r.Close()
		}
	}
}

// TestDirectOnLinuxDisk: on Linux, a regular disk file system takes O_DIRECT (the point of the
// package); a tmpfs falls back. Where neither holds (another OS) the test only checks the fallback.
func TestDirectOnLinuxDisk(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d")
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Logf("%s: direct %v", path, f.Direct())
	if runtime.GOOS != "linux" && f.Direct() {
		t.Fatal("direct I/O reported outside Linux")
	}
	if _, err := Create(path, 0o644); err == nil {
		t.Fatal("Create of an existing file succeeded")
	}
}

// TestAvailableBuffer mixes writes built in AvailableBuffer (not copied) with ordinary ones, around and
// across the ends of the buffers, and reads back exactly what was written in order.
func TestAvailableBuffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dir := range dirs(t) {
		path := filepath.Join(dir, "f")
		f, err := Create(path, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		w := NewWriter(f, 2*Align)
		var want []byte
		lent := 0
		for i := 0; i < 400; i++ {
			n := 1 + rng.IntN(3000)
			if a := w.AvailableBuffer(); cap(a) >= n && rng.IntN(3) > 0 {
				a = a[:n]
				for j := range a {
					a[j] = byte(rng.Uint32())
				}
				want = append(want, a...)
				if k, err := w.Write(a); err != nil || k != n {
					t.Fatalf("write of %d lent bytes: %d, %v", n, k, err)
				}
				lent++
				continue
			}
			p := make([]byte, n)
			for j := range p {
				p[j] = byte(rng.Uint32())
			}
			want = append(want, p...)
			if _, err := w.Write(p); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if w.AvailableBuffer() != nil {
			t.Fatal("AvailableBuffer after Close is not nil")
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: read back %d bytes, differing from the %d written", dir, len(got), len(want))
		}
		if lent == 0 {
			t.Fatal("no write was built in the available buffer")
		}
	}
}

// TestWriterBuffersGrow writes through buffers that grow from firstBuffer to the Writer's size (and are
// replaced by larger ones as they come back), with writes built in place and copied.
func TestWriterBuffersGrow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 5<<20+123)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	path := filepath.Join(t.TempDir(), "f")
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, 1<<20)
	for rest := data; len(rest) > 0; {
		k := min(len(rest), 1+rng.IntN(100000))
		p := rest[:k]
		if rng.IntN(2) == 0 { // built in place where it fits
			if b := w.AvailableBuffer(); cap(b) >= k {
				p = append(b, p...)
			}
		}
		if n, err := w.Write(p); err != nil || n != k {
			t.Fatalf("write %d: %d, %v", k, n, err)
		}
		rest = rest[k:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("file differs (%d bytes read, %v)", len(got), err)
	}
}

// Writers sharing Buffers, one after another and two at once, write exactly their bytes (buffers come
// back with old contents), and a small file's buffer is given back at Close and taken by the next one.
func TestWriterSharedBuffers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var bufs Buffers
	dir := t.TempDir()
	write := func(name string, size int) (*Writer, []byte) {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		f, err := Create(filepath.Join(dir, name), 0o644)
		if err != nil {
			t.Fatal(err)
		}
		w := NewWriterBuffers(f, 256<<10, &bufs)
		for rest := data; len(rest) > 0; {
			k := min(len(rest), 1+rng.IntN(70000))
			if n, err := w.Write(rest[:k]); err != nil || n != k {
				t.Fatalf("%s: write %d: %d, %v", name, k, n, err)
			}
			rest = rest[k:]
		}
		return w, data
	}
	check := func(name string, w *Writer, data []byte) {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s differs (%d bytes read of %d, %v)", name, len(got), len(data), err)
		}
	}
	for i, size := range []int{3000, 1 << 20, 5, 700000, 0, 4096, 65536, 65537, 2<<20 + 17, 100} {
		a, da := write(fmt.Sprint("a", i), size)
		b, db := write(fmt.Sprint("b", i), size/3)
		check(fmt.Sprint("b", i), b, db)
		check(fmt.Sprint("a", i), a, da)
	}
	w, data := write("small1", 100)
	first := &w.buf[0]
	check("small1", w, data)
	w2, data2 := write("small2", 200)
	if &w2.buf[0] != first {
		t.Error("the next small file did not take the buffer the last one gave back")
	}
	check("small2", w2, data2)
}

// TestCreateSmall: a file created by CreateSmall is written through the page cache while it fits the
// Writer's first buffer (one write at Close) and with O_DIRECT, where the file system allows it, once
// it outgrows that buffer; either way the bytes are the ones written.
func TestCreateSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dir := range dirs(t) {
		probe, err := Create(filepath.Join(dir, "probe"), 0o644)
		if err != nil {
			t.Fatal(err)
		}
		canDirect := probe.Direct()
		probe.Close()
		for _, size := range []int{0, 100, 64<<10 - 1, 64 << 10, 64<<10 + 1, 300<<10 + 5} {
			data := make([]byte, size)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			path := filepath.Join(dir, fmt.Sprintf("small-%d", size))
			f, err := CreateSmall(path, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if f.Direct() {
				t.Fatalf("%s: created with O_DIRECT", path)
			}
			w := NewWriterFirst(f, 128<<10, 64<<10, nil)
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
			if grown := size >= 64<<10; f.Direct() != (grown && canDirect) {
				t.Errorf("%s: %d bytes written, direct %v (the file system takes O_DIRECT: %v)", path, size, f.Direct(), canDirect)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s: file differs (%d bytes read, %v)", path, len(got), err)
			}
		}
		if _, err := CreateSmall(filepath.Join(dir, "small-100"), 0o644); err == nil {
			t.Errorf("CreateSmall over an existing file succeeded")
		}
	}
}

// TestDirCreate: files created by name in an open Dir (Create, CreateSmall) are the files of its path,
// named by their whole path, hold the bytes written (O_DIRECT where the file system takes it, the
// fallback on tmpfs, leaving no file behind from the refused open), and are never created over an
// existing file.
func TestDirCreate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, dir := range dirs(t) {
		sub := filepath.Join(dir, "fam")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		d, err := OpenDir(sub)
		if err != nil {
			t.Fatal(err)
		}
		if d.Path() != sub {
			t.Fatalf("Path() = %q, want %q", d.Path(), sub)
		}
		for i, small := range []bool{false, true, false, true} {
			size := []int{3*Align + 17, 12000, 1<<20 + 5, 70 << 10}[i]
			data := make([]byte, size)
			for k := range data {
				data[k] = byte(rng.Uint32())
			}
			name := fmt.Sprintf("f%d", i)
			create := d.Create
			if small {
				create = d.CreateSmall
			}
			f, err := create(name, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(sub, name); f.Name() != want {
				t.Fatalf("Name() = %q, want %q", f.Name(), want)
			}
			w := NewWriterFirst(f, 128<<10, 64<<10, nil)
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(filepath.Join(sub, name)); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s small %v: file differs (%d bytes read, %v)", sub, small, len(got), err)
			}
			var perr *os.PathError
			if _, err := create(name, 0o644); !errors.As(err, &perr) || perr.Path != filepath.Join(sub, name) || !errors.Is(err, fs.ErrExist) {
				t.Fatalf("%s small %v: create over an existing file: %v, want its path and ErrExist", sub, small, err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		ents, err := os.ReadDir(sub)
		if err != nil || len(ents) != 4 {
			t.Fatalf("%s: %d entries (%v), want the 4 files", sub, len(ents), err)
		}
	}
	if _, err := OpenDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("OpenDir of a missing directory succeeded")
	}
}

// TestFileSizeAndClose: CloseSize reports the size written; a second Close of a file reports
// os.ErrClosed and leaves alone the descriptor number, which another file may hold by then; calls on a
// closed file fail with its path.
func TestFileSizeAndClose(t *testing.T) {
	for _, dir := range dirs(t) {
		for i, size := range []int{0, 100, 3*Align + 17, 1<<20 + 5} {
			path := filepath.Join(dir, fmt.Sprintf("s%d", i))
			create := CreateSmall
			if i%2 == 1 {
				create = Create
			}
			f, err := create(path, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			w := NewWriter(f, 64<<10)
			if _, err := w.Write(bytes.Repeat([]byte{byte(i + 1)}, size)); err != nil {
				t.Fatal(err)
			}
			got, err := w.CloseSize()
			if err != nil || got != int64(size) {
				t.Fatalf("%s: CloseSize = %d, %v, want %d", path, got, err, size)
			}
			other, err := os.Create(filepath.Join(dir, fmt.Sprintf("other%d", i))) // likely the freed number
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); !errors.Is(err, os.ErrClosed) {
				t.Fatalf("%s: second Close: %v, want ErrClosed", path, err)
			}
			if _, err := f.Write([]byte("x")); !errors.Is(err, os.ErrClosed) || !strings.Contains(err.Error(), path) {
				t.Fatalf("%s: Write after Close: %v, want ErrClosed with the path", path, err)
			}
			if _, err := other.WriteString("still open"); err != nil {
				t.Fatalf("second Close closed another file's descriptor: %v", err)
			}
			other.Close()
		}
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Open of a missing file: %v", err)
	}
}

// TestDirCreateSmallIn: a Writer made in place by CreateSmallIn holds its File itself and writes the
// file as CreateSmall and NewWriterFirst do (through the page cache while it fits its first buffer,
// O_DIRECT on after that where the file system takes it); a failed create leaves the Writer zero.
func TestDirCreateSmallIn(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, dir := range dirs(t) {
		d, err := OpenDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for i, size := range []int{0, 100, 12000, 64 << 10, 70 << 10, 1<<20 + 5} {
			data := make([]byte, size)
			for k := range data {
				data[k] = byte(rng.Uint32())
			}
			name := fmt.Sprintf("in%d", i)
			var w Writer
			if err := d.CreateSmallIn(&w, name, 0o644, 128<<10, 64<<10, nil); err != nil {
				t.Fatal(err)
			}
			if w.f != &w.own || !w.own.promote || w.own.direct || len(w.buf) != 64<<10 {
				t.Fatalf("%s: Writer not made in place with its own small File and a 64 KiB buffer", name)
			}
			if want := filepath.Join(dir, name); w.f.Name() != want {
				t.Fatalf("Name() = %q, want %q", w.f.Name(), want)
			}
			if _, err := w.Write(data); err != nil {
				t.Fatal(err)
			}
			if got, err := w.CloseSize(); err != nil || got != int64(size) {
				t.Fatalf("%s: CloseSize = %d, %v, want %d", name, got, err, size)
			}
			if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s %s: file differs (%d bytes read, %v)", dir, name, len(got), err)
			}
			var again Writer
			if err := d.CreateSmallIn(&again, name, 0o644, 128<<10, 64<<10, nil); !errors.Is(err, fs.ErrExist) {
				t.Fatalf("%s: CreateSmallIn over an existing file: %v, want ErrExist", name, err)
			}
			if again.f != nil || again.buf != nil || again.own.name != "" {
				t.Fatalf("%s: a failed CreateSmallIn changed the Writer", name)
			}
		}
		d.Close()
	}
}

// Buffers cuts the buffers it has none of to give back from chunks: each is aligned, of the length
// asked, with no capacity past it (an append cannot run into the next one), and no two held at once
// overlap, whether they share a chunk, a request is larger than a chunk or the chunk's rest is too
// short; a buffer given back is the next one of its length.
func TestBuffersChunks(t *testing.T) {
	var bufs Buffers
	type span struct{ lo, hi uintptr }
	var held []span
	sizes := []int{64 << 10, 128 << 10, 4 << 20, 3 << 20, bufChunk + Align, Align, 1536 << 10, bufChunk, 64 << 10}
	for _, n := range sizes {
		b := bufs.get(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("get(%d): len %d cap %d", n, len(b), cap(b))
		}
		lo := uintptr(unsafe.Pointer(&b[0]))
		if lo%Align != 0 {
			t.Fatalf("get(%d) at %#x: not aligned", n, lo)
		}
		s := span{lo, lo + uintptr(n)}
		for _, h := range held {
			if s.lo < h.hi && h.lo < s.hi {
				t.Fatalf("get(%d) at [%#x, %#x) overlaps a held buffer at [%#x, %#x)", n, s.lo, s.hi, h.lo, h.hi)
			}
		}
		held = append(held, s)
		for i := range b { // every byte writable
			b[i] = byte(i)
		}
	}
	b := bufs.get(1536 << 10)
	bufs.put(b)
	if c := bufs.get(1536 << 10); &c[0] != &b[0] {
		t.Error("a buffer given back was not the next one of its length")
	}
}
