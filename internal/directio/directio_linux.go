//go:build linux

package directio

import (
	"errors"
	"os"
	"syscall"
)

func openFile(path string, flag int, perm os.FileMode) (*File, error) {
	f, err := open(path, flag|syscall.O_DIRECT, perm)
	if err == nil {
		return &File{File: f, direct: true}, nil
	}
	if !isInvalid(err) {
		return nil, err
	}
	// The file system refuses O_DIRECT (tmpfs): ordinary I/O. Linux checks O_DIRECT support after
	// creating the file, so with O_CREATE|O_EXCL the failed open did create it (had it existed, the
	// error would have been EEXIST): remove it before trying again.
	if flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL {
		os.Remove(path)
	}
	f, err = open(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return &File{File: f}, nil
}

// open is os.OpenFile for a regular file, in one system call: os.OpenFile also tries to register the
// descriptor with the network poller, which a regular file refuses (four fcntl and an epoll_ctl more,
// for every one of thousands of small HFiles).
func open(path string, flag int, perm os.FileMode) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), path), nil
	}
}

func isInvalid(err error) bool { return errors.Is(err, syscall.EINVAL) }

// setDirect turns O_DIRECT on or off for an open file.
func setDirect(f *File, on bool) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	err = rc.Control(func(fd uintptr) {
		flags, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		if e != 0 {
			ferr = e
			return
		}
		if on {
			flags |= syscall.O_DIRECT
		} else {
			flags &^= syscall.O_DIRECT
		}
		if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETFL, flags); e != 0 {
			ferr = e
		}
	})
	if err != nil {
		return err
	}
	if ferr != nil {
		return ferr
	}
	f.direct = on
	return nil
}
