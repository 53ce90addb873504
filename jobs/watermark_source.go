package jobs

import (
	"context"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"

	"github.com/hfload/hfload/pipeline"
)

// Watermark filtering (incremental: {watermark: COL, watermark_type: T}).
//
// Every input's Source is wrapped so that each batch is filtered before the
// mapping sees it: a row whose watermark value is <= the previous run's
// high-water mark is dropped and counted as filtered; a row above it is kept
// and raises the new mark; a row whose watermark value is NULL or does not
// parse as the type becomes a bad row (read and rejected, with the reason),
// because "is it new?" cannot be answered for it and nothing is dropped
// silently. The pipeline's counts therefore cover the kept and bad rows only;
// the run adds RowsFiltered to the manifest so that
// rows_read = rows_filtered + rows_keyed + rows_rejected.
//
// Kept rows keep their order. CSV batches are rebuilt with the kept rows
// (Lines keep the rows' line numbers for rejects; FirstRow stays that of the
// unfiltered batch, so Seq stays unique and ordered); Parquet batches are
// split into zero-copy slices, one per run of kept rows, with exact FirstRow.

// wmValue is a parsed watermark value.
type wmValue struct {
	s     string    // string
	isInt bool      // number: fits int64
	i     int64     // number
	r     *big.Rat  // number that is not an int64
	t     time.Time // time
}

// wmCompare compares parsed values of one type.
func wmCompare(typ string, a, b *wmValue) int {
	switch typ {
	case "number":
		if a.isInt && b.isInt {
			switch {
			case a.i < b.i:
				return -1
			case a.i > b.i:
				return 1
			}
			return 0
		}
		return a.rat().Cmp(b.rat())
	case "time":
		return a.t.Compare(b.t)
	default:
		return strings.Compare(a.s, b.s)
	}
}

func (v *wmValue) rat() *big.Rat {
	if v.r == nil {
		v.r = new(big.Rat).SetInt64(v.i)
	}
	return v.r
}

// parseWatermarkValue parses text as typ. layout (may be nil) remembers the
// index of the time layout that parsed last, tried first next time: a column
// keeps one format, and failed attempts are what makes time parsing slow.
func parseWatermarkValue(typ, text string, layout *int) (v wmValue, err error) {
	text = strings.TrimSpace(text)
	switch typ {
	case "number":
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return wmValue{isInt: true, i: i, s: text}, nil
		}
		r, ok := new(big.Rat).SetString(text)
		if !ok {
			return v, fmt.Errorf("%q is not a number", text)
		}
		return wmValue{r: r, s: text}, nil
	case "time":
		if t, ok := parseDateTimeFast(text); ok {
			return wmValue{t: t}, nil
		}
		if layout != nil && *layout >= 0 {
			if t, err := time.Parse(timeLayouts[*layout], text); err == nil {
				return wmValue{t: t}, nil
			}
		}
		for i, l := range timeLayouts {
			if t, err := time.Parse(l, text); err == nil {
				if layout != nil {
					*layout = i
				}
				return wmValue{t: t}, nil
			}
		}
		return v, fmt.Errorf("%q is not a time (RFC 3339, 2006-01-02 15:04:05 or 2006-01-02)", text)
	case "", "string":
		return wmValue{s: text}, nil
	}
	return v, fmt.Errorf("watermark type %q: want string, number or time", typ)
}

// parseDateTimeFast parses the most common export format without time.Parse:
// "2006-01-02 15:04:05" or "2006-01-02T15:04:05", optionally followed by "Z"
// (UTC). Anything else, including invalid dates, returns false and goes to
// the layouts.
func parseDateTimeFast(s string) (time.Time, bool) {
	if len(s) == 20 && s[19] == 'Z' {
		s = s[:19]
	}
	if len(s) != 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC)
	if t.Day() != d { // Feb 30 and the like: time.Parse rejects them, so must we
		return time.Time{}, false
	}
	return t, true
}

