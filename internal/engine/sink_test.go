package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hfload/hfload/internal/directio"
)

// TestDirSinkSizes: DirSink writes what it is given whatever the size hint says (files smaller and
// larger than hinted, none), makes the family directory on the first file, refuses to overwrite a
// file, and removes an aborted one; Closed hears of every file closed, not of the aborted one.
func TestDirSinkSizes(t *testing.T) {
	dir := t.TempDir()
	closed := 0
	sink := DirSink{Dir: dir, Closed: func() { closed++ }}
	var bufs directio.Buffers
	for i, tc := range []struct {
		hint int64
		size int
	}{{0, 5 << 20}, {1000, 100}, {1000, 300 << 10}, {200 << 10, 150 << 10}, {smallFile + 1, 70 << 10}} {
		data := bytes.Repeat([]byte(fmt.Sprintf("%07d|", i)), tc.size/8+1)[:tc.size]
		name := fmt.Sprintf("f%d", i)
		f, err := sink.Create(context.Background(), "fam", name, FileOptions{BufferSize: 128 << 10, Buffers: &bufs, SizeHint: tc.hint})
		if err != nil {
			t.Fatal(err)
		}
		for rest := data; len(rest) > 0; {
			k := min(len(rest), 10000)
			if _, err := f.Write(rest[:k]); err != nil {
				t.Fatal(err)
			}
			rest = rest[k:]
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if closed != i+1 {
			t.Fatalf("hint %d: Closed called %d times after %d files", tc.hint, closed, i+1)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "fam", name)); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("hint %d, %d bytes: file differs (%d read, %v)", tc.hint, tc.size, len(got), err)
		}
		if _, err := sink.Create(context.Background(), "fam", name, FileOptions{SizeHint: tc.hint}); err == nil {
			t.Fatalf("hint %d: created over an existing file", tc.hint)
		}
	}
	f, err := sink.Create(context.Background(), "other", "gone", FileOptions{SizeHint: 10})
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("partial"))
	f.Abort()
	if closed != 5 {
		t.Fatalf("Closed called %d times for 5 files closed and one aborted", closed)
	}
	if _, err := os.Stat(filepath.Join(dir, "other", "gone")); !os.IsNotExist(err) {
		t.Fatalf("aborted file: %v", err)
	}
}
