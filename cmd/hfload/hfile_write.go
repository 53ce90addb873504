package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hfload/hfload/hfilewriter"
)

// writeCellText is `hfload hfile write`'s work: the cell list data (read from path) as the HFile out.
// Sorted, valid text (the usual export) is parsed on every core while it is written
// (hfilewriter.WriteSortedCellText); any other text is parsed whole, sorted and checked
// (ParseCellText, WriteCells), with the errors the command always gave. The file is written under a
// temporary name beside out and renamed when complete: an error leaves no partial file, and an
// existing out as it was.
func writeCellText(path, out string, data []byte, labels map[string]int, opts hfilewriter.WriterOptions, noTags bool) (hfilewriter.WriterStats, error) {
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return hfilewriter.WriterStats{}, err
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	st, err := hfilewriter.WriteSortedCellText(f, data, labels, opts)
	if errors.Is(err, hfilewriter.ErrNotSortedText) {
		if err := rewind(f); err != nil {
			return st, fmt.Errorf("%s: %w", out, err)
		}
		var cells []hfilewriter.Cell
		if cells, err = hfilewriter.ParseCellText(data, labels); err != nil {
			return st, fmt.Errorf("%s: %w", path, err)
		}
		if noTags {
			for i := range cells {
				if len(cells[i].Tags) > 0 {
					return st, fmt.Errorf("%s: cell %s has tags, but HFile v2 (and --no-tags) cannot store tags: use --format-version 3",
						path, cells[i].String())
				}
			}
		}
		st, err = hfilewriter.WriteCells(f, cells, opts)
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, out)
	}
	if err != nil {
		return st, fmt.Errorf("%s: %w", out, err)
	}
	done = true
	return st, nil
}

// rewind empties f for a second attempt.
func rewind(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}