// canonical is v's text as canonicalWatermark gives it: times in RFC 3339
// UTC with nanoseconds, numbers and strings as given (trimmed).
func (v *wmValue) canonical(typ string) string {
	if typ == "time" {
		return v.t.UTC().Format(time.RFC3339Nano)
	}
	return v.s
}

// watermarkFilter holds the state shared by the wrapped sources of one run.
type watermarkFilter struct {
	column  string
	typ     string
	colIdx  int      // position for headerless inputs; -1 = by name only
	prev    *wmValue // nil = no previous mark: every row is new
	prevTxt string

	mu      sync.Mutex
	max     wmValue
	hasMax  bool
	layout  int          // the time layout that parsed last (-1 = none yet); used by the single reader goroutine
	filter  atomic.Int64 // rows dropped (<= previous mark)
	invalid atomic.Int64 // rows turned into bad rows
}

// newWatermarkFilter prepares filtering on column (type typ) above prev (nil
// or empty = load everything). colIdx is the column's position when the input
// has no header (-1 if unknown).
func newWatermarkFilter(column, typ string, colIdx int, prev *Watermark) (*watermarkFilter, error) {
	if typ == "" {
		typ = "string"
	}
	switch typ {
	case "string", "number", "time":
	default:
		return nil, fmt.Errorf("%w: incremental: watermark_type %q: want string, number or time", ErrConfig, typ)
	}
	f := &watermarkFilter{column: column, typ: typ, colIdx: colIdx, layout: -1}
	if prev != nil && prev.Value != "" {
		v, err := parseWatermarkValue(typ, prev.Value, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: recorded watermark of %s: %w", ErrConfig, column, err)
		}
		f.prev, f.prevTxt = &v, v.canonical(typ)
	}
	return f, nil
}

// Result is the new high-water mark: the largest kept value, or the previous
// mark when no row was above it (nil when there was neither).
func (f *watermarkFilter) Result() *Watermark {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.hasMax:
		return &Watermark{Column: f.column, Type: f.typ, Value: f.max.canonical(f.typ)}
	case f.prev != nil:
		return &Watermark{Column: f.column, Type: f.typ, Value: f.prevTxt}
	}
	return nil
}

// Filtered is the number of rows dropped as not above the previous mark.
func (f *watermarkFilter) Filtered() int64 { return f.filter.Load() }

// keep decides one value: keep (above the mark), or an error for a value
// that is not of the type. It raises the new mark for kept values.
func (f *watermarkFilter) keep(text string, null bool) (bool, error) {
	if null {
		return false, fmt.Errorf("watermark column %s is NULL", f.column)
	}
	v, err := parseWatermarkValue(f.typ, text, &f.layout)
	if err != nil {
		return false, fmt.Errorf("watermark column %s: %w", f.column, err)
	}
	if f.prev != nil && wmCompare(f.typ, &v, f.prev) <= 0 {
		return false, nil
	}
	f.mu.Lock()
	if !f.hasMax || wmCompare(f.typ, &v, &f.max) > 0 {
		f.max, f.hasMax = v, true
	}
	f.mu.Unlock()
	return true, nil
}

// wrap returns inputs whose sources filter by the watermark.
func (f *watermarkFilter) wrap(ins []pipeline.Input) []pipeline.Input {
	out := make([]pipeline.Input, len(ins))
	for i, in := range ins {
		in := in
		open := in.Open
		in.Open = func() (pipeline.Source, error) {
			src, err := open()
			if err != nil {
				return nil, err
			}
			ws := &watermarkSource{src: src, f: f, path: in.Path, col: -1}
			if hs, ok := src.(pipeline.HeaderSource); ok {
				ws.header = hs.Header()
			}
			if err := ws.resolve(); err != nil {
				src.Close()
				return nil, err
			}
			return ws, nil
		}
		out[i] = in
	}
	return out
}

// watermarkSource filters the batches of one input. It implements
// pipeline.HeaderSource so the mapping still finds columns by name.
type watermarkSource struct {
	src    pipeline.Source
	f      *watermarkFilter
	path   string
	header []string
	col    int
	// pending holds the batches a filtered Parquet batch was split into, after the one returned.
	pending []*pipeline.Batch
}

