package hfilewriter

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/hfload/hfload/internal/kv"
)

// parseChunkMin is the smallest input worth a second parsing goroutine.
const parseChunkMin = 1 << 20

// ParseCellText parses cell text (see kv.FormatCellLine) held in data and returns the cells sorted in
// HBase order, as ReadCellTextLabels does, with the same errors. It parses in place: escaped fields are
// decoded over their own text, and the cells' byte fields alias data, which the caller must then leave
// alone. Large inputs are parsed by several goroutines, one chunk of lines each; an input already in
// strictly ascending key order is not sorted.
func ParseCellText(data []byte, labels map[string]int) ([]Cell, error) {
	if len(data) == 0 {
		return []Cell{}, nil
	}
	// Chunks end after a newline, so that no line is cut.
	n := max(1, min(runtime.GOMAXPROCS(0), len(data)/parseChunkMin))
	var bounds []int
	for i, start := 0, 0; i < n && start < len(data); i++ {
		end := len(data)
		if i < n-1 {
			end = max(start, len(data)*(i+1)/n)
			if j := bytes.IndexByte(data[end:], '\n'); j >= 0 {
				end += j + 1
			} else {
				end = len(data)
			}
		}
		bounds = append(bounds, start, end)
		start = end
	}
	chunks := make([]parsedChunk, len(bounds)/2)
	var wg sync.WaitGroup
	for c := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			chunks[c] = parseCellChunk(data[bounds[2*c]:bounds[2*c+1]], labels)
		}()
	}
	wg.Wait()

	total, line := 0, 0
	for i := range chunks {
		if chunks[i].err != nil {
			return nil, fmt.Errorf("line %d: %w", line+chunks[i].errLine, chunks[i].err)
		}
		chunks[i].firstLine = line
		line += chunks[i].lines
		total += len(chunks[i].cells)
	}
	cells := chunks[0].cells
	if len(chunks) > 1 {
		cells = make([]Cell, 0, total)
		for i := range chunks {
			cells = append(cells, chunks[i].cells...)
		}
	}
	sorted := true
	for i := 1; i < len(cells); i++ {
		if compareCells(&cells[i-1], &cells[i]) >= 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return cells, nil
	}
	return sortCells(cells, chunks)
}

// parsedChunk is what one goroutine parsed: the cells of a run of lines and the line (1-based within
// the chunk) of each, or the first error and its line.
type parsedChunk struct {
	cells     []Cell
	lineOf    []int32 // line of each cell, within the chunk
	lines     int     // lines in the chunk
	firstLine int     // lines before the chunk
	err       error
	errLine   int
}

func parseCellChunk(data []byte, labels map[string]int) parsedChunk {
	var pc parsedChunk
	n := bytes.Count(data, []byte{'\n'}) + 1
	pc.cells = make([]Cell, 0, n)
	pc.lineOf = make([]int32, 0, n)
	var p cellParser
	for len(data) > 0 {
		pc.lines++
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte{'\r'}) // as bufio.ScanLines, which ReadCellText used
		if len(bytes.TrimRight(line, "\r")) == 0 {
			continue
		}
		c, err := p.parse(line, labels)
		if err != nil {
			pc.err, pc.errLine = err, pc.lines
			return pc
		}
		pc.cells = append(pc.cells, c)
		pc.lineOf = append(pc.lineOf, int32(min(pc.lines, 1<<31-1)))
	}
	return pc
}

// cellParser parses cell text lines in place; its scratch buffer keeps the text of an escaped column
// for an error message.
type cellParser struct {
	fields  [6][]byte
	scratch []byte
}

