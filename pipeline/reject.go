package pipeline

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"
)

// RejectSink receives rejected rows and enforces the reject limit. Each reject is one JSON Lines record:
//
//	{"source":"a.csv","line":17,"reason":"...","raw":"..."}                     CSV (line: 1-based, where the row starts)
//	{"source":"a.parquet","row_group":2,"row":70123,"reason":"...","raw":"..."} Parquet (row: 0-based ordinal in the file)
//
// raw is the row's original text (CSV) or its fields' canonical text joined by ',' (Parquet); when it is
// not valid UTF-8 it is given as "raw_base64" instead. A RejectSink is safe for concurrent use. Run
// commits the rejects of each batch in input order, so the reject file and the limit error are the same
// whatever the scheduling.
type RejectSink struct {
	mu      sync.Mutex
	w       io.Writer
	max     int64
	n       int64
	err     error
	next    uint64
	pending map[uint64]*rejectBuf
}

// NewRejectSink writes rejects to w (nil: count only) and fails once more than maxRejects rows were
// rejected: 0 fails on the first bad row, -1 never fails.
func NewRejectSink(w io.Writer, maxRejects int64) *RejectSink {
	return &RejectSink{w: w, max: maxRejects, pending: map[uint64]*rejectBuf{}}
}

// Count returns the number of rejects accepted so far.
func (s *RejectSink) Count() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// rejectBuf collects the rejects of one batch (worker-local, reused).
type rejectBuf struct {
	lines []byte
	ends  []int
	locs  []string // "file:line: reason", for the limit error
	n     int
	first string
	tmp   []byte
}

func (rb *rejectBuf) reset(b *Batch) {
	rb.lines, rb.ends, rb.locs, rb.n, rb.first = rb.lines[:0], rb.ends[:0], rb.locs[:0], 0, ""
}

func (rb *rejectBuf) clone() *rejectBuf {
	return &rejectBuf{
		lines: append([]byte(nil), rb.lines...),
		ends:  append([]int(nil), rb.ends...),
		locs:  append([]string(nil), rb.locs...),
		n:     rb.n,
		first: rb.first,
	}
}

func (rb *rejectBuf) push(loc, reason string) {
	rb.ends = append(rb.ends, len(rb.lines))
	l := loc + ": " + reason
	rb.locs = append(rb.locs, l)
	if rb.n == 0 {
		rb.first = l
	}
	rb.n++
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // strings always marshal
	return append(dst, b...)
}

