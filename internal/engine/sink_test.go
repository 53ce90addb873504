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
	}{{0, 5 << 20}, {1000, 100}, {1000, 300 << 10}, {200 << 10, 150 << 10}, {smallFile + 1, 70 << 10},
		{16 << 20, 5 << 20}, {16 << 20, 100}, {16 << 20, 0}} {
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
	if closed != 8 {
		t.Fatalf("Closed called %d times for 8 files closed and one aborted", closed)
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

// lockSink is a DirSink that records the CreateLock and Dir each family's files came with.
type lockSink struct {
	DirSink
	mu    sync.Mutex
	locks map[string]map[*sync.Mutex]bool
	dirs  map[string]map[*FamilyDir]bool
}

func (s *lockSink) Create(ctx context.Context, family, name string, o FileOptions) (File, error) {
	s.mu.Lock()
	if s.locks[family] == nil {
		s.locks[family] = map[*sync.Mutex]bool{}
	}
	s.locks[family][o.CreateLock] = true
	if s.dirs[family] == nil {
		s.dirs[family] = map[*FamilyDir]bool{}
	}
	s.dirs[family][o.Dir] = true
	s.mu.Unlock()
	return s.DirSink.Create(ctx, family, name, o)
}

// TestLoadCreateLockPerFamily: the engine creates every file of a family with the same CreateLock and
// Dir, and the files of different families with different ones (they live in different directories),
// with and without row records (one stream writing every family's files); when Load returns, no
// family directory is held open.
func TestLoadCreateLockPerFamily(t *testing.T) {
	for _, rows := range []bool{false, true} {
		s := &lockSink{DirSink: DirSink{Dir: t.TempDir()}, locks: map[string]map[*sync.Mutex]bool{},
			dirs: map[string]map[*FamilyDir]bool{}}
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
		var da, db *FamilyDir
		for d := range s.dirs["a"] {
			da = d
		}
		for d := range s.dirs["b"] {
			db = d
		}
		if len(s.dirs["a"]) != 1 || len(s.dirs["b"]) != 1 || da == nil || db == nil || da == db {
			t.Fatalf("rows %v: dirs by family %v", rows, s.dirs)
		}
		if da.dir != nil || db.dir != nil || !da.closed || !db.closed {
			t.Fatalf("rows %v: family directories left open (%v, %v) or not closed (%v, %v)", rows, da.dir, db.dir, da.closed, db.closed)
		}
	}
}

// TestDirSinkFamilyDir: with FileOptions.Dir (and CreateLock), DirSink keeps the family's directory
// open after its first create and creates the next files relative to it, with the same bytes and
// names as by path; a family directory removed under it is made again by path; after Close, files
// are created by path and nothing is kept open.
func TestDirSinkFamilyDir(t *testing.T) {
	dir := t.TempDir()
	sink := DirSink{Dir: dir}
	var lock sync.Mutex
	var fd FamilyDir
	famDir := filepath.Join(dir, "fam")
	write := func(name string, hint int64, size int) {
		t.Helper()
		data := bytes.Repeat([]byte(name+"|"), size/(len(name)+1)+1)[:size]
		writeSinkFile(t, sink, name, FileOptions{SizeHint: hint, CreateLock: &lock, Dir: &fd}, data)
		if got, err := os.ReadFile(filepath.Join(famDir, name)); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: file differs (%d bytes read, %v)", name, len(got), err)
		}
		if _, err := sink.Create(context.Background(), "fam", name, FileOptions{SizeHint: hint, CreateLock: &lock, Dir: &fd}); err == nil {
			t.Fatalf("%s: created over an existing file", name)
		}
	}
	write("first", 100, 12000)
	if fd.dir == nil || fd.dir.Path() != famDir {
		t.Fatalf("after the first create the family directory is not kept (%v)", fd.dir)
	}
	kept := fd.dir
	write("small", 100, 12000)
	write("large", smallFile+1, 3<<20)
	if fd.dir != kept {
		t.Fatal("the kept directory changed between creates")
	}
	// Files created through the kept directory land in it: moving it aside shows where they went.
	aside := filepath.Join(dir, "aside")
	if err := os.Rename(famDir, aside); err != nil {
		t.Fatal(err)
	}
	f, err := sink.Create(context.Background(), "fam", "moved", FileOptions{SizeHint: 100, CreateLock: &lock, Dir: &fd})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(aside, "moved")); err != nil {
		t.Fatalf("not created through the kept directory: %v", err)
	}
	// A family directory gone (removed) is made again by path, and kept anew.
	if err := os.RemoveAll(aside); err != nil {
		t.Fatal(err)
	}
	write("again", 100, 5000)
	if fd.dir == nil || fd.dir == kept {
		t.Fatalf("the remade directory is not kept (%v)", fd.dir)
	}
	lock.Lock()
	fd.Close()
	lock.Unlock()
	if fd.dir != nil {
		t.Fatal("Close left the directory open")
	}
	write("closed", 100, 5000)
	if fd.dir != nil {
		t.Fatal("a create after Close kept the directory")
	}
	ents, err := os.ReadDir(famDir)
	if err != nil || len(ents) != 2 {
		t.Fatalf("%d entries in the remade family directory (%v), want again and closed", len(ents), err)
	}
}

