//go:build linux

package directio

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"unsafe"
)

// atFDCWD is Linux's AT_FDCWD (every architecture): *at system calls resolve a relative name from the
// working directory, as the plain calls do.
const atFDCWD = -100

func openFile(path string, flag int, perm os.FileMode) (*File, error) {
	return openFileAt(atFDCWD, "", path, flag, perm)
}

// openFileAt is openFile of name relative to directory descriptor dirfd (AT_FDCWD: the working
// directory); dir is the directory's path (the file's is dir + "/" + name), or "" with name a path.
func openFileAt(dirfd int, dir, name string, flag int, perm os.FileMode) (*File, error) {
	f, err := openAt(dirfd, dir, name, flag|syscall.O_DIRECT, perm)
	if err == nil {
		return &File{sysFile: f, direct: true}, nil
	}
	if !isInvalid(err) {
		return nil, err
	}
	// The file system refuses O_DIRECT (tmpfs): ordinary I/O. Linux checks O_DIRECT support after
	// creating the file, so with O_CREATE|O_EXCL the failed open did create it (had it existed, the
	// error would have been EEXIST): remove it before trying again.
	if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		syscall.Unlinkat(dirfd, name)
	}
	f, err = openAt(dirfd, dir, name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &File{sysFile: f}, nil
}

// open is os.OpenFile for a regular file, in one system call: os.OpenFile also tries to register the
// descriptor with the network poller, which a regular file refuses (four fcntl and an epoll_ctl more,
// for every one of thousands of small HFiles), and os.NewFile checks its flags (one fcntl more).
func open(path string, flag int, perm os.FileMode) (sysFile, error) {
	return openAt(atFDCWD, "", path, flag, perm)
}

// openAt is open of name relative to directory descriptor dirfd; dir is the directory's path (the
// file's is dir + "/" + name), or "" with name a path.
func openAt(dirfd int, dir, name string, flag int, perm os.FileMode) (sysFile, error) {
	for {
		fd, err := openatName(dirfd, name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == syscall.EINTR {
			continue
		}
		f := newSysFile(fd, dir, name)
		if err != nil {
			return sysFile{fd: -1}, f.err("open", err)
		}
		return f, nil
	}
}

// openatName is syscall.Openat with a name shorter than nameBuf passed in a buffer on the stack: syscall
// copies every name to a fresh heap slice (ByteSliceFromString), one allocation for each of thousands
// of small HFiles. A longer name, or one holding a NUL (EINVAL, as syscall says), goes through syscall.
func openatName(dirfd int, name string, flag int, perm uint32) (int, error) {
	var buf [nameBuf]byte
	if len(name) >= len(buf) || strings.IndexByte(name, 0) >= 0 {
		return syscall.Openat(dirfd, name, flag, perm)
	}
	copy(buf[:], name) // NUL-terminated: buf is zero past the name
	// The buffer stays put during the call: the system call wrappers are nosplit, and the runtime does
	// not move a goroutine's stack while it is in a system call (syscall.Fstat's Stat_t works the same).
	r, _, e := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(flag), uintptr(perm), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// nameBuf is the size of openatName's stack buffer: an HFile's name and the paths of tests fit.
const nameBuf = 256

// Dir is an open directory in which files are created by name, relative to its descriptor (openat):
// the kernel then resolves one name per file instead of the directory's whole path again (about 3 µs
// of kernel time a file on the benchmark VM, for a staging directory 6 levels deep). It is safe for
// concurrent use; Close must not run while a Create does.
type Dir struct {
	f    *os.File
	fd   int
	path string
}

// OpenDir opens the directory path.
func OpenDir(path string) (*Dir, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{f: os.NewFile(uintptr(fd), path), fd: fd, path: path}, nil
}

// Create is Create of the file name in d.
func (d *Dir) Create(name string, perm os.FileMode) (*File, error) {
	return openFileAt(d.fd, d.path, name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
}

// CreateSmall is CreateSmall of the file name in d.
func (d *Dir) CreateSmall(name string, perm os.FileMode) (*File, error) {
	f, err := d.createSmall(name, perm)
	if err != nil {
		return nil, err
	}
	return &File{sysFile: f, promote: true}, nil
}

// createSmall creates the file name in d for CreateSmall.
func (d *Dir) createSmall(name string, perm os.FileMode) (sysFile, error) {
	return openAt(d.fd, d.path, name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
}

func isInvalid(err error) bool { return errors.Is(err, syscall.EINVAL) }

// setDirect turns O_DIRECT on or off for an open file.
func setDirect(f *File, on bool) error {
	if f.fd < 0 {
		return f.closedErr("fcntl")
	}
	fd := uintptr(f.fd)
	flags, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	if e != 0 {
		return e
	}
	if on {
		flags |= syscall.O_DIRECT
	} else {
		flags &^= syscall.O_DIRECT
	}
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETFL, flags); e != 0 {
		return e
	}
	f.direct = on
	return nil
}

// Close closes d. No Create may run at the same time or later.
func (d *Dir) Close() error { return d.f.Close() }

// Path returns the directory's path, as given to OpenDir.
func (d *Dir) Path() string { return d.path }
