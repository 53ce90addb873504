package pipeline

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// CSVRange is a share of one CSV file for a reader that runs beside others on the same file (a
// distributed run's work unit): the records that START at byte offsets in [From, To). The reader
// starts at the first line start at or after From (From 0: the file's start, with its byte order mark
// and header) and reads on past To to the end of the record it is in, so consecutive ranges read
// every record once, as long as every line start they begin at is a record start. That holds unless a
// quoted field holds a line break at the cut; CSVSpan lets the caller check it: a range's End must be
// the next range's Start (a reader from the file's start is always right, so by induction every range
// is).
//
// Line numbers (rejects) count from the range's first line as line 1 and row ordinals (Batch.FirstRow,
// so RecordRef.Seq) from 0: add the Lines and Rows of the ranges before it to get what reading the
// whole file gives.
type CSVRange struct {
	From, To int64
	// Header and Fields are the file's column names (with SourceOptions.Header) and field count, as a
	// reader from the start finds them (CSVSource.Header, CSVSource.Fields after the first Next); a
	// range with From > 0 takes them from here.
	Header []string
	Fields int
}

// CSVSpan is what a CSVSource over a CSVRange read, once Next has returned io.EOF.
type CSVSpan struct {
	Start int64 `json:"start"` // offset of the first record (0 for a range from the file's start)
	End   int64 `json:"end"`   // offset of the first record it left to the next range (the file's size at its end)
	Lines int64 `json:"lines"` // line breaks in [Start, End), as the reader numbers lines
	Rows  int64 `json:"rows"`  // good rows (the next range's first row ordinal, relative to this one's)
}

// Span reports where the source started and stopped and how many lines and rows it read (see
// CSVSpan); meaningful once Next has returned io.EOF.
func (s *CSVSource) Span() CSVSpan {
	return CSVSpan{Start: s.start, End: s.base + int64(s.pos), Lines: s.line - 1, Rows: s.row}
}

// Fields returns the number of fields a row must have (0 until known: after the header, or the
// first Next without one).
func (s *CSVSource) Fields() int { return s.expected }

// seekRecord moves past the first line break at or after the file offset off (the reader r is at
// off): the first record of a range from off+1 starts there.
func (s *CSVSource) seekRecord(off int64) error {
	s.base, s.header = off, s.rng.Header
	for {
		if nl := bytes.IndexByte(s.buf[s.pos:s.end], '\n'); nl >= 0 {
			s.pos += nl + 1
			break
		}
		s.pos = s.end
		if s.eof {
			break
		}
		if err := s.fill(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	s.start = s.base + int64(s.pos)
	return nil
}

// Splittable reports whether the input can be read by ranges (Range): an uncompressed CSV file
// (local or in a bucket), not standard input.
func (in Input) Splittable() bool { return in.text != nil }

// Range returns the input restricted to r: its Open returns a *CSVSource that reads only r's records
// (see CSVRange). Only a Splittable input has ranges. The range's bytes are not sent to SetTee's
// writer (they are not the whole file).
func (in Input) Range(r CSVRange) (Input, error) {
	if in.text == nil {
		return in, fmt.Errorf("input %s: only uncompressed CSV files can be read by byte ranges", in.Path)
	}
	if r.From < 0 || r.To < r.From || r.From > 0 && r.Fields <= 0 {
		return in, fmt.Errorf("input %s: bad byte range [%d, %d) with %d fields", in.Path, r.From, r.To, r.Fields)
	}
	t := in.text
	out := in
	out.Open = func() (Source, error) {
		off := max(r.From-1, 0)
		var f io.ReadCloser
		var err error
		if t.remote != nil {
			f, err = t.remote.store.Reader(t.remote.ctx, t.remote.key, off)
		} else {
			var file *os.File
			if file, err = os.Open(in.Path); err == nil {
				if _, err = file.Seek(off, io.SeekStart); err != nil {
					file.Close()
				}
				f = file
			}
		}
		if err != nil {
			return nil, fmt.Errorf("open input: %w", err)
		}
		rng := r
		src, err := newCSVSource(f, in.Path, in.Index, t.opts, &rng)
		if err != nil {
			f.Close()
			return nil, err
		}
		return src, nil
	}
	return out, nil
}

// inputText is what Input.Range needs to open a CSV file again at an offset.
type inputText struct {
	opts   SourceOptions
	remote *inputRemote
}