func appendRaw(dst, raw []byte) []byte {
	if utf8.Valid(raw) {
		dst = append(dst, `,"raw":`...)
		return appendJSONString(dst, string(raw))
	}
	dst = append(dst, `,"raw_base64":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, raw)
	return append(dst, '"')
}

// addBad records a row the source could not split.
func (rb *rejectBuf) addBad(b *Batch, br *BadRow) {
	rb.lines = append(rb.lines, `{"source":`...)
	rb.lines = appendJSONString(rb.lines, b.Source)
	var loc string
	if b.Record != nil {
		rb.lines = append(rb.lines, `,"row_group":`...)
		rb.lines = strconv.AppendInt(rb.lines, int64(b.RowGroup), 10)
		rb.lines = append(rb.lines, `,"row":`...)
		loc = fmt.Sprintf("%s: row group %d, row %d", b.Source, b.RowGroup, br.Line)
	} else {
		rb.lines = append(rb.lines, `,"line":`...)
		loc = fmt.Sprintf("%s:%d", b.Source, br.Line)
	}
	rb.lines = strconv.AppendInt(rb.lines, br.Line, 10)
	rb.lines = append(rb.lines, `,"reason":`...)
	rb.lines = appendJSONString(rb.lines, br.Reason)
	if br.Raw != nil {
		rb.lines = appendRaw(rb.lines, br.Raw)
	}
	rb.lines = append(rb.lines, "}\n"...)
	rb.push(loc, br.Reason)
}

// addRow records row i of b as rejected for reason. enc (may be nil) formats Parquet fields for raw.
func (rb *rejectBuf) addRow(b *Batch, i int, reason string, enc *encoder) {
	rb.lines = append(rb.lines, `{"source":`...)
	rb.lines = appendJSONString(rb.lines, b.Source)
	var loc string
	var raw []byte
	if b.Record != nil {
		row := b.FirstRow + int64(i)
		rb.lines = append(rb.lines, `,"row_group":`...)
		rb.lines = strconv.AppendInt(rb.lines, int64(b.RowGroup), 10)
		rb.lines = append(rb.lines, `,"row":`...)
		rb.lines = strconv.AppendInt(rb.lines, row, 10)
		loc = fmt.Sprintf("%s: row group %d, row %d", b.Source, b.RowGroup, row)
		rb.tmp = rb.tmp[:0]
		var v value
		var scratch []byte
		for c := 0; c < int(b.Record.NumCols()); c++ {
			if c > 0 {
				rb.tmp = append(rb.tmp, ',')
			}
			var err error
			if scratch, err = arrowValue(b.Record.Column(c), i, &v, scratch); err == nil && v.kind != vkNull {
				rb.tmp = appendText(rb.tmp, &v)
			}
		}
		raw = rb.tmp
	} else {
		line := int64(0)
		if i < len(b.Lines) {
			line = b.Lines[i]
		}
		rb.lines = append(rb.lines, `,"line":`...)
		rb.lines = strconv.AppendInt(rb.lines, line, 10)
		loc = fmt.Sprintf("%s:%d", b.Source, line)
		raw = b.Raw(i)
	}
	rb.lines = append(rb.lines, `,"reason":`...)
	rb.lines = appendJSONString(rb.lines, reason)
	if raw != nil {
		rb.lines = appendRaw(rb.lines, raw)
	}
	rb.lines = append(rb.lines, "}\n"...)
	rb.push(loc, reason)
}

// add writes rb now (callers that map batches one at a time).
func (s *RejectSink) add(rb *rejectBuf) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writeLocked(rb)
}

// commit writes the rejects of the batch with the given order number once all earlier batches are
// written; later batches wait in memory (at most the batches in flight).
func (s *RejectSink) commit(order uint64, rb *rejectBuf) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if order != s.next {
		s.pending[order] = rb.clone()
		return nil
	}
	if err := s.writeLocked(rb); err != nil {
		return err
	}
	s.next++
	for {
		p, ok := s.pending[s.next]
		if !ok {
			return nil
		}
		delete(s.pending, s.next)
		if err := s.writeLocked(p); err != nil {
			return err
		}
		s.next++
	}
}

// ErrRejectLimit is wrapped by the error a RejectSink (and so Run) returns once more rows are rejected
// than MaxRejects allows.
var ErrRejectLimit = errors.New("reject limit reached")

// rejectLimitError names the row that crossed the limit; it unwraps to ErrRejectLimit.
type rejectLimitError struct{ msg string }

func (e *rejectLimitError) Error() string { return e.msg }
func (e *rejectLimitError) Unwrap() error { return ErrRejectLimit }

// rejectLimit is the error of the reject l ("file:line: reason") crossing the limit max.
func rejectLimit(l string, max int64) error {
	if max == 0 {
		return &rejectLimitError{fmt.Sprintf("%s (MaxRejects is 0: the first bad row fails the run)", l)}
	}
	return &rejectLimitError{fmt.Sprintf("%s (more than %d rows rejected)", l, max)}
}

func (s *RejectSink) writeLocked(rb *rejectBuf) error {
	if s.err != nil {
		return s.err
	}
	if rb.n == 0 {
		return nil
	}
	upto := rb.n
	var limitErr error
	if s.max >= 0 && s.n+int64(rb.n) > s.max {
		upto = int(s.max - s.n + 1)
		limitErr = rejectLimit(rb.locs[upto-1], s.max)
	}
	if s.w != nil {
		end := len(rb.lines)
		if upto < rb.n {
			end = rb.ends[upto-1]
		}
		if _, err := s.w.Write(rb.lines[:end]); err != nil {
			s.err = fmt.Errorf("writing rejects: %w", err)
			return s.err
		}
	}
	s.n += int64(upto)
	if limitErr != nil {
		s.err = limitErr
		return limitErr
	}
	return nil
}
