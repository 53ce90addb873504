//go:build !linux

package directio

import (
	"os"
	"path/filepath"
)

func openFile(path string, flag int, perm os.FileMode) (*File, error) {
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return &File{sysFile: sysFile{f}}, nil
}

func open(path string, flag int, perm os.FileMode) (sysFile, error) {
	f, err := os.OpenFile(path, flag, perm)
	return sysFile{f}, err
}

func isInvalid(error) bool { return false }

func setDirect(f *File, on bool) error { f.direct = false; return nil }

// Dir is an open directory in which files are created by name. On this system it holds the
// directory's path only, and files are created by their whole path.
type Dir struct {
	path string
}

// OpenDir opens the directory path.
func OpenDir(path string) (*Dir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &os.PathError{Op: "open", Path: path, Err: os.ErrInvalid}
	}
	return &Dir{path: path}, nil
}

// Create is Create of the file name in d.
func (d *Dir) Create(name string, perm os.FileMode) (*File, error) {
	return Create(filepath.Join(d.path, name), perm)
}

// CreateSmall is CreateSmall of the file name in d.
func (d *Dir) CreateSmall(name string, perm os.FileMode) (*File, error) {
	return CreateSmall(filepath.Join(d.path, name), perm)
}

// createSmall creates the file name in d for CreateSmall.
func (d *Dir) createSmall(name string, perm os.FileMode) (sysFile, error) {
	return open(filepath.Join(d.path, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
}

// Close closes d.
func (d *Dir) Close() error { return nil }

// Path returns the directory's path, as given to OpenDir.
func (d *Dir) Path() string { return d.path }
