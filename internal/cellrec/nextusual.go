package cellrec

// NextUsual is Next for the usual cell, a one-byte dictionary code and a one-byte value length in a
// region without tags, small enough to be inlined: a loop that decodes cells calls Next (and spills
// what it holds in registers around the call) only for the others. ok false: the first cell is not
// such a cell (or d is nil), and nothing is decoded.
func (d *Dict) NextUsual(cells []byte) (qualifier, value, rest []byte, ok bool) {
	if len(cells) > 1 && cells[0]&0x81 == 1 && cells[1] < 0x80 && d != nil && !d.tags {
		end := 2 + int(cells[1])
		return d.q[cells[0]>>1], cells[2:end:end], cells[end:], true
	}
	return nil, nil, cells, false
}

// UsualQualifiers returns the dictionary's qualifiers by code, for a loop that decodes the usual cell
// (NextUsual's: first byte code<<1|1, second byte the value's length below 0x80) itself, without
// NextUsual's results for the other cells: nil when the cells carry tags (none is of that form) or d is
// nil. The caller must not change them.
func (d *Dict) UsualQualifiers() [][]byte {
	if d == nil || d.tags {
		return nil
	}
	return d.q
}
