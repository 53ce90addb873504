package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// CSVSource reads one delimited text file (RFC 4180 and the dialects of common database exports) into
// text batches. It is not safe for concurrent use; the batches it returns are independent of it.
//
// Dialect rules:
//   - Records end with LF or CRLF (LF only in the mysql dialects). A UTF-8 byte order mark at the start
//     of a csv-dialect file is dropped.
//   - A field that starts with the quote character is quoted: it runs to the next quote that is not
//     doubled, may hold separators and line breaks, and "" inside it is one quote. A quoted field is
//     never NULL.
//   - A quote character inside an unquoted field (MySQL/Oracle exports without enclosure) is kept as
//     text: it is unambiguous, the field did not start with a quote.
//   - Text after a closing quote other than a separator or line end (`"ab"c`) is ambiguous: the row
//     is reported bad ("text after closing quote") and reading resumes with the next record.
//   - A quoted field still open at end of file (or longer than MaxRecordBytes) makes the row's first
//     physical line a bad row ("unterminated quoted field"); reading resumes at the next line, so one
//     stray quote costs one line, not the rest of the file.
//   - A row whose field count differs from ExpectedFields (or the header's count, or the most common
//     count among the first records) is a bad row ("ragged row: 3 fields, want 4").
//   - Escapes (SourceOptions.Escape) follow the dialect (dialect.go) and are decoded per field into the
//     batch; a line without a quote or escape takes the word-at-a-time path whatever the dialect.
//   - Blank lines are skipped, except in single-column files where a blank line is a NULL field
//     (PostgreSQL writes a NULL single-column row as an empty line).
//
// Row ordinals (Batch.FirstRow) count good rows only, so row i of a batch is row FirstRow+i of the file.
type CSVSource struct {
	name      string
	fileIndex int
	r         io.Reader
	opts      SourceOptions
	sep       byte
	quote     byte
	esc       byte // escape character, 0 = none
	uesc      byte // the escape as it works in unquoted fields (0 under escQuoted: literal there)
	escRules  escRules
	quoting   bool // quote is a quote character (not --quote none)
	crlf      bool // CR before LF is part of the line end (not in the MySQL dialects)
	null      string

	buf     []byte
	pos     int // start of unparsed data in buf
	end     int // end of valid data in buf
	eof     bool
	readErr error

	line     int64 // 1-based line number where the next record starts
	row      int64 // good rows returned so far
	expected int   // fields per row, 0 until known
	guessed  bool  // the field count was looked for among the first records (guessFields)
	header   []string
	skipping bool // discarding the rest of an overlong line
	badBytes int  // raw bytes of the bad rows in the batch being built

	// rng restricts the source to the records that start in [From, To) of its file (CSVRange); nil:
	// the whole file. base is the file offset of buf[0], start that of the first record read.
	rng         *CSVRange
	base, start int64

	hintData, hintRaw int  // capacity hints from the previous batch
	wholeQuoted       bool // tests: parseQuoted takes every record with a quote whole (no parseQuotedAfter split)
	noPlainLines      bool // tests: Next takes every record through parseRecord (no plainLines)
	cleanWindow       int  // how many bytes plainLines searches for the next quote at once (tests: fewer)

	// free holds released batches whose buffers Next reuses (Batch.Release hands them back), so that
	// a long file does not allocate (and the collector scan) fresh megabytes per batch.
	free chan *Batch
}

// csvChunk is the read size: large reads keep syscalls and buffer shifting off the profile.
const csvChunk = 1 << 20

// NewCSVSource reads r as delimited text. name is reported in batches (Batch.Source) and fileIndex
// becomes Batch.FileIndex. When opts.Header is set the header record is read here, so Header is
// available at once. Close closes r if it is an io.Closer.
func NewCSVSource(r io.Reader, name string, fileIndex int, opts SourceOptions) (*CSVSource, error) {
	return newCSVSource(r, name, fileIndex, opts, nil)
}

