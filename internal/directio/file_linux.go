//go:build linux

package directio

import (
	"io"
	"os"
	"syscall"
)

// sysFile is an open regular file as its bare descriptor. An *os.File costs, for each of thousands of
// small HFiles, an fcntl (os.NewFile checks the descriptor's flags), a finalizer set and cleared, its
// full path joined up front, and the poller's descriptor locks around every call; none of them is of use
// to a regular file that one goroutine writes and closes. The descriptor must be closed with Close
// (there is no finalizer).
type sysFile struct {
	fd int // -1 after Close
	// dir and name: the file's path is dir + "/" + name when dir is set (a file created in a Dir, its
	// path joined only when asked for), name alone otherwise.
	dir, name string
}

// newSysFile returns the file of descriptor fd, at dir/name (dir set) or name.
func newSysFile(fd int, dir, name string) sysFile { return sysFile{fd: fd, dir: dir, name: name} }

// Name returns the file's path, as given when it was opened.
func (f *sysFile) Name() string {
	if f.dir != "" {
		return f.dir + "/" + f.name
	}
	return f.name
}

// err wraps a failed system call's errno as os.File does.
func (f *sysFile) err(op string, e error) error { return &os.PathError{Op: op, Path: f.Name(), Err: e} }

// closedErr is what os.File returns for a call on a closed file.
func (f *sysFile) closedErr(op string) error { return f.err(op, os.ErrClosed) }

// Write writes all of p (os.File.Write's contract: an error whenever fewer bytes were written).
func (f *sysFile) Write(p []byte) (int, error) {
	if f.fd < 0 {
		return 0, f.closedErr("write")
	}
	total := 0
	for len(p) > 0 {
		n, err := syscall.Write(f.fd, p)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return total, f.err("write", err)
		}
		if n == 0 {
			return total, f.err("write", io.ErrUnexpectedEOF)
		}
		total += n
		p = p[n:]
	}
	return total, nil
}

// ReadAt reads len(p) bytes at off (os.File.ReadAt's contract: io.EOF when the file ends first).
func (f *sysFile) ReadAt(p []byte, off int64) (int, error) {
	if f.fd < 0 {
		return 0, f.closedErr("read")
	}
	total := 0
	for len(p) > 0 {
		n, err := syscall.Pread(f.fd, p, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return total, f.err("read", err)
		}
		if n == 0 {
			return total, io.EOF
		}
		total += n
		p = p[n:]
		off += int64(n)
	}
	return total, nil
}

// size returns the file's size as fstat reports it.
func (f *sysFile) size() (int64, error) {
	if f.fd < 0 {
		return 0, f.closedErr("stat")
	}
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(f.fd, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 0, f.err("stat", err)
		}
		return st.Size, nil
	}
}

// Sync fsyncs the file.
func (f *sysFile) Sync() error {
	if f.fd < 0 {
		return f.closedErr("sync")
	}
	for {
		err := syscall.Fsync(f.fd)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return f.err("sync", err)
		}
		return nil
	}
}

// Close closes the descriptor; a second Close reports os.ErrClosed (and closes nothing: the number may
// be another file's by then).
func (f *sysFile) Close() error {
	if f.fd < 0 {
		return f.closedErr("close")
	}
	fd := f.fd
	f.fd = -1
	// Not retried on EINTR, as os.File: Linux releases the descriptor whatever close returns.
	if err := syscall.Close(fd); err != nil {
		return f.err("close", err)
	}
	return nil
}
