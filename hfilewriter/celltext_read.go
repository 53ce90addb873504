package hfilewriter

import (
	"fmt"
	"io"
)

// ReadCellText reads cell text lines (see FormatCellLine) and returns the cells sorted in HBase order
// (CompareKeys; input order kept for equal keys, which are rejected). Blank lines are skipped. Errors
// name the line number; two cells with the same key are reported with both line numbers. It reads
// all of r into memory and parses it with ParseCellText.
func ReadCellText(r io.Reader) ([]Cell, error) { return ReadCellTextLabels(r, nil) }

// ReadCellTextLabels is ReadCellText with a visibility label → ordinal map for the tags column
// (see ParseTags and ReadVisibilityLabels).
func ReadCellTextLabels(r io.Reader, labels map[string]int) ([]Cell, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading cell text: %w", err)
	}
	return ParseCellText(data, labels)
}

// WriteCells writes sorted cells (e.g. from ReadCellText) as one HFile to w.
func WriteCells(w io.Writer, cells []Cell, opts WriterOptions) (WriterStats, error) {
	hw, err := NewWriter(w, opts)
	if err != nil {
		return WriterStats{}, err
	}
	for i := range cells {
		if err := hw.Append(&cells[i]); err != nil {
			hw.Close()
			return WriterStats{}, fmt.Errorf("cell %d (%s): %w", i, cells[i].String(), err)
		}
	}
	if err := hw.Close(); err != nil {
		return WriterStats{}, err
	}
	return hw.Stats(), nil
}
