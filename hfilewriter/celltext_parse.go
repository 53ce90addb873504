package hfilewriter

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"errors"
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
	parallel := func(f func(c int, data []byte)) {
		var wg sync.WaitGroup
		for c := range chunks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(c, data[bounds[2*c]:bounds[2*c+1]])
			}()
		}
		wg.Wait()
	}
	// Count the lines of each chunk, then parse each into its own part of one slice of cells, so that
	// the cells are neither appended piecemeal nor copied together.
	parallel(func(c int, data []byte) {
		chunks[c].lines = bytes.Count(data, []byte{'\n'})
		if data[len(data)-1] != '\n' {
			chunks[c].lines++
		}
	})
	total := 0
	for c := range chunks {
		chunks[c].firstLine, chunks[c].first = total, total
		total += chunks[c].lines
	}
	cells := make([]Cell, total)
	lines := make([]int32, total) // the line of each cell, for errors
	parallel(func(c int, data []byte) {
		pc := &chunks[c]
		pc.n, pc.err, pc.errLine = parseCellChunk(data, labels, cells[pc.first:pc.first+pc.lines], lines[pc.first:], pc.firstLine)
	})
	n = 0
	for c := range chunks {
		pc := &chunks[c]
		if pc.err != nil {
			return nil, fmt.Errorf("line %d: %w", pc.errLine, pc.err)
		}
		if n != pc.first { // blank lines left gaps
			copy(cells[n:], cells[pc.first:pc.first+pc.n])
			copy(lines[n:], lines[pc.first:pc.first+pc.n])
		}
		n += pc.n
	}
	clear(cells[n:]) // no references into data beyond the cells
	cells, lines = cells[:n:n], lines[:n]
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
	if err := sortCells(cells, lines); err != nil {
		return nil, err
	}
	return cells, nil
}

// parsedChunk is one goroutine's share of the lines: their number, where its cells start in the
// slice of all cells and how many it parsed, or its first error and that error's line.
type parsedChunk struct {
	lines, firstLine int
	first, n         int
	err              error
	errLine          int
}

// parseCellChunk parses the lines of data into cells and their line numbers into lineOf (the first
// line of data being line firstLine+1), returning the number of cells, or the first error and its line.
func parseCellChunk(data []byte, labels map[string]int, cells []Cell, lineOf []int32, firstLine int) (int, error, int) {
	var p cellParser
	n, line := 0, firstLine
	for len(data) > 0 {
		line++
		l := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		l = bytes.TrimSuffix(l, []byte{'\r'}) // as bufio.ScanLines, which ReadCellText used
		if len(bytes.TrimRight(l, "\r")) == 0 {
			continue
		}
		if err := p.parse(l, labels, &cells[n]); err != nil {
			return n, err, line
		}
		lineOf[n] = int32(min(line, 1<<31-1))
		n++
	}
	return n, nil, 0
}

// cellParser parses cell text lines in place; its scratch buffer keeps the text of an escaped column
// for an error message. With copyOut, it leaves the line alone and decodes escaped fields into arena
// instead (WriteSortedCellText: the text must stay as it was for ParseCellText).
type cellParser struct {
	fields  [6][]byte
	scratch []byte
	copyOut bool
	arena   []byte
}

// parse is kv.ParseCellLineLabels on a line it may overwrite: same checks, same order, same errors.
func (p *cellParser) parse(line []byte, labels map[string]int, out *Cell) error {
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
		return fmt.Errorf("want 5 or 6 tab-separated fields (row, family:qualifier, timestamp, type, value[, tags]), got %d", nf)
	}
	f := &p.fields
	c := out
	*c = Cell{}
	var err error
	if c.Row, err = p.unescape(f[0]); err != nil {
		return fmt.Errorf("row: %w", err)
	}
	colText := f[1]
	if bytes.IndexByte(colText, '\\') >= 0 { // keep the text for an error message: decoding overwrites it
		p.scratch = append(p.scratch[:0], colText...)
		colText = p.scratch
	}
	col, err := p.unescape(f[1])
	if err != nil {
		return fmt.Errorf("column: %w", err)
	}
	i := bytes.IndexByte(col, ':')
	if i < 0 {
		return fmt.Errorf("column %q has no ':' between family and qualifier", colText)
	}
	c.Family, c.Qualifier = col[:i:i], col[i+1:]
	if len(c.Family) == 0 {
		return fmt.Errorf("column %q has an empty family", colText)
	}
	var ok bool
	if c.Timestamp, ok = parseInt64(f[2]); !ok { // strconv judges the rest: '+', 19 digits, errors
		if c.Timestamp, err = strconv.ParseInt(string(f[2]), 10, 64); err != nil {
			return fmt.Errorf("timestamp %q: %w", f[2], err)
		}
	}
	if c.Type, err = parseType(f[3]); err != nil {
		return err
	}
	if c.Value, err = p.unescape(f[4]); err != nil {
		return fmt.Errorf("value: %w", err)
	}
	if nf == 6 {
		if c.Tags, err = kv.ParseTags(string(f[5]), labels); err != nil {
			return fmt.Errorf("tags: %w", err)
		}
		if len(c.Tags) == 0 {
			c.Tags = nil
		}
	}
	if len(c.Row) == 0 {
		return fmt.Errorf("empty row")
	}
	if err := c.Validate(); err != nil {
		return err
	}
	return nil
}