func (s *watermarkSource) resolve() error {
	for i, h := range s.header {
		if h == s.f.column {
			s.col = i
			return nil
		}
	}
	if s.f.colIdx >= 0 {
		s.col = s.f.colIdx
		return nil
	}
	if s.header != nil {
		return fmt.Errorf("%w: %s: watermark column %q is not in the input's columns %v", ErrConfig, s.path, s.f.column, s.header)
	}
	return fmt.Errorf("%w: %s: watermark column %q: the input has no header to find it by name (set header: true, give the column an index in the mapping, or name it by its 0-based position)",
		ErrConfig, s.path, s.f.column)
}

// Header returns the underlying source's column names (nil if it has none).
func (s *watermarkSource) Header() []string { return s.header }

// Close releases queued batches and closes the underlying source.
func (s *watermarkSource) Close() error {
	for _, b := range s.pending {
		b.Release()
	}
	s.pending = nil
	return s.src.Close()
}

// Next returns the next batch with the rows at or below the mark removed.
// Batches left with no rows and no bad rows are skipped.
func (s *watermarkSource) Next(ctx context.Context) (*pipeline.Batch, error) {
	if len(s.pending) > 0 {
		b := s.pending[0]
		s.pending = s.pending[1:]
		return b, nil
	}
	for {
		b, err := s.src.Next(ctx)
		if b == nil || err != nil {
			return b, err
		}
		if b.NumRows > 0 {
			if b.Record != nil {
				err = s.filterRecord(b)
			} else {
				err = s.filterText(b)
			}
			if err != nil {
				b.Release()
				return nil, err
			}
		}
		if b.NumRows > 0 || len(b.Bad) > 0 {
			return b, nil
		}
		b.Release()
	}
}

// decide runs keep over the rows; value(i) gives row i's watermark text.
// It returns the kept flags (nil = all kept) and the number kept, and
// appends a bad row for each value that is NULL or not of the type.
func (s *watermarkSource) decide(b *pipeline.Batch, value func(i int) (string, bool), bad func(i int, reason string) pipeline.BadRow) ([]bool, int) {
	var keep []bool
	kept := 0
	for i := 0; i < b.NumRows; i++ {
		text, null := value(i)
		ok, err := s.f.keep(text, null)
		if err != nil {
			b.Bad = append(b.Bad, bad(i, err.Error()))
			s.f.invalid.Add(1)
		} else if !ok {
			s.f.filter.Add(1)
		}
		if ok {
			kept++
		}
		if !ok && keep == nil {
			keep = make([]bool, b.NumRows)
			for k := 0; k < i; k++ {
				keep[k] = true
			}
		}
		if keep != nil {
			keep[i] = ok
		}
	}
	return keep, kept
}

func (s *watermarkSource) filterText(b *pipeline.Batch) error {
	if s.col >= b.NumCols {
		return fmt.Errorf("%w: %s: watermark column %s is position %d but the input has %d columns", ErrConfig, s.path, s.f.column, s.col, b.NumCols)
	}
	keep, kept := s.decide(b,
		func(i int) (string, bool) { v, null := b.Field(i, s.col); return string(v), null },
		func(i int, reason string) pipeline.BadRow {
			line := int64(0)
			if i < len(b.Lines) {
				line = b.Lines[i]
			}
			return pipeline.BadRow{Line: line, Reason: reason, Raw: append([]byte(nil), b.Raw(i)...)}
		})
	if keep == nil {
		return nil
	}
	nc := b.NumCols
	data := make([]byte, 0, len(b.Data))
	ends := make([]int32, 0, kept*nc)
	nulls := make([]bool, 0, kept*nc)
	var lines []int64
	var raw []byte
	var rawEnds []int32
	for i := 0; i < b.NumRows; i++ {
		if !keep[i] {
			continue
		}
		k := i * nc
		start := int32(0)
		if k > 0 {
			start = b.Ends[k-1]
		}
		base := int32(len(data)) - start
		data = append(data, b.Data[start:b.Ends[k+nc-1]]...)
		for j := 0; j < nc; j++ {
			ends = append(ends, b.Ends[k+j]+base)
		}
		nulls = append(nulls, b.Nulls[k:k+nc]...)
		if i < len(b.Lines) {
			lines = append(lines, b.Lines[i])
		}
		if i < len(b.RawEnds) {
			raw = append(raw, b.Raw(i)...)
			rawEnds = append(rawEnds, int32(len(raw)))
		}
	}
	b.Data, b.Ends, b.Nulls, b.NumRows = data, ends, nulls, kept
	if b.Lines != nil {
		b.Lines = lines
	}
	if b.RawEnds != nil {
		b.RawData, b.RawEnds = raw, rawEnds
	}
	return nil
}

