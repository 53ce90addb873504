//go:build linux

package directio

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A Writer whose writes keep up with its filling (each buffer written before the next is full) makes
// two buffers, not WriterBuffers; one whose writes lag (a pipe no one reads yet) makes the third, and
// the file gets exactly the bytes written either way.
func TestWriterMakesBuffersWhenWritesLag(t *testing.T) {
	const size = 256 << 10
	data := make([]byte, 10*size+100)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}

	path := filepath.Join(t.TempDir(), "f")
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriterFirst(f, size, size, nil)
	for off := 0; off < len(data); off += size {
		if _, err := w.Write(data[off:min(off+size, len(data))]); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); w.started && len(w.free) == 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond) // the background writer writes the full buffer
		}
	}
	if w.made != 2 {
		t.Errorf("a Writer whose writes keep up made %d buffers, want 2", w.made)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("file differs (%d bytes read of %d, %v)", len(got), len(data), err)
	}

	// A pipe holds less than a buffer: the background writer waits for the reader, which starts only
	// once the third buffer is being filled.
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(fds[0]), "pipe")
	defer r.Close()
	w = NewWriterFirst(&File{sysFile: newSysFile(fds[1], "", "pipe")}, size, size, nil)
	const head = 2*size + 100 // the third buffer is being filled
	for off := 0; off < head; off += 100 {
		if _, err := w.Write(data[off:min(off+100, head)]); err != nil {
			t.Fatal(err)
		}
	}
	if w.made != WriterBuffers {
		t.Errorf("a Writer whose writes lag made %d buffers, want %d", w.made, WriterBuffers)
	}
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		got <- b
	}()
	if _, err := w.Write(data[head:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if b := <-got; !bytes.Equal(b, data) {
		t.Fatalf("pipe got %d bytes, differing from the %d written", len(b), len(data))
	}
}