// unescape decodes a field's escapes in place or, with copyOut, into the arena.
func (p *cellParser) unescape(b []byte) ([]byte, error) {
	if !p.copyOut {
		return unescapeInPlace(b)
	}
	i := bytes.IndexByte(b, '\\')
	if i < 0 {
		return b[:len(b):len(b)], nil
	}
	start := len(p.arena)
	p.arena = append(p.arena, b[:i]...)
	for r := i; r < len(b); r++ {
		c := b[r]
		if c == '\\' && r+1 < len(b) && b[r+1] == 'x' {
			if r+3 >= len(b) {
				return nil, errBadEscape
			}
			hi, ok1 := kv.Unhex(b[r+2])
			lo, ok2 := kv.Unhex(b[r+3])
			if !ok1 || !ok2 {
				return nil, errBadEscape
			}
			c = hi<<4 | lo
			r += 3
		}
		p.arena = append(p.arena, c)
	}
	return p.arena[start:len(p.arena):len(p.arena)], nil
}

// errBadEscape is unescape's error with copyOut, which only WriteSortedCellText sees: it then leaves the
// text to ParseCellText, whose error names the escape.
var errBadEscape = errors.New("bad \\x escape")

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

// parallelSort sorts s with one goroutine per part (one part per processor, at least 64k entries
// each), then merges the parts pairwise; it returns the sorted entries (s or a buffer of its size).
// cmp must order any two entries (no ties), so the result does not depend on the parts.
func parallelSort(s []sortEntry, cmp func(x, y sortEntry) int) []sortEntry {
	parts := max(1, min(runtime.GOMAXPROCS(0), len(s)/(64<<10)))
	bounds := make([]int, parts+1)
	for p := range bounds {
		bounds[p] = len(s) * p / parts
	}
	buf := make([]sortEntry, len(s))
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			radixSortEntries(s[bounds[p]:bounds[p+1]], buf[bounds[p]:bounds[p+1]], cmp)
		}()
	}
	wg.Wait()
	for len(bounds) > 2 {
		var next []int
		for p := 0; p+1 < len(bounds); p += 2 {
			lo, mid, hi := bounds[p], bounds[p+1], bounds[p+1]
			if p+2 < len(bounds) {
				hi = bounds[p+2]
			}
			next = append(next, lo)
			wg.Add(1)
			go func() {
				defer wg.Done()
				mergeEntries(buf[lo:hi], s[lo:mid], s[mid:hi], cmp)
			}()
		}
		wg.Wait()
		bounds = append(next, len(s))
		s, buf = buf, s
	}
	return s
}

// mergeEntries merges the sorted a and b into dst (len(a)+len(b) long).
func mergeEntries(dst, a, b []sortEntry, cmp func(x, y sortEntry) int) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if cmp(b[j], a[i]) < 0 {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
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

// sortCells sorts cells in place (input order for equal keys) and rejects two cells with one key,
// naming their lines (lines[i] is the line of cells[i]) as ReadCellText did.
func sortCells(cells []Cell, lines []int32) error {
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
	cmpEntries := func(x, y sortEntry) int {
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
	}
	order = parallelSort(order, cmpEntries)
	for k := 1; k < len(order); k++ {
		x, y := order[k-1], order[k]
		if x.p1 != y.p1 || x.p2 != y.p2 || x.rowLen != y.rowLen || x.col != y.col || x.ts != y.ts || x.typ != y.typ {
			continue // entries that differ are different keys: no need to look at the cells
		}
		if a, b := x.i, y.i; compareCells(&cells[a], &cells[b]) == 0 {
			return fmt.Errorf("lines %d and %d have the same key %s", lines[a], lines[b], Key(cells[b].Key()))
		}
	}
	// Permute in place, cycle by cycle: position k takes cells[order[k].i].
	for k := range order {
		if order[k].i < 0 {
			continue
		}
		tmp := cells[k]
		j := k
		for {
			src := int(order[j].i)
			order[j].i = -1
			if src == k {
				cells[j] = tmp
				break
			}
			cells[j] = cells[src]
			j = src
		}
	}
	return nil
}
