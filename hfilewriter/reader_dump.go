package hfilewriter

import (
	"bufio"
	"fmt"
	"io"

	"github.com/hfload/hfload/internal/kv"
)

// DumpCellText writes every cell of the file as one FormatCellLine line (the format ReadCellText
// reads), so a dump can be written back with the same cells. It returns the number of cells written.
func (r *Reader) DumpCellText(w io.Writer) (int64, error) { return r.DumpCellTextLabels(w, nil) }

// DumpCellTextLabels is DumpCellText with visibility tags printed as expressions over the label
// names in labels (label → ordinal; see FormatTagsLabels).
func (r *Reader) DumpCellTextLabels(w io.Writer, labels map[string]int) (int64, error) {
	bw := bufio.NewWriter(w)
	it := r.Iter()
	var n int64
	for it.Next() {
		if _, err := bw.WriteString(kv.FormatCellLineLabels(it.Cell(), labels)); err != nil {
			return n, fmt.Errorf("writing cell %d: %w", n, err)
		}
		if err := bw.WriteByte('\n'); err != nil {
			return n, fmt.Errorf("writing cell %d: %w", n, err)
		}
		n++
	}
	if err := it.Err(); err != nil {
		return n, err
	}
	if err := bw.Flush(); err != nil {
		return n, fmt.Errorf("writing cells: %w", err)
	}
	return n, nil
}
