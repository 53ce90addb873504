package pipeline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// ShiftRejectLine appends the reject record line (one JSON Lines record of a RejectSink, with its line
// feed) to dst with lines added to its CSV line number: the rejects of a reader that started inside
// its file (CSVRange) renumbered as the whole file numbers them. Parquet rejects, which carry no line,
// are appended unchanged.
func ShiftRejectLine(dst, line []byte, lines int64) ([]byte, error) {
	const field = `,"line":`
	// The first `,"line":` is the field: the source before it is a JSON string, where a quote is escaped.
	i := bytes.Index(line, []byte(field))
	if i < 0 || lines == 0 {
		return append(dst, line...), nil
	}
	start := i + len(field)
	end := start
	for end < len(line) && line[end] >= '0' && line[end] <= '9' {
		end++
	}
	n, err := strconv.ParseInt(string(line[start:end]), 10, 64)
	if err != nil {
		return dst, fmt.Errorf("reject record %.80q: line number: %w", line, err)
	}
	dst = append(dst, line[:start]...)
	dst = strconv.AppendInt(dst, n+lines, 10)
	return append(dst, line[end:]...), nil
}

// RejectLimitError is the error Run returns when the reject recorded as line (one JSON Lines record of
// a RejectSink) is the one that takes the rejects over maxRejects: for a caller that counts, in input
// order, the rejects several runs wrote (each with no limit of its own).
func RejectLimitError(line []byte, maxRejects int64) error {
	var r struct {
		Source   string `json:"source"`
		Line     *int64 `json:"line"`
		RowGroup *int64 `json:"row_group"`
		Row      *int64 `json:"row"`
		Reason   string `json:"reason"`
	}
	if err := json.Unmarshal(line, &r); err != nil {
		return fmt.Errorf("%w: reject record %.80q: %w", ErrRejectLimit, line, err)
	}
	loc := r.Source
	switch {
	case r.Line != nil:
		loc = fmt.Sprintf("%s:%d", r.Source, *r.Line)
	case r.RowGroup != nil && r.Row != nil:
		loc = fmt.Sprintf("%s: row group %d, row %d", r.Source, *r.RowGroup, *r.Row)
	}
	return rejectLimit(loc+": "+r.Reason, maxRejects)
}
