//go:build !linux

package directio

import "os"

// sysFile is an open file.
type sysFile struct{ *os.File }

// size returns the file's size as the file system reports it.
func (f *sysFile) size() (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
