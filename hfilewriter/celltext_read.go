package hfilewriter

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hfload/hfload/internal/kv"
)

// ReadCellText reads cell text lines (see FormatCellLine) and returns the cells sorted in HBase order
// (CompareKeys; input order kept for equal keys, which are rejected). Blank lines are skipped. Errors
// name the line number; two cells with the same key are reported with both line numbers.
func ReadCellText(r io.Reader) ([]Cell, error) { return ReadCellTextLabels(r, nil) }

// ReadCellTextLabels is ReadCellText with a visibility label → ordinal map for the tags column
// (see ParseTags and ReadVisibilityLabels).
func ReadCellTextLabels(r io.Reader, labels map[string]int) ([]Cell, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	var cells []Cell
	var lines []int
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimRight(line, "\r") == "" {
			continue
		}
		c, err := kv.ParseCellLineLabels(line, labels)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		cells = append(cells, c)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading cell text after line %d: %w", n, err)
	}
	keys := make([][]byte, len(cells))
	for i := range cells {
		keys[i] = cells[i].Key()
	}
	order := make([]int, len(cells))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return kv.CompareKeys(keys[order[a]], keys[order[b]]) < 0 })
	sorted := make([]Cell, len(cells))
	for i, j := range order {
		sorted[i] = cells[j]
		if i > 0 && kv.CompareKeys(keys[order[i-1]], keys[j]) == 0 {
			return nil, fmt.Errorf("lines %d and %d have the same key %s", lines[order[i-1]], lines[j], Key(keys[j]))
		}
	}
	return sorted, nil
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
