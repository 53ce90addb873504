package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hfload/hfload/internal/directio"
)

// Sink is where Load writes its HFiles: one File per Create, named <family>/<name> (the layout
// HBase's bulk load reads). Create is called from several goroutines at once. DirSink writes to a
// local directory; an object store or a distributed runner's work unit implements its own.
type Sink interface {
	Create(ctx context.Context, family, name string, o FileOptions) (File, error)
}

// BufferingSink is a Sink whose files hold buffers of their own instead of the engine's write buffer
// (an object store's upload parts: filled while earlier parts are sent). FileMemory is the most one
// open file holds; the engine reserves it from Spec.Memory for every file written at once, and writes
// fewer files at once when their buffers would take more than a quarter of the budget.
type BufferingSink interface {
	Sink
	FileMemory() int64
}

// FileOptions are what the engine tells a Sink about a file it creates.
type FileOptions struct {
	// BufferSize is the write buffer the engine has budgeted for the file, in bytes (reserved from
	// Spec.Memory; 0: the sink's own default).
	BufferSize int
	// Buffers, if set, is where a sink that writes through directio takes its buffers from and gives
	// them back when the file is closed (one per run: files of few rows then cost no fresh buffer).
	Buffers *directio.Buffers
	// SizeHint is about how many bytes the engine expects the file to hold (0: unknown). DirSink
	// writes files expected to be small in one write at Close (smallFile).
	SizeHint int64
	// CreateLock, if set, is held by a sink that creates the file in a directory (DirSink) while it
	// creates it: the engine passes one per family, so that its write workers take turns creating
	// files in a family's directory (nil: no turns). The kernel serialises creates in one directory
	// anyway, on the directory's inode lock, and a thread waiting for that lock spins on its processor
	// while the holder creates (rwsem_spin_on_owner: ~90 ms of CPU per 10,000 files on the benchmark
	// VM); a goroutine waiting for the mutex parks, and its processor runs other goroutines meanwhile.
	CreateLock *sync.Mutex
	// Dir, if set with CreateLock, is where a sink that creates the file in a directory per family
	// (DirSink) keeps that directory open, under CreateLock, for the family's next files: it creates
	// them relative to it (openat) instead of resolving the directory's whole path for each file. The
	// engine passes one per family, with the family's CreateLock, and closes it after the last create.
	Dir *FamilyDir
}

// FamilyDir is a family's output directory kept open between the creates of its files
// (FileOptions.Dir). The zero value holds nothing. It is used under the family's CreateLock only.
type FamilyDir struct {
	dir    *directio.Dir
	closed bool

	// base is the last output directory cleanSlashDir was asked about for this family, clean its
	// answer: the sink's directory is the same for every file, and the check walked its whole path
	// for each of them (cleanDir).
	base  string
	clean bool
}

// cleanDir is cleanSlashDir(dir), remembered for the last dir asked about.
func (f *FamilyDir) cleanDir(dir string) bool {
	if f.base != dir {
		f.base, f.clean = dir, cleanSlashDir(dir)
	}
	return f.clean
}

// Close closes the directory held, if any; later creates resolve the whole path again. The caller
// holds the family's CreateLock. A directory opened for reading has nothing to lose at its close:
// its error is not reported.
func (f *FamilyDir) Close() {
	f.closed = true
	f.drop()
}

// drop closes the directory held, if any.
func (f *FamilyDir) drop() {
	if f.dir != nil {
		f.dir.Close()
		f.dir = nil
	}
}

// keep opens and holds the directory path after a create by path in it, unless it holds path already
// or is closed. Should the open fail, the next creates go by path, as without a FamilyDir.
func (f *FamilyDir) keep(path string) {
	if f.closed || (f.dir != nil && f.dir.Path() == path) {
		return
	}
	f.drop()
	if dir, err := directio.OpenDir(path); err == nil {
		f.dir = dir
	}
}

// File is one HFile being written. The engine writes it sequentially and then calls exactly one of
// Close (the file is complete: durability and visibility are the caller's commit, not the sink's) or
// Abort (the file is discarded, as far as the sink can).
type File interface {
	io.Writer
	Close() error
	Abort()
}