// filterRecord filters a Parquet batch. Each run of consecutive kept rows
// becomes its own batch (a zero-copy slice of the record) whose FirstRow is
// the run's first row, so row ordinals (rejects, Seq) stay exact; the
// batches after the first are queued in s.pending.
func (s *watermarkSource) filterRecord(b *pipeline.Batch) error {
	rec := b.Record
	if s.col >= int(rec.NumCols()) {
		return fmt.Errorf("%w: %s: watermark column %s is position %d but the input has %d columns", ErrConfig, s.path, s.f.column, s.col, rec.NumCols())
	}
	col := rec.Column(s.col)
	keep, _ := s.decide(b,
		func(i int) (string, bool) {
			if col.IsNull(i) {
				return "", true
			}
			return arrowText(col, i), false
		},
		func(i int, reason string) pipeline.BadRow {
			return pipeline.BadRow{Line: b.FirstRow + int64(i), Reason: reason}
		})
	if keep == nil {
		return nil
	}
	var runs []*pipeline.Batch
	for i := 0; i < b.NumRows; {
		if !keep[i] {
			i++
			continue
		}
		j := i
		for j < b.NumRows && keep[j] {
			j++
		}
		nb := *b
		nb.Record = rec.NewSlice(int64(i), int64(j))
		nb.FirstRow = b.FirstRow + int64(i)
		nb.NumRows = j - i
		nb.Bad = nil
		runs = append(runs, &nb)
		i = j
	}
	bad := b.Bad
	if len(runs) == 0 {
		// No row kept: an empty batch carries the bad rows (still a Parquet batch for the reject sink).
		b.Record = rec.NewSlice(0, 0)
		b.NumRows = 0
		rec.Release()
		return nil
	}
	rec.Release()
	*b = *runs[0]
	b.Bad = bad
	s.pending = append(s.pending, runs[1:]...)
	return nil
}

// arrowText is the text of a Parquet value for watermark comparison:
// integers in decimal, timestamps and dates as RFC 3339 UTC, strings as
// they are, anything else as Arrow prints it.
func arrowText(col arrow.Array, i int) string {
	switch a := col.(type) {
	case *array.Int64:
		return strconv.FormatInt(a.Value(i), 10)
	case *array.Int32:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int16:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Int8:
		return strconv.FormatInt(int64(a.Value(i)), 10)
	case *array.Uint64:
		return strconv.FormatUint(a.Value(i), 10)
	case *array.Uint32:
		return strconv.FormatUint(uint64(a.Value(i)), 10)
	case *array.Float64:
		return strconv.FormatFloat(a.Value(i), 'g', -1, 64)
	case *array.Float32:
		return strconv.FormatFloat(float64(a.Value(i)), 'g', -1, 32)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.Binary:
		return string(a.Value(i))
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC().Format(time.RFC3339Nano)
	case *array.Date32:
		return a.Value(i).ToTime().UTC().Format("2006-01-02")
	case *array.Date64:
		return a.Value(i).ToTime().UTC().Format("2006-01-02")
	}
	return col.ValueStr(i)
}