// TestDirSinkFamilyDirBases: a FamilyDir remembers whether the last output directory it saw is clean
// (FamilyDir.cleanDir); sinks with other directories, clean or not, used with it in turn still create
// each file at filepath.Join(Dir, family, name) and report that path.
func TestDirSinkFamilyDirBases(t *testing.T) {
	root := t.TempDir()
	var lock sync.Mutex
	var fd FamilyDir
	bases := []string{
		filepath.Join(root, "a"), filepath.Join(root, "a") + "/", root + "/x/../b", filepath.Join(root, "a"),
		root + "//c", filepath.Join(root, "c"), root + "/./a", filepath.Join(root, "b"), filepath.Join(root, "a"),
	}
	for i, base := range bases {
		for j := 0; j < 2; j++ {
			name := fmt.Sprintf("f%d-%d", i, j)
			f, err := DirSink{Dir: base}.Create(context.Background(), "fam", name, FileOptions{SizeHint: 100, CreateLock: &lock, Dir: &fd})
			if err != nil {
				t.Fatalf("%s: %v", base, err)
			}
			if got, want := f.(*dirFile).path(), filepath.Join(base, "fam", name); got != want {
				t.Fatalf("%s: file path %q, want %q", base, got, want)
			}
			if j == 1 { // Abort removes the file at that path
				f.Abort()
				if _, err := os.Stat(filepath.Join(base, "fam", name)); !os.IsNotExist(err) {
					t.Fatalf("%s: aborted file still there (%v)", base, err)
				}
			} else if err := f.Close(); err != nil {
				t.Fatal(err)
			} else if _, err := os.Stat(filepath.Join(base, "fam", name)); err != nil {
				t.Fatalf("%s: %v", base, err)
			}
			if fd.base != base || fd.clean != cleanSlashDir(base) {
				t.Fatalf("%s: remembers %q clean=%v, cleanSlashDir says %v", base, fd.base, fd.clean, cleanSlashDir(base))
			}
		}
	}
	for _, dir := range []string{"", "/", "a", "/a/b", "a/", "a//b", "./a", "a/.", "../a", "a/..", "/a/./b", "/a/../b", "/a/b/"} {
		var f FamilyDir
		for k := 0; k < 2; k++ {
			if got, want := f.cleanDir(dir), cleanSlashDir(dir); got != want {
				t.Fatalf("cleanDir(%q) = %v (call %d), cleanSlashDir says %v", dir, got, k, want)
			}
		}
		if got, want := fd.cleanDir(dir), cleanSlashDir(dir); got != want {
			t.Fatalf("cleanDir(%q) after %q = %v, cleanSlashDir says %v", dir, bases[len(bases)-1], got, want)
		}
	}
	lock.Lock()
	fd.Close()
	lock.Unlock()
}

// TestIsJoin: isJoin(p, dir, name) is p == dir + "/" + name.
func TestIsJoin(t *testing.T) {
	for _, p := range []string{"", "/", "a", "/a/fam", "/a/famx", "/a/fa", "/ab/fam", "/a//fam", "/a/fam/", "/b/fam", "/a-fam"} {
		for _, dir := range []string{"", "/a", "/ab", "/a/", "a"} {
			for _, name := range []string{"", "fam", "fa", "famx"} {
				if got, want := isJoin(p, dir, name), p == dir+"/"+name; got != want {
					t.Fatalf("isJoin(%q, %q, %q) = %v, want %v", p, dir, name, got, want)
				}
			}
		}
	}
}

// TestDirSinkSmallFileOneAllocation: a small file created through a kept family directory, with
// recycled buffers, costs one allocation from Create to Close: its dirFile, which holds its Writer and
// the Writer its File (directio.Dir.CreateSmallIn), and a name passed to the kernel from the stack.
func TestDirSinkSmallFileOneAllocation(t *testing.T) {
	dir := t.TempDir()
	sink := DirSink{Dir: dir}
	var lock sync.Mutex
	var fd FamilyDir
	var bufs directio.Buffers
	names := make([]string, 40)
	for i := range names {
		names[i] = fmt.Sprintf("%032x", i)
	}
	data := bytes.Repeat([]byte("0123456789"), 300)
	next := 0
	create := func() {
		writeSinkFile(t, sink, names[next], FileOptions{SizeHint: 3000, CreateLock: &lock, Dir: &fd, Buffers: &bufs}, data)
		next++
	}
	create() // makes the family directory and keeps it, and the first buffer
	if a := testing.AllocsPerRun(20, create); a != 1 {
		t.Fatalf("%v allocations a small file, want 1", a)
	}
	for _, name := range names[:next] {
		if got, err := os.ReadFile(filepath.Join(dir, "fam", name)); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s: file differs (%d bytes read, %v)", name, len(got), err)
		}
	}
}

// writeSinkFile creates family "fam"'s file name in sink with o, writes data and closes it, failing t
// on any error.
func writeSinkFile(t *testing.T, sink DirSink, name string, o FileOptions, data []byte) {
	t.Helper()
	f, err := sink.Create(context.Background(), "fam", name, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestDirSinkFirstBuffer: a file's first write buffer is 64 KiB without a size hint and for a file
// hinted at less than WriterBuffers buffers of the full size (it grows from there), fits a small file's
// hint, and is of the full size for a file hinted to fill all its buffers.
func TestDirSinkFirstBuffer(t *testing.T) {
	sink := DirSink{Dir: t.TempDir()}
	const size = 1 << 20
	for i, c := range []struct {
		hint  int64
		first int
	}{{0, 64 << 10}, {100, 64 << 10}, {300 << 10, 512 << 10}, {2 << 20, 64 << 10}, {3<<20 - 1, 64 << 10}, {3 << 20, size}, {1 << 30, size}} {
		var bufs directio.Buffers
		f, err := sink.Create(context.Background(), "fam", fmt.Sprint("b", i), FileOptions{BufferSize: size, Buffers: &bufs, SizeHint: c.hint})
		if err != nil {
			t.Fatal(err)
		}
		if got := cap(f.(*dirFile).AvailableBuffer()); got != c.first {
			t.Errorf("hint %d: first buffer %d bytes, want %d", c.hint, got, c.first)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