// Reopener is a Sink that can read back a file it wrote: Load needs it for VerifyBlocks and
// VerifyFull, which re-read every file.
type Reopener interface {
	Open(family, name string) (ReadFile, error)
}

// ReadFile is a file read back through a Reopener.
type ReadFile interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// DirSink writes files to Dir/<family>/<name>, around the page cache where the file system allows
// (internal/directio). It does not fsync: committing (fsync, rename) is the caller's.
type DirSink struct {
	Dir string
	// Closed, if set, is called after each file is closed complete (from the goroutine that wrote it;
	// several at once) with its family, name and size: the bytes the file system accepted for it (the
	// results of its writes; the file was created empty and only this file's writer wrote it), which is
	// what a stat of its path says: e.g. to start writing files back in batches before a commit syncs
	// them, and to check the commit's manifest against the sizes without a stat of every path.
	Closed func(family, name string, size int64)
}

// defaultFileBuffer is a DirSink file's write buffer when FileOptions.BufferSize is 0.
const defaultFileBuffer = 1 << 20

// Create creates Dir/<family>/<name> (and its family directory).
func (d DirSink) Create(_ context.Context, family, name string, o FileOptions) (File, error) {
	size := o.BufferSize
	if size <= 0 {
		size = defaultFileBuffer
	}
	// The dirFile holds its Writer, and a small file's Writer its File (directio.Dir.CreateSmallIn):
	// one allocation for the three, for each of thousands of small files.
	f := &dirFile{dir: d.Dir, family: family, name: name, closed: d.Closed}
	small, first := o.SizeHint > 0 && o.SizeHint <= smallFile, 0
	switch {
	case small:
		// One write through the page cache at Close, with no O_DIRECT to switch off for its tail and
		// no background writer (a file larger than expected goes on with O_DIRECT).
		first = 64 << 10
		for int64(first) < o.SizeHint && first < size {
			first *= 2
		}
	case o.SizeHint >= directio.WriterMemory(size):
		// A file expected to fill every buffer of the largest size starts with one: its buffers would
		// grow to that size anyway, and each smaller one it made on the way (64 KiB to half the size,
		// about as much memory again as one buffer) would be fresh memory used for one write and then
		// left in o.Buffers, unused while files this large are written (customer-order at 1M rows: 5
		// files at once, 10 of the 31 MiB of output buffers).
		first = size
	}
	if err := d.create(o, family, name, small, &f.Writer, size, first); err != nil {
		return nil, fmt.Errorf("output: %w", err)
	}
	return f, nil
}

// create creates <family>/<name> under d.Dir (small: with directio.CreateSmall), at
// joinFile(d.Dir, family, name), holding o.CreateLock if set; with o.Dir set too, relative to the
// family's directory held there. It makes w, a zero Writer, the file's:
// directio.InitWriterFirst(w, file, size, first, o.Buffers).
func (d DirSink) create(o FileOptions, family, name string, small bool, w *directio.Writer, size, first int) error {
	f, err := d.createFile(o, family, name, small, w, size, first)
	if err == nil && f != nil {
		directio.InitWriterFirst(w, f, size, first, o.Buffers)
	}
	return err
}

