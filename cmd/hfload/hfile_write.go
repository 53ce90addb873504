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
// existing out as it was. An out that is not a regular file (/dev/stdout, a pipe) is written in place,
// after the whole list is parsed and sorted.
func writeCellText(path, out string, data []byte, labels map[string]int, opts hfilewriter.WriterOptions, noTags bool) (hfilewriter.WriterStats, error) {
	if fi, err := os.Stat(out); err == nil && !fi.Mode().IsRegular() {
		return writeCellTextInPlace(path, out, data, labels, opts, noTags)
	}
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
		if cells, err = parseCellList(path, data, labels, noTags); err != nil {
			return st, err
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

// writeCellTextInPlace is writeCellText for an out that cannot be renamed over or rewound.
func writeCellTextInPlace(path, out string, data []byte, labels map[string]int, opts hfilewriter.WriterOptions, noTags bool) (hfilewriter.WriterStats, error) {
	cells, err := parseCellList(path, data, labels, noTags)
	if err != nil {
		return hfilewriter.WriterStats{}, err
	}
	f, err := os.Create(out)
	if err != nil {
		return hfilewriter.WriterStats{}, err
	}
	st, err := hfilewriter.WriteCells(f, cells, opts)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return st, fmt.Errorf("%s: %w", out, err)
	}
	return st, nil
}

// parseCellList parses the whole list and sorts it (hfilewriter.ParseCellText); with noTags (HFile v2,
// --no-tags) a cell with tags is an error.
func parseCellList(path string, data []byte, labels map[string]int, noTags bool) ([]hfilewriter.Cell, error) {
	cells, err := hfilewriter.ParseCellText(data, labels)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if noTags {
		for i := range cells {
			if len(cells[i].Tags) > 0 {
				return nil, fmt.Errorf("%s: cell %s has tags, but HFile v2 (and --no-tags) cannot store tags: use --format-version 3",
					path, cells[i].String())
			}
		}
	}
	return cells, nil
}

// rewind empties f for a second attempt.
func rewind(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.Seek(0, io.SeekStart)
	return err
}
