//go:build !linux

package directio

import "os"

func openFile(path string, flag int, perm os.FileMode) (*File, error) {
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return &File{File: f}, nil
}

func open(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag, perm)
}

func isInvalid(error) bool { return false }

func setDirect(f *File, on bool) error { f.direct = false; return nil }