// parse is kv.ParseCellLineLabels on a line it may overwrite: same checks, same order, same errors.
func (p *cellParser) parse(line []byte, labels map[string]int) (Cell, error) {
	line = bytes.TrimSuffix(line, []byte{'\r'})
	nf := 0
	for rest := line; ; nf++ {
		i := bytes.IndexByte(rest, '\t')
		if nf < len(p.fields) {
			p.fields[nf] = rest
			if i >= 0 {
				p.fields[nf] = rest[:i]
			}
		}
		if i < 0 {
			nf++
			break
		}
		rest = rest[i+1:]
	}
	if nf != 5 && nf != 6 {
		return Cell{}, fmt.Errorf("want 5 or 6 tab-separated fields (row, family:qualifier, timestamp, type, value[, tags]), got %d", nf)
	}
	f := &p.fields
	var c Cell
	var err error
	if c.Row, err = unescapeInPlace(f[0]); err != nil {
		return Cell{}, fmt.Errorf("row: %w", err)
	}
	colText := f[1]
	if bytes.IndexByte(colText, '\\') >= 0 { // keep the text for an error message: decoding overwrites it
		p.scratch = append(p.scratch[:0], colText...)
		colText = p.scratch
	}
	col, err := unescapeInPlace(f[1])
	if err != nil {
		return Cell{}, fmt.Errorf("column: %w", err)
	}
	i := bytes.IndexByte(col, ':')
	if i < 0 {
		return Cell{}, fmt.Errorf("column %q has no ':' between family and qualifier", colText)
	}
	c.Family, c.Qualifier = col[:i:i], col[i+1:]
	if len(c.Family) == 0 {
		return Cell{}, fmt.Errorf("column %q has an empty family", colText)
	}
	var ok bool
	if c.Timestamp, ok = parseInt64(f[2]); !ok { // strconv judges the rest: '+', 19 digits, errors
		if c.Timestamp, err = strconv.ParseInt(string(f[2]), 10, 64); err != nil {
			return Cell{}, fmt.Errorf("timestamp %q: %w", f[2], err)
		}
	}
	if c.Type, err = parseType(f[3]); err != nil {
		return Cell{}, err
	}
	if c.Value, err = unescapeInPlace(f[4]); err != nil {
		return Cell{}, fmt.Errorf("value: %w", err)
	}
	if nf == 6 {
		if c.Tags, err = kv.ParseTags(string(f[5]), labels); err != nil {
			return Cell{}, fmt.Errorf("tags: %w", err)
		}
		if len(c.Tags) == 0 {
			c.Tags = nil
		}
	}
	if len(c.Row) == 0 {
		return Cell{}, fmt.Errorf("empty row")
	}
	if err := c.Validate(); err != nil {
		return Cell{}, err
	}
	return c, nil
}

// unescapeInPlace is kv.FromStringBinary decoding into b itself (the decoded bytes are never longer
// than their text); on an error b is left as it was and the error is FromStringBinary's.
func unescapeInPlace(b []byte) ([]byte, error) {
	i := bytes.IndexByte(b, '\\')
	if i < 0 {
		return b[:len(b):len(b)], nil
	}
	if _, err := kv.FromStringBinary(string(b)); err != nil { // rare: escapes are checked first, on a copy
		return nil, err
	}
	w := i
	for r := i; r < len(b); r++ {
		c := b[r]
		if c == '\\' && r+1 < len(b) && b[r+1] == 'x' {
			hi, _ := kv.Unhex(b[r+2])
			lo, _ := kv.Unhex(b[r+3])
			c = hi<<4 | lo
			r += 3
		}
		b[w] = c
		w++
	}
	return b[:w:w], nil
}