// newCSVSource is NewCSVSource; with rng, r is the file from offset max(rng.From-1, 0) and the source
// reads rng's records only (see CSVRange).
func newCSVSource(r io.Reader, name string, fileIndex int, opts SourceOptions, rng *CSVRange) (*CSVSource, error) {
	if rng != nil && rng.From > 0 {
		opts.Header, opts.ExpectedFields = false, rng.Fields // known from the file's start
	}
	opts, err := csvNormalized(opts, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &CSVSource{
		name: name, fileIndex: fileIndex, r: r, opts: opts,
		sep: opts.Separator, quote: opts.Quote, esc: opts.Escape, null: opts.Null, quoting: opts.Quote != 0,
		buf: hugeMake[byte](csvChunk)[:csvChunk], line: 1, expected: opts.ExpectedFields, cleanWindow: cleanWindow,
	}
	s.escRules, s.crlf = csvRules(opts)
	if s.escRules != escQuoted {
		s.uesc = s.esc
	}
	if rng != nil {
		s.rng = rng
		if rng.From > 0 {
			return s, s.seekRecord(rng.From - 1)
		}
	}
	for s.end < 3 && !s.eof {
		if err := s.fill(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	// Spreadsheets write a byte order mark; database exports never do, so there it is data.
	if opts.Dialect == DialectCSV && bytes.HasPrefix(s.buf[s.pos:s.end], []byte("\xEF\xBB\xBF")) {
		s.pos += 3
	}
	if opts.Header {
		if err := s.readHeader(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return s, nil
}

// Header returns the column names from the header record (nil without SourceOptions.Header).
func (s *CSVSource) Header() []string { return s.header }

// Close closes the underlying reader if it is an io.Closer.
func (s *CSVSource) Close() error {
	if c, ok := s.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (s *CSVSource) readHeader() error {
	var b Batch
	for {
		data := s.buf[s.pos:s.end]
		if len(data) == 0 && s.eof {
			return nil // empty file: no header, no rows
		}
		view := data[:min(len(data), s.opts.MaxRecordBytes+1)]
		rec := s.parseRecord(&b, view, s.eof && len(view) == len(data))
		if rec.status == csvRecMore {
			if len(data) > len(view) {
				return fmt.Errorf("header record longer than %d bytes", s.opts.MaxRecordBytes)
			}
			if err := s.fill(); err != nil {
				return err
			}
			continue
		}
		switch rec.status {
		case csvRecBadQuote:
			return fmt.Errorf("header line %d: %s", s.line, rec.reason)
		case csvRecUnterminated:
			return fmt.Errorf("header line %d: unterminated quoted field", s.line)
		}
		s.pos += rec.n
		s.line += int64(rec.newlines)
		if rec.fields == 1 && rec.contentEnd == 0 && !rec.quoted {
			b = Batch{}
			continue // blank line before the header
		}
		b.NumCols = rec.fields
		s.header = make([]string, rec.fields)
		for j := range s.header {
			f, _ := b.Field(0, j)
			s.header[j] = string(f)
		}
		if s.expected == 0 {
			s.expected = rec.fields
		} else if s.expected != rec.fields && !(s.opts.PadShort && rec.fields < s.expected) {
			return fmt.Errorf("header has %d fields, want %d", rec.fields, s.expected)
		}
		return nil
	}
}

// fill makes room in buf and reads more data after s.end. It grows buf when a single record fills it.
func (s *CSVSource) fill() error {
	if s.eof {
		return nil
	}
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:s.end])
		s.base += int64(s.pos)
		s.pos, s.end = 0, n
	}
	if s.end == len(s.buf) {
		nb := hugeMake[byte](2 * len(s.buf))[:2*len(s.buf)]
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for empty := 0; ; empty++ {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if errors.Is(err, io.EOF) {
			s.eof = true
			return nil
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if n > 0 {
			return nil
		}
		if empty > 100 {
			return fmt.Errorf("read: %w", io.ErrNoProgress)
		}
	}
}

const (
	csvRecGood         = iota // fields appended to the batch
	csvRecMore                // the record is not complete in data; nothing appended
	csvRecBadQuote            // text after a closing quote; n covers the whole record
	csvRecUnterminated        // a quoted field runs past the data at EOF
)

type csvRecord struct {
	status     int
	n          int  // bytes consumed including the line terminator
	contentEnd int  // end of the record text without its terminator
	fields     int  // fields appended
	newlines   int  // line feeds consumed (including the terminator's)
	quoted     bool // some field was quoted
	reason     string
}

// parseRecord parses the record at the start of data, appending its fields to b. atEOF says data
// holds everything that is left of the input. On any status but csvRecGood the batch is unchanged.
func (s *CSVSource) parseRecord(b *Batch, data []byte, atEOF bool) csvRecord {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 && !atEOF {
		return csvRecord{status: csvRecMore}
	}
	line := data
	rec := csvRecord{n: len(data), contentEnd: len(data)}
	if nl >= 0 {
		line = data[:nl]
		rec.n, rec.contentEnd, rec.newlines = nl+1, nl, 1
	}
	if qi := s.firstQuoteOrEsc(line); qi >= 0 {
		return s.parseQuotedAfter(b, data, line[:qi], atEOF)
	}
	// Fast path: no quote (or escape) on this line, so fields end at separators and the record at the line end.
	if s.crlf && len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
		rec.contentEnd--
	}
	if !s.opts.TrimSpace {
		rec.fields = s.appendUnquotedLine(b, line)
		return rec
	}
	sep := s.sep
	for {
		j := bytes.IndexByte(line, sep)
		if j < 0 {
			s.appendUnquoted(b, line)
			rec.fields++
			return rec
		}
		s.appendUnquoted(b, line[:j])
		rec.fields++
		line = line[j+1:]
	}
}

// cleanWindow is how many bytes plainLines searches for the next quote (or escape byte) at once.
const cleanWindow = 4096

// firstOrEnd returns the position of the first c in p, len(p) if none.
func firstOrEnd(p []byte, c byte) int {
	if i := bytes.IndexByte(p, c); i >= 0 {
		return i
	}
	return len(p)
}

// firstQuoteOrEsc returns the position of the first quote (or escape character) in line, -1 if none.
func (s *CSVSource) firstQuoteOrEsc(line []byte) int {
	qi := -1
	if s.quoting {
		qi = bytes.IndexByte(line, s.quote)
	}
	if s.uesc != 0 {
		if ei := bytes.IndexByte(line, s.uesc); ei >= 0 && (qi < 0 || ei < qi) {
			qi = ei
		}
	}
	return qi
}

// parseQuotedAfter is parseQuoted for a record whose first line starts with clean, a run of bytes
// without quotes or escapes: the fields that end before clean's last separator are split as a
// quote-free line is (appendUnquotedLine, a word at a time), and parseQuoted takes the record from
// the field after it. Only without TrimSpace (whose per-field rules parseQuoted applies).
func (s *CSVSource) parseQuotedAfter(b *Batch, data, clean []byte, atEOF bool) csvRecord {
	cut := -1
	if !s.opts.TrimSpace && !s.wholeQuoted {
		cut = bytes.LastIndexByte(clean, s.sep)
	}
	if cut < 0 {
		return s.parseQuoted(b, data, atEOF)
	}
	saveData, saveEnds := len(b.Data), len(b.Ends)
	fields := s.appendUnquotedLine(b, clean[:cut])
	rec := s.parseQuoted(b, data[cut+1:], atEOF)
	switch rec.status {
	case csvRecGood:
		rec.fields += fields
	case csvRecBadQuote: // the batch unchanged, n covering the whole record
		b.Data, b.Ends, b.Nulls = b.Data[:saveData], b.Ends[:saveEnds], b.Nulls[:saveEnds]
	default: // nothing consumed
		b.Data, b.Ends, b.Nulls = b.Data[:saveData], b.Ends[:saveEnds], b.Nulls[:saveEnds]
		return rec
	}
	rec.n += cut + 1
	rec.contentEnd += cut + 1
	return rec
}

// appendUnquotedLine appends the fields of a line without quotes, escapes or its terminator (split at
// every separator, each field under the NULL rule, no trimming) and returns how many there were. It is
// appendUnquoted per field in one pass: eight bytes at a time are copied into b.Data and searched for
// the separator at once (a SWAR zero-byte test), so short fields cost no call per field and long ones
// move a word per step.
func (s *CSVSource) appendUnquotedLine(b *Batch, line []byte) int {
	base := len(b.Data)
	b.Data = slices.Grow(b.Data, len(line)+8) // a word written at the end may spill 7 bytes past it
	d := b.Data[base : base+len(line)+8]
	if s.null != "" {
		return s.appendUnquotedLineNullText(b, line, d, base)
	}
	// Room for the most fields the line can hold (one more than its bytes), so that the split stores
	// them without a call to grow the slice.
	first := len(b.Ends)
	ends := slices.Grow(b.Ends, len(line)+1)
	n := splitUnquoted(ends[first:first+len(line)+1], d, line, s.sep, base)
	ends = ends[:first+n]
	// A field is NULL when it is empty (isNull without a --null text): when its end equals the one before.
	// The loop reads and writes through unsafe pointers within ends[first:first+n] and
	// nulls[first:first+n] (n >= 1), which the slices above hold: with checked indexes it cost about 12
	// instructions a field.
	nulls := slices.Grow(b.Nulls[:first], n)[:first+n]
	ep, np := unsafe.Pointer(&ends[first]), unsafe.Pointer(&nulls[first])
	prev := int32(base)
	for k := 0; k < n; k++ {
		e := *(*int32)(unsafe.Add(ep, 4*k))
		*(*bool)(unsafe.Add(np, k)) = e == prev
		prev = e
	}
	b.Data, b.Ends, b.Nulls = b.Data[:int(prev)], ends, nulls
	return n
}

// splitUnquoted copies the fields of line (no quotes, escapes or terminator) back to back into d, which
// has room for len(line)+8 bytes, stores each field's end (base + its end in d) in ends, which has room
// for len(line)+1 fields, and returns how many fields there were. Eight bytes at a time are copied and
// searched for the separator at once (a SWAR zero-byte test), so short fields cost no call per field and
// long ones move a word per step; the last bytes, fewer than 8, go one at a time.
//
// The word loop reads and writes through unsafe pointers: with bounds-checked slices Go's register
// allocator spilled and reloaded the loop's values in every step (cachegrind, 200,000 customer-order
// rows: 105.1 M instructions for the split with the checks, 61.5 M without). Every access stays within
// the slices, whose room is checked on entry: a word is read at i only while i+8 <= len(line), written
// at i-n (n: the separators read so far) into d's len(line)+8 bytes, and the n-th end is stored with
// n <= len(line) into ends' len(line)+1.
func splitUnquoted(ends []int32, d, line []byte, sep byte, base int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	if len(d) < len(line)+8 || len(ends) < len(line)+1 {
		panic("pipeline: splitUnquoted without room for the fields")
	}
	sepWord := lo * uint64(sep)
	lp, dp, ep := unsafe.Pointer(unsafe.SliceData(line)), unsafe.Pointer(unsafe.SliceData(d)), unsafe.Pointer(unsafe.SliceData(ends))
	// i bytes of line read, n separators among them: i-n bytes written to d.
	i, n := 0, 0
	for i+8 <= len(line) {
		x := *(*uint64)(unsafe.Add(lp, i))
		*(*uint64)(unsafe.Add(dp, i-n)) = x
		y := x ^ sepWord
		m := (y - lo) &^ y & hi // the lowest set bit marks the first separator byte (higher ones may be false)
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m)>>3 + 1
		*(*int32)(unsafe.Add(ep, 4*n)) = int32(base + i - n - 1)
		n++
	}
	for ; i < len(line); i++ {
		if c := line[i]; c != sep {
			d[i-n] = c
			continue
		}
		ends[n] = int32(base + i - n)
		n++
	}
	ends[n] = int32(base + len(line) - n)
	return n + 1
}

// appendUnquotedLineNullText is appendUnquotedLine with a --null text: a field that equals it is NULL
// and gives back its bytes (closeField).
func (s *CSVSource) appendUnquotedLineNullText(b *Batch, line, d []byte, base int) int {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	sepWord := lo * uint64(s.sep)
	w, fs, fields := 0, 0, 0 // bytes written to d, start of the current field in d
	i := 0
	for i+8 <= len(line) {
		x := binary.LittleEndian.Uint64(line[i : i+8])
		binary.LittleEndian.PutUint64(d[w:], x)
		y := x ^ sepWord
		m := (y - lo) &^ y & hi // the lowest set bit marks the first separator byte (higher ones may be false)
		if m == 0 {
			i, w = i+8, w+8
			continue
		}
		k := bits.TrailingZeros64(m) >> 3
		w = s.closeField(b, d, base, fs, w+k)
		fs = w
		fields++
		i += k + 1
	}
	for ; i < len(line); i++ {
		if c := line[i]; c != s.sep {
			d[w] = c
			w++
			continue
		}
		w = s.closeField(b, d, base, fs, w)
		fs = w
		fields++
	}
	w = s.closeField(b, d, base, fs, w)
	b.Data = b.Data[:base+w]
	return fields + 1
}

// closeField ends the field d[fs:w] of appendUnquotedLineNullText (d starts at b.Data[base]): a NULL
// field gives back its bytes. It returns the new end of d's written bytes.
func (s *CSVSource) closeField(b *Batch, d []byte, base, fs, w int) int {
	null := s.isNull(d[fs:w])
	if null {
		w = fs
	}
	b.Ends = append(b.Ends, int32(base+w))
	b.Nulls = append(b.Nulls, null)
	return w
}

// isNull is the NULL rule of an unquoted field: empty, or the --null text when one is set.
func (s *CSVSource) isNull(f []byte) bool {
	if s.null == "" {
		return len(f) == 0
	}
	return string(f) == s.null
}

// appendUnquoted appends an unquoted field, applying TrimSpace and the NULL rule.
func (s *CSVSource) appendUnquoted(b *Batch, f []byte) {
	if s.opts.TrimSpace {
		f = bytes.Trim(f, " ")
	}
	null := s.isNull(f)
	if !null {
		b.Data = append(b.Data, f...)
	}
	b.Ends = append(b.Ends, int32(len(b.Data)))
	b.Nulls = append(b.Nulls, null)
}

// appendEscaped appends an unquoted field holding escape sequences: it is NULL when its text before
// decoding is the escape and 'N' (`\N`) or the Null marker; otherwise its escapes are decoded under
// the dialect's rules (appendUnescaped) straight into the batch.
func (s *CSVSource) appendEscaped(b *Batch, f []byte) {
	if s.opts.TrimSpace {
		f = bytes.Trim(f, " ")
	}
	null := len(f) == 2 && f[0] == s.esc && f[1] == 'N' || s.null != "" && string(f) == s.null
	if !null {
		b.Data = appendUnescaped(b.Data, f, s.esc, s.escRules)
	}
	b.Ends = append(b.Ends, int32(len(b.Data)))
	b.Nulls = append(b.Nulls, null)
}

// csvIndexQuoteOrEsc returns the index of the first quote or escape byte in p, or -1.
func (s *CSVSource) csvIndexQuoteOrEsc(p []byte) int {
	if s.esc == 0 {
		return bytes.IndexByte(p, s.quote)
	}
	for i, c := range p {
		if c == s.quote || c == s.esc {
			return i
		}
	}
	return -1
}

// parseQuoted is the general state machine, used for records whose first line holds a quote (or,
// with SourceOptions.Escape, an escape character).
func (s *CSVSource) parseQuoted(b *Batch, data []byte, atEOF bool) csvRecord {
	saveData, saveEnds := len(b.Data), len(b.Ends)
	rollback := func() {
		b.Data, b.Ends, b.Nulls = b.Data[:saveData], b.Ends[:saveEnds], b.Nulls[:saveEnds]
	}
	sep, quote := s.sep, s.quote
	var rec csvRecord
	i := 0
	for {
		// At the start of a field. With TrimSpace, spaces before an opening quote are padding.
		if s.opts.TrimSpace && sep != ' ' && s.quoting {
			j := i
			for j < len(data) && data[j] == ' ' {
				j++
			}
			if j < len(data) && data[j] == quote {
				i = j
			}
		}
		if s.quoting && i < len(data) && data[i] == quote {
			rec.quoted = true
			i++
			for {
				j := s.csvIndexQuoteOrEsc(data[i:])
				if j < 0 || s.esc != 0 && data[i+j] == s.esc && i+j+1 >= len(data) {
					rollback()
					if atEOF {
						return csvRecord{status: csvRecUnterminated}
					}
					return csvRecord{status: csvRecMore}
				}
				seg := data[i : i+j]
				rec.newlines += bytes.Count(seg, []byte{'\n'})
				b.Data = append(b.Data, seg...)
				if s.esc != 0 && data[i+j] == s.esc {
					c, n := s.quotedUnescape(data[i+j:])
					if n == 2 && data[i+j+1] == '\n' {
						rec.newlines++
					}
					b.Data = append(b.Data, c)
					i += j + n
					continue
				}
				i += j + 1
				if i < len(data) && data[i] == quote {
					b.Data = append(b.Data, quote)
					i++
					continue
				}
				if i >= len(data) && !atEOF {
					rollback()
					return csvRecord{status: csvRecMore}
				}
				break
			}
			b.Ends = append(b.Ends, int32(len(b.Data)))
			b.Nulls = append(b.Nulls, false)
			rec.fields++
			if s.opts.TrimSpace && sep != ' ' {
				for i < len(data) && data[i] == ' ' {
					i++ // padding after the closing quote
				}
			}
			if i >= len(data) {
				if !atEOF {
					rollback()
					return csvRecord{status: csvRecMore}
				}
				rec.n, rec.contentEnd = i, i
				return rec
			}
			switch c := data[i]; {
			case c == sep:
				i++
				continue
			case c == '\n':
				rec.n, rec.contentEnd = i+1, i
				rec.newlines++
				return rec
			case s.crlf && c == '\r' && i+1 < len(data) && data[i+1] == '\n':
				rec.n, rec.contentEnd = i+2, i
				rec.newlines++
				return rec
			case s.crlf && c == '\r' && i+1 == len(data):
				if !atEOF {
					rollback()
					return csvRecord{status: csvRecMore}
				}
				rec.n, rec.contentEnd = i+1, i
				return rec
			}
			// Text after the closing quote: the row is bad. Find its end by carrying on with the
			// remaining fields (quoted fields may still hold line breaks), without keeping them.
			rollback()
			bad := s.skipRest(data, i, atEOF)
			if bad.status != csvRecGood {
				return bad
			}
			bad.newlines += rec.newlines
			bad.status, bad.reason = csvRecBadQuote, "text after closing quote"
			return bad
		}
		// Unquoted field: up to the next separator or line feed.
		start := i
		escaped := false
		for i < len(data) && data[i] != sep && data[i] != '\n' {
			if s.uesc != 0 && data[i] == s.uesc {
				if i+1 >= len(data) {
					if !atEOF {
						rollback() // need the escaped byte
						return csvRecord{status: csvRecMore}
					}
				} else {
					escaped = true
					if data[i+1] == '\n' {
						rec.newlines++
					}
					i++
				}
			}
			i++
		}
		if i >= len(data) && !atEOF {
			rollback()
			return csvRecord{status: csvRecMore}
		}
		f := data[start:i]
		appendField := s.appendUnquoted
		if escaped {
			appendField = s.appendEscaped
		}
		if i >= len(data) || data[i] == '\n' {
			rec.contentEnd = i
			if s.crlf && len(f) > 0 && f[len(f)-1] == '\r' {
				f = f[:len(f)-1]
				rec.contentEnd--
			}
			appendField(b, f)
			rec.fields++
			rec.n = i
			if i < len(data) {
				rec.n++
				rec.newlines++
			}
			return rec
		}
		appendField(b, f)
		rec.fields++
		i++ // separator
	}
}

// skipRest finds the end of a record whose field at i is broken, honouring quotes in later fields.
// The result has status csvRecGood with n/contentEnd/newlines set, or csvRecMore/csvRecUnterminated.
func (s *CSVSource) skipRest(data []byte, i int, atEOF bool) csvRecord {
	var rec csvRecord
	inQuote := false
	fieldStart := false
	for ; i < len(data); i++ {
		c := data[i]
		switch {
		case inQuote && s.esc != 0 && c == s.esc && i+1 < len(data):
			if _, n := s.quotedUnescape(data[i:]); n > 1 {
				i++
				if data[i] == '\n' {
					rec.newlines++
				}
			}
		case !inQuote && s.uesc != 0 && c == s.uesc && i+1 < len(data):
			i++
			if data[i] == '\n' {
				rec.newlines++
			}
		case inQuote:
			if c == s.quote {
				inQuote = false
			} else if c == '\n' {
				rec.newlines++
			}
		case s.quoting && c == s.quote && fieldStart:
			inQuote = true
		case c == '\n':
			rec.n, rec.contentEnd = i+1, i
			if s.crlf && i > 0 && data[i-1] == '\r' {
				rec.contentEnd--
			}
			rec.newlines++
			return rec
		}
		fieldStart = !inQuote && c == s.sep
	}
	if !atEOF {
		return csvRecord{status: csvRecMore}
	}
	if inQuote {
		return csvRecord{status: csvRecUnterminated}
	}
	rec.n, rec.contentEnd = len(data), len(data)
	if s.crlf && len(data) > 0 && data[len(data)-1] == '\r' {
		rec.contentEnd--
	}
	return rec
}

// csvMaxBadRaw bounds the raw text kept for a bad row that is cut short (an overlong line).
const csvMaxBadRaw = 4096

// Next returns the next batch of up to BatchRows good rows (plus any bad rows met on the way), or
// io.EOF when the file is exhausted. Read errors are returned wrapped with the file name.
func (s *CSVSource) Next(ctx context.Context) (*Batch, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.readErr != nil {
		return nil, s.readErr
	}
	if s.free == nil {
		s.free = make(chan *Batch, 16)
	}
	var old *Batch
	select {
	case old = <-s.free:
	default:
	}
	if s.expected == 0 && !s.guessed {
		s.guessed = true
		if err := s.guessFields(); err != nil {
			s.readErr = fmt.Errorf("%s: %w", s.name, err)
			return nil, s.readErr
		}
	}
	b := &Batch{Source: s.name, FileIndex: s.fileIndex, FirstRow: s.row, NumCols: s.expected}
	free := s.free
	b.recycle = func(b *Batch) {
		select {
		case free <- b:
		default:
		}
	}
	rowsWant := s.opts.BatchRows
	if old != nil {
		b.Data, b.RawData = old.Data[:0], old.RawData[:0]
		b.Ends, b.Nulls, b.Lines, b.RawEnds = old.Ends[:0], old.Nulls[:0], old.Lines[:0], old.RawEnds[:0]
	}
	if s.hintData > 0 && cap(b.Data) < s.hintData {
		b.Data = hugeMake[byte](s.hintData + s.hintData/8)
		b.RawData = hugeMake[byte](s.hintRaw + s.hintRaw/8)
	} else if cap(b.Data) == 0 {
		// The first batch: room for rows of 64 bytes (appending grows it for longer ones), instead of
		// growing from nothing, each doubling fresh memory.
		n := min(rowsWant, 1<<16) * 64
		b.Data, b.RawData = hugeMake[byte](n), hugeMake[byte](n)
	}
	if s.expected > 0 && cap(b.Ends) == 0 {
		rows := min(rowsWant, 1<<16) // BatchRows may be huge; the byte cap ends a batch anyway
		b.Ends = hugeMake[int32](rows * s.expected)
		b.Nulls = hugeMake[bool](rows * s.expected)
		b.Lines = hugeMake[int64](rows)
		b.RawEnds = hugeMake[int32](rows)
	}
	s.badBytes = 0
	plain := !s.opts.TrimSpace && s.null == "" && s.expected > 0 && !s.noPlainLines // plainLines' records can be in the input
	for b.NumRows < rowsWant && len(b.Bad) < rowsWant && len(b.RawData)+s.badBytes < csvBatchBytes {
		data := s.buf[s.pos:s.end]
		if len(data) == 0 {
			if s.eof {
				break
			}
			if err := s.fill(); err != nil {
				s.readErr = fmt.Errorf("%s: %w", s.name, err)
				return nil, s.readErr
			}
			continue
		}
		if s.skipping {
			s.skipLine(data)
			continue
		}
		if plain && s.plainLines(b, data, rowsWant) {
			continue // stopped at a record of another kind, or at the end of the data or the batch
		}
		if s.rng != nil && s.base+int64(s.pos) >= s.rng.To {
			break // the next record starts in the next range
		}
		// Parse within a window of MaxRecordBytes+1 so that the outcome never depends on how the
		// input happened to be chunked.
		view := data[:min(len(data), s.opts.MaxRecordBytes+1)]
		rec := s.parseRecord(b, view, s.eof && len(view) == len(data))
		switch rec.status {
		case csvRecMore:
			if len(data) > len(view) {
				s.badOverflow(b, view)
				continue
			}
			if err := s.fill(); err != nil {
				s.readErr = fmt.Errorf("%s: %w", s.name, err)
				return nil, s.readErr
			}
			continue
		case csvRecUnterminated:
			s.badFirstLine(b, view, "unterminated quoted field")
			continue
		case csvRecBadQuote:
			s.addBad(b, s.line, rec.reason, data[:rec.contentEnd])
			s.pos += rec.n
			s.line += int64(rec.newlines)
			continue
		}
		raw := data[:rec.contentEnd]
		s.pos += rec.n
		line := s.line
		s.line += int64(rec.newlines)
		if rec.fields == 1 && rec.contentEnd == 0 && s.expected != 1 {
			// A blank line: a NULL row in a single-column file, skipped otherwise. Its one field is
			// empty, so only Ends/Nulls hold something to drop.
			b.Ends, b.Nulls = b.Ends[:len(b.Ends)-1], b.Nulls[:len(b.Nulls)-1]
			continue
		}
		if s.expected == 0 {
			s.expected = rec.fields
			b.NumCols = rec.fields
		}
		if rec.fields < s.expected && s.opts.PadShort {
			rec.fields = s.padNulls(b, rec.fields)
		}
		if rec.fields != s.expected {
			n := len(b.Ends) - rec.fields
			start := int32(0)
			if n > 0 {
				start = b.Ends[n-1]
			}
			b.Data, b.Ends, b.Nulls = b.Data[:start], b.Ends[:n], b.Nulls[:n]
			s.addBad(b, line, fmt.Sprintf("ragged row: %d fields, want %d", rec.fields, s.expected), raw)
			continue
		}
		b.NumRows++
		b.Lines = append(b.Lines, line)
		b.RawData = append(b.RawData, raw...)
		b.RawEnds = append(b.RawEnds, int32(len(b.RawData)))
	}
	if b.NumRows == 0 && len(b.Bad) == 0 {
		return nil, io.EOF
	}
	s.row += int64(b.NumRows)
	s.hintData, s.hintRaw = len(b.Data), len(b.RawData)
	return b, nil
}

// csvBatchBytes cuts batches of huge rows short: Next ends a batch once its rows' raw text reaches it.
const csvBatchBytes = 8 << 20

// plainLines takes the usual records at the start of data (s.buf[s.pos:]) into b as parseRecord and Next
// would, one after the other in one loop: a record that is one line (found within MaxRecordBytes+1
// bytes), not blank, without escape (or an escape character at all when it has a quote), whose quotes
// only enclose whole fields of that line without a quote inside (appendQuotedLine), with the expected
// number of fields. It stops before any
// other record, at the end of the data or of the current range, and when the batch is full (Next's
// conditions), and reports whether it took a record: Next's loop takes the one it stopped at.
func (s *CSVSource) plainLines(b *Batch, data []byte, rowsWant int) bool {
	took := false
	// data[:cq] holds no quote and data[:ce] no escape byte (positions in data, moved back with it):
	// each is searched for over the next s.cleanWindow bytes at once, up to the first one found, and again
	// only when a line reaches past it, instead of in every line (two calls of IndexByte a line).
	cq, ce := -1, -1
	if !s.quoting {
		cq = math.MaxInt
	}
	if s.uesc == 0 {
		ce = math.MaxInt
	}
	for b.NumRows < rowsWant && len(b.Bad) < rowsWant && len(b.RawData)+s.badBytes < csvBatchBytes {
		if s.rng != nil && s.base+int64(s.pos) >= s.rng.To {
			break
		}
		nl := bytes.IndexByte(data[:min(len(data), s.opts.MaxRecordBytes+1)], '\n')
		if nl < 0 {
			break
		}
		line := data[:nl]
		// qi: the first quote or escape byte in line (firstQuoteOrEsc), -1 if none.
		if cq < nl {
			cq = firstOrEnd(data[:min(len(data), max(nl, s.cleanWindow))], s.quote)
		}
		if ce < nl {
			ce = firstOrEnd(data[:min(len(data), max(nl, s.cleanWindow))], s.uesc)
		}
		qi := -1
		if cq < nl {
			qi = cq
		}
		if ce < nl && (qi < 0 || ce < qi) {
			qi = ce
		}
		if qi >= 0 && s.esc != 0 {
			break
		}
		if s.crlf && len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			break // a blank line
		}
		saveData, saveEnds := len(b.Data), len(b.Ends)
		var fields int
		if qi < 0 {
			fields = s.appendUnquotedLine(b, line)
		} else {
			fields = s.appendQuotedLine(b, line, qi)
		}
		if fields != s.expected {
			b.Data, b.Ends, b.Nulls = b.Data[:saveData], b.Ends[:saveEnds], b.Nulls[:saveEnds]
			break // short or ragged, or quoted otherwise than appendQuotedLine takes
		}
		b.NumRows++
		b.Lines = append(b.Lines, s.line)
		b.RawData = append(b.RawData, line...)
		b.RawEnds = append(b.RawEnds, int32(len(b.RawData)))
		s.pos += nl + 1
		s.line++
		data = data[nl+1:]
		cq, ce = cq-(nl+1), ce-(nl+1)
		took = true
	}
	return took
}

// appendQuotedLine appends the fields of a line (without its terminator) whose first quote is at qi, for
// plainLines, when every quote in it opens a field (comes first in the line or after a separator) and
// is closed within the line, "" inside standing for one quote, followed by a separator or the line's
// end. Such a field is never NULL; the text between quoted fields is split as appendUnquotedLine splits
// it. It returns how many fields there were, or -1 (with fields appended to b: the caller takes them
// back) for any other line, which parseQuoted takes: a quoted field that goes on past the line (or is
// not closed), text after a closing quote, a quote inside an unquoted field. Only without an escape
// character (SourceOptions.Escape), whose rules parseQuoted applies.
func (s *CSVSource) appendQuotedLine(b *Batch, line []byte, qi int) int {
	sep, quote := s.sep, s.quote
	fields := 0
	for {
		rest := line[qi+1:]
		cq := bytes.IndexByte(rest, quote)
		if cq < 0 || qi > 0 && line[qi-1] != sep {
			return -1 // the field goes on past the line, or a quote inside an unquoted field
		}
		if qi > 0 {
			fields += s.appendUnquotedLine(b, line[:qi-1])
		}
		for cq+1 < len(rest) && rest[cq+1] == quote { // "" inside: one quote
			b.Data = append(b.Data, rest[:cq+1]...)
			rest = rest[cq+2:]
			if cq = bytes.IndexByte(rest, quote); cq < 0 {
				return -1
			}
		}
		b.Data = append(b.Data, rest[:cq]...)
		b.Ends = append(b.Ends, int32(len(b.Data)))
		b.Nulls = append(b.Nulls, false)
		fields++
		if cq+1 == len(rest) {
			return fields
		}
		if rest[cq+1] != sep {
			return -1 // text after the closing quote
		}
		line = rest[cq+2:]
		if qi = bytes.IndexByte(line, quote); qi < 0 {
			return fields + s.appendUnquotedLine(b, line)
		}
	}
}

// addBad records a bad row starting at line.
func (s *CSVSource) addBad(b *Batch, line int64, reason string, raw []byte) {
	b.Bad = append(b.Bad, BadRow{Line: line, Reason: reason, Raw: bytes.Clone(raw)})
	s.badBytes += len(raw)
}

// badOverflow handles a record longer than MaxRecordBytes (view holds its first MaxRecordBytes+1
// bytes and more input follows): if its first line fits, that line is the bad row and reading resumes at the next line;
// otherwise the start of the line is kept and the rest of it is skipped as it streams by.
func (s *CSVSource) badOverflow(b *Batch, view []byte) {
	reason := fmt.Sprintf("record longer than %d bytes", s.opts.MaxRecordBytes)
	if bytes.IndexByte(view, '\n') >= 0 {
		s.badFirstLine(b, view, reason)
		return
	}
	raw := view[:min(len(view), csvMaxBadRaw)]
	if s.crlf && raw[len(raw)-1] == '\r' {
		raw = raw[:len(raw)-1] // the line may end right after the window
	}
	s.addBad(b, s.line, reason, raw)
	s.pos += len(view)
	s.skipping = true
	s.line++
}

// badFirstLine reports the first physical line of the record at the start of view as bad and moves
// past it (all of view when it holds no line feed, which only happens at end of input).
func (s *CSVSource) badFirstLine(b *Batch, view []byte, reason string) {
	line, n := view, len(view)
	if nl := bytes.IndexByte(view, '\n'); nl >= 0 {
		line, n = view[:nl], nl+1
	}
	if s.crlf && len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	s.addBad(b, s.line, reason, line)
	s.pos += n
	s.line++
}

// skipLine discards data up to and including the next line feed while skipping an overlong line.
func (s *CSVSource) skipLine(data []byte) {
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		s.pos = s.end
		return
	}
	s.pos += nl + 1
	s.skipping = false
}