// createFile is create's file, or none when it has made w itself (directio.Dir.CreateSmallIn).
func (d DirSink) createFile(o FileOptions, family, name string, small bool, w *directio.Writer, size, first int) (*directio.File, error) {
	how, howIn := directio.Create, (*directio.Dir).Create
	if small {
		how, howIn = directio.CreateSmall, (*directio.Dir).CreateSmall
	}
	if o.CreateLock == nil {
		return create(joinFile(d.Dir, family, name), how)
	}
	o.CreateLock.Lock()
	defer o.CreateLock.Unlock()
	if o.Dir == nil || !(filepath.Separator == '/' && plainName(family) && plainName(name) && o.Dir.cleanDir(d.Dir)) {
		return create(joinFile(d.Dir, family, name), how)
	}
	// plainJoin: the file's path is d.Dir + "/" + family + "/" + name, filepath.Join's result; it is
	// joined only when no family directory is held (the first file of a family).
	if dir := o.Dir.dir; dir != nil && isJoin(dir.Path(), d.Dir, family) {
		var f *directio.File
		var err error
		if small {
			err = dir.CreateSmallIn(w, name, 0o644, size, first, o.Buffers)
		} else {
			f, err = howIn(dir, name, 0o644)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
		o.Dir.drop() // the directory is gone: make it again by path, as the first create does
	}
	famDir := d.Dir + "/" + family
	f, err := create(famDir+"/"+name, how)
	if err == nil {
		o.Dir.keep(famDir)
	}
	return f, err
}

// isJoin reports whether p is dir + "/" + name, without joining them.
func isJoin(p, dir, name string) bool {
	return len(p) == len(dir)+1+len(name) && p[len(dir)] == '/' && p[:len(dir)] == dir && p[len(dir)+1:] == name
}

// joinFile is filepath.Join(dir, family, name) without cleaning the whole path again for each of
// thousands of files when dir is clean already and family and name are plain names (Clean of the
// joined path costs about 2,400 instructions a file).
func joinFile(dir, family, name string) string {
	if plainJoin(dir, family, name) {
		return dir + "/" + family + "/" + name
	}
	return filepath.Join(dir, family, name)
}

// plainJoin reports whether dir + "/" + family + "/" + name is filepath.Join(dir, family, name).
func plainJoin(dir, family, name string) bool {
	return filepath.Separator == '/' && plainName(family) && plainName(name) && cleanSlashDir(dir)
}

// plainName reports whether s is one path element other than "." and "..".
func plainName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsRune(s, '/')
}

// cleanSlashDir reports whether dir (with '/' separators) is its own filepath.Clean and not the root:
// no empty, "." or ".." element and no trailing slash. It may say false for a clean dir (one with a
// leading ".." element); joinFile then takes filepath.Join.
func cleanSlashDir(dir string) bool {
	if dir == "" || dir == "/" || dir[len(dir)-1] == '/' {
		return false
	}
	start := 0
	if dir[0] == '/' {
		start = 1
	}
	for i := start; i <= len(dir); i++ {
		if i < len(dir) && dir[i] != '/' {
			continue
		}
		if e := dir[start:i]; e == "" || e == "." || e == ".." {
			return false
		}
		start = i + 1
	}
	return true
}

// create creates path with how, making its directory first if it does not exist yet (once per family:
// not a stat of the directory before every file).
func create(path string, how func(string, os.FileMode) (*directio.File, error)) (*directio.File, error) {
	f, err := how(path, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		f, err = how(path, 0o644)
	}
	return f, err
}

// smallFile is the largest FileOptions.SizeHint for which DirSink writes a file as a small one.
const smallFile = 1 << 20

// Open opens Dir/<family>/<name> for reading, around the page cache too: the bytes were written that
// way and are read once.
func (d DirSink) Open(family, name string) (ReadFile, error) {
	return directio.Open(filepath.Join(d.Dir, family, name))
}

// dirFile is a DirSink file. It keeps directio.Writer's AvailableBuffer, so that the HFile writer
// builds blocks in the write buffer.
type dirFile struct {
	directio.Writer
	dir, family, name string                                // the file is joinFile(dir, family, name)
	closed            func(family, name string, size int64) // DirSink.Closed
}

// path returns the file's path (joined when asked for: only Abort needs it).
func (f *dirFile) path() string { return joinFile(f.dir, f.family, f.name) }

// Close closes the file and tells DirSink.Closed.
func (f *dirFile) Close() error {
	if f.closed == nil {
		return f.Writer.Close()
	}
	size, err := f.Writer.CloseSize()
	if err == nil {
		f.closed(f.family, f.name, size)
	}
	return err
}

func (f *dirFile) Abort() {
	f.Writer.Close()
	os.Remove(f.path())
}