// parseInt64 parses a decimal int64 (optional '-'), reporting false for anything else, including
// overflow and a '+' sign (which strconv then judges).
func parseInt64(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	d := b
	if neg {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 { // 18 digits cannot overflow; longer ones go to strconv
		return 0, false
	}
	var v int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseType is kv.ParseType without a string per call.
func parseType(b []byte) (Type, error) {
	switch string(b) { // no allocation: the compiler compares in place
	case "Put":
		return kv.TypePut, nil
	case "Delete":
		return kv.TypeDelete, nil
	case "DeleteColumn":
		return kv.TypeDeleteColumn, nil
	case "DeleteFamily":
		return kv.TypeDeleteFamily, nil
	case "DeleteFamilyVersion":
		return kv.TypeDeleteFamilyVersion, nil
	}
	return kv.ParseType(string(b))
}

// compareCells orders cells of storable types as kv.CompareKeys orders their keys: row, family and
// qualifier ascending, timestamp and type descending.
func compareCells(a, b *Cell) int {
	if c := bytes.Compare(a.Row, b.Row); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	if c := bytes.Compare(a.Qualifier, b.Qualifier); c != 0 {
		return c
	}
	switch {
	case a.Timestamp > b.Timestamp:
		return -1
	case a.Timestamp < b.Timestamp:
		return 1
	case a.Type > b.Type:
		return -1
	case a.Type < b.Type:
		return 1
	}
	return 0
}

// sortEntry is one cell in sortCells.
type sortEntry struct {
	p1, p2 uint64 // row bytes [0, 8) and [8, 16), big-endian, zero padded
	ts     int64
	col    uint32 // rank of (family, qualifier) among the distinct columns
	i      int32  // index in cells
	rowLen uint16
	typ    uint8
}

// columnRanks numbers the distinct (family, qualifier) pairs of cells in their sort order and returns
// each cell's number.
func columnRanks(cells []Cell) []uint32 {
	ids := make([]uint32, len(cells))
	byFamily := map[string]map[string]uint32{}
	type column struct{ family, qualifier string }
	var cols []column
	for i := range cells {
		c := &cells[i]
		quals := byFamily[string(c.Family)]
		if quals == nil {
			quals = map[string]uint32{}
			byFamily[string(c.Family)] = quals
		}
		id, ok := quals[string(c.Qualifier)]
		if !ok {
			id = uint32(len(cols))
			quals[string(c.Qualifier)] = id
			cols = append(cols, column{string(c.Family), string(c.Qualifier)})
		}
		ids[i] = id
	}
	byRank := make([]uint32, len(cols))
	for i := range byRank {
		byRank[i] = uint32(i)
	}
	slices.SortFunc(byRank, func(x, y uint32) int {
		if c := cmp.Compare(cols[x].family, cols[y].family); c != 0 {
			return c
		}
		return cmp.Compare(cols[x].qualifier, cols[y].qualifier)
	})
	rank := make([]uint32, len(cols))
	for r, id := range byRank {
		rank[id] = uint32(r)
	}
	for i, id := range ids {
		ids[i] = rank[id]
	}
	return ids
}

// rowWord is bytes [off, off+8) of row as a big-endian word, zero padded.
func rowWord(row []byte, off int) uint64 {
	if off >= len(row) {
		return 0
	}
	row = row[off:]
	if len(row) >= 8 {
		return binary.BigEndian.Uint64(row)
	}
	var b [8]byte
	copy(b[:], row)
	return binary.BigEndian.Uint64(b[:])
}

// sortCells sorts cells (input order for equal keys) and rejects two cells with one key, naming their
// lines as ReadCellText did.
func sortCells(cells []Cell, chunks []parsedChunk) ([]Cell, error) {
	lines := make([]int32, 0, len(cells))
	for i := range chunks {
		for _, l := range chunks[i].lineOf {
			lines = append(lines, int32(chunks[i].firstLine)+l)
		}
	}
	// Sort compact entries rather than the cells, so that comparisons stay within the entries, in
	// cache: the row's first 16 bytes as two big-endian words (zero padded) and its length, the rank of
	// the cell's column among the distinct columns, the timestamp and the type. Only rows longer than
	// 16 bytes that share their first 16 look at the cells. Equal keys keep input order.
	ranks := columnRanks(cells)
	order := make([]sortEntry, len(cells))
	for i := range cells {
		c := &cells[i]
		order[i] = sortEntry{p1: rowWord(c.Row, 0), p2: rowWord(c.Row, 8), ts: c.Timestamp, col: ranks[i],
			i: int32(i), rowLen: uint16(min(len(c.Row), 1<<16-1)), typ: uint8(c.Type)}
	}
	slices.SortFunc(order, func(x, y sortEntry) int {
		switch {
		case x.p1 != y.p1:
			return cmp.Compare(x.p1, y.p1)
		case x.p2 != y.p2:
			return cmp.Compare(x.p2, y.p2)
		case x.rowLen != y.rowLen && (x.rowLen <= 16 || y.rowLen <= 16):
			return cmp.Compare(x.rowLen, y.rowLen) // equal words: the shorter row is a prefix
		case x.rowLen > 16:
			if c := bytes.Compare(cells[x.i].Row[16:], cells[y.i].Row[16:]); c != 0 {
				return c
			}
		}
		switch {
		case x.col != y.col:
			return cmp.Compare(x.col, y.col)
		case x.ts != y.ts:
			return cmp.Compare(y.ts, x.ts) // descending
		case x.typ != y.typ:
			return cmp.Compare(y.typ, x.typ) // descending
		}
		return cmp.Compare(x.i, y.i)
	})
	out := make([]Cell, len(cells))
	for i, e := range order {
		j := e.i
		out[i] = cells[j]
		if i > 0 && compareCells(&cells[order[i-1].i], &cells[j]) == 0 {
			return nil, fmt.Errorf("lines %d and %d have the same key %s", lines[order[i-1].i], lines[j], Key(cells[j].Key()))
		}
	}
	return out, nil
}
