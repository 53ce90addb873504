package engine

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hfload/hfload/internal/directio"
)

// TestDirSinkSizes: DirSink writes what it is given whatever the size hint says (files smaller and
// larger than hinted, none), makes the family directory on the first file, refuses to overwrite a
// file, and removes an aborted one; Closed hears of every file closed, with its size, not of the
// aborted one.
func TestDirSinkSizes(t *testing.T) {
	dir := t.TempDir()
	closed := 0
	var closedAs string
	sink := DirSink{Dir: dir, Closed: func(family, name string, size int64) {
		closed++
		closedAs = fmt.Sprintf("%s/%s %d", family, name, size)
	}}
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
		if want := fmt.Sprintf("fam/%s %d", name, tc.size); closedAs != want {
			t.Fatalf("hint %d: Closed heard %q, want %q", tc.hint, closedAs, want)
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

// TestDirSinkCreateLock: DirSink creates a file only while it holds FileOptions.CreateLock, and
// releases it (a second create with the same lock goes through).
func TestDirSinkCreateLock(t *testing.T) {
	dir := t.TempDir()
	sink := DirSink{Dir: dir}
	var lock sync.Mutex
	for _, hint := range []int64{10, smallFile + 1} { // both ways of creating a file
		name := fmt.Sprintf("f%d", hint)
		lock.Lock()
		done := make(chan error, 1)
		go func() {
			f, err := sink.Create(context.Background(), "fam", name, FileOptions{SizeHint: hint, CreateLock: &lock})
			if err == nil {
				err = f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			t.Fatalf("hint %d: created while another holds the lock (%v)", hint, err)
		case <-time.After(20 * time.Millisecond):
		}
		if _, err := os.Stat(filepath.Join(dir, "fam", name)); !os.IsNotExist(err) {
			t.Fatalf("hint %d: file exists while another holds the lock (%v)", hint, err)
		}
		lock.Unlock()
		if err := <-done; err != nil {
			t.Fatalf("hint %d: %v", hint, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "fam", name)); err != nil {
			t.Fatalf("hint %d: %v", hint, err)
		}
	}
	if !lock.TryLock() {
		t.Fatal("Create kept the lock")
	}
}

// lockSink is a DirSink that records the CreateLock each family's files came with.
type lockSink struct {
	DirSink
	mu    sync.Mutex
	locks map[string]map[*sync.Mutex]bool
}

func (s *lockSink) Create(ctx context.Context, family, name string, o FileOptions) (File, error) {
	s.mu.Lock()
	if s.locks[family] == nil {
		s.locks[family] = map[*sync.Mutex]bool{}
	}
	s.locks[family][o.CreateLock] = true
	s.mu.Unlock()
	return s.DirSink.Create(ctx, family, name, o)
}

// TestLoadCreateLockPerFamily: the engine creates every file of a family with the same CreateLock,
// and the files of different families with different ones (they live in different directories), with
// and without row records (one stream writing every family's files).
func TestLoadCreateLockPerFamily(t *testing.T) {
	for _, rows := range []bool{false, true} {
		s := &lockSink{DirSink: DirSink{Dir: t.TempDir()}, locks: map[string]map[*sync.Mutex]bool{}}
		spec := testSpec(t, testCSV(10))
		spec.familyRecords = !rows
		res, err := Load(context.Background(), spec, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Files) < 6 || len(s.locks) != 2 {
			t.Fatalf("rows %v: %d files in %d families", rows, len(res.Files), len(s.locks))
		}
		var a, b *sync.Mutex
		for l := range s.locks["a"] {
			a = l
		}
		for l := range s.locks["b"] {
			b = l
		}
		if len(s.locks["a"]) != 1 || len(s.locks["b"]) != 1 || a == nil || b == nil || a == b {
			t.Fatalf("rows %v: locks by family %v", rows, s.locks)
		}
	}
}
