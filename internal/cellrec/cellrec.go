package cellrec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"unsafe"

	"github.com/hfload/hfload/internal/kv"
)

// Dict is an immutable, sorted list of distinct qualifiers that cells may name by index. Because it is
// sorted, comparing the indexes of two of its qualifiers compares the qualifiers. A nil *Dict is valid
// and empty. A Dict also says whether the cells of its records carry tags (NewTaggedDict): the same
// bytes are a different record under a dictionary with tags. It is safe for concurrent use.
type Dict struct {
	q    [][]byte
	tags bool // every cell ends with uvarint(len(tags)) tags
}

// NewDict returns a dictionary of copies of quals, sorted and without duplicates, for cells without tags.
func NewDict(quals [][]byte) *Dict {
	d := &Dict{}
	for _, q := range quals {
		d.q = append(d.q, bytes.Clone(q))
	}
	slices.SortFunc(d.q, bytes.Compare)
	d.q = slices.CompactFunc(d.q, bytes.Equal)
	return d
}

// NewTaggedDict is NewDict for cells that carry tags (HBase cell tags: TTL, visibility): each cell of
// its records holds its serialized tags after its value, possibly none.
func NewTaggedDict(quals [][]byte) *Dict {
	d := NewDict(quals)
	d.tags = true
	return d
}

// Tagged reports whether the cells of d's records carry tags.
func (d *Dict) Tagged() bool { return d != nil && d.tags }

// Len returns the number of qualifiers.
func (d *Dict) Len() int {
	if d == nil {
		return 0
	}
	return len(d.q)
}

// At returns qualifier i (not to be modified).
func (d *Dict) At(i int) []byte { return d.q[i] }

// Index returns the index of q, if the dictionary holds it.
func (d *Dict) Index(q []byte) (int, bool) {
	if d == nil {
		return 0, false
	}
	return slices.BinarySearchFunc(d.q, q, bytes.Compare)
}

// Header is what the cells of a record share.
type Header struct {
	Row    []byte
	Family []byte
	TS     int64
	Type   kv.Type
}

// AppendHeader starts a record: row, family, timestamp and type. Cells follow.
func AppendHeader(dst, row, family []byte, ts int64, typ kv.Type) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(row)))
	dst = append(dst, row...)
	dst = binary.AppendUvarint(dst, uint64(len(family)))
	dst = append(dst, family...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(ts))
	return append(dst, byte(typ))
}

// AppendLiteralCell appends a cell whose qualifier is stored in the record, for a dictionary without
// tags (with tags: Dict.AppendLiteralCellTags).
func AppendLiteralCell(dst, qualifier, value []byte) []byte {
	dst = binary.AppendUvarint(dst, 2*uint64(len(qualifier)))
	dst = append(dst, qualifier...)
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return append(dst, value...)
}

// AppendLiteralCellTags appends a cell whose qualifier is stored in the record, with tags when d's cells
// carry tags (Tagged). Without, tags must be empty: they have no place in the record.
func (d *Dict) AppendLiteralCellTags(dst, qualifier, value, tags []byte) []byte {
	return d.appendTags(AppendLiteralCell(dst, qualifier, value), tags)
}

// AppendCell appends a cell whose qualifier is entry i of d, with no tags.
func (d *Dict) AppendCell(dst []byte, i int, value []byte) []byte {
	return d.AppendCellTags(dst, i, value, nil)
}

// AppendCellTags appends a cell whose qualifier is entry i of d, with tags when d's cells carry tags
// (Tagged). Without, tags must be empty: they have no place in the record.
func (d *Dict) AppendCellTags(dst []byte, i int, value, tags []byte) []byte {
	dst = binary.AppendUvarint(dst, 2*uint64(i)+1)
	dst = binary.AppendUvarint(dst, uint64(len(value)))
	return d.appendTags(append(dst, value...), tags)
}

// appendTags ends a cell: its tags' length and tags when d's cells carry tags, nothing otherwise.
func (d *Dict) appendTags(dst, tags []byte) []byte {
	if !d.Tagged() {
		return dst
	}
	dst = binary.AppendUvarint(dst, uint64(len(tags)))
	return append(dst, tags...)
}

// AppendQualifierCell appends a cell with qualifier q, by index when d holds it, with no tags.
func (d *Dict) AppendQualifierCell(dst, q, value []byte) []byte {
	return d.AppendQualifierCellTags(dst, q, value, nil)
}

// AppendQualifierCellTags appends a cell with qualifier q, by index when d holds it, with tags when d's
// cells carry tags (Tagged; without, tags must be empty).
func (d *Dict) AppendQualifierCellTags(dst, q, value, tags []byte) []byte {
	if i, ok := d.Index(q); ok {
		return d.AppendCellTags(dst, i, value, tags)
	}
	return d.AppendLiteralCellTags(dst, q, value, tags)
}

// AppendRecord appends a record made of h and an encoded cells region (from Next's input, or a part of
// it that starts and ends at cell boundaries).
func AppendRecord(dst []byte, h *Header, cells []byte) []byte {
	dst = AppendHeader(dst, h.Row, h.Family, h.TS, h.Type)
	return append(dst, cells...)
}

var errShort = errors.New("truncated record")

// uvarint decodes a uvarint with a fast path for one byte. n <= 0 means malformed (binary.Uvarint).
func uvarint(b []byte) (uint64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// ParseHeader splits rec into its header and its cells region, checking the header's bounds only.
func ParseHeader(rec []byte) (Header, []byte, error) {
	// The usual record first: row and family lengths of one byte each.
	if len(rec) > 0 && rec[0] < 0x80 {
		f := 1 + int(rec[0]) // the family's length byte
		if f < len(rec) && rec[f] < 0x80 {
			e := f + 1 + int(rec[f]) // the family's end
			if e+9 <= len(rec) {
				return Header{Row: rec[1:f:f], Family: rec[f+1 : e : e], TS: int64(binary.BigEndian.Uint64(rec[e:])),
					Type: kv.Type(rec[e+8])}, rec[e+9:], nil
			}
		}
	}
	return parseHeader(rec)
}

// ParseHeaderTo is ParseHeader writing the header into *h (left as ParseHeader would return it), for a
// caller that keeps it in a struct: no Header is returned and copied (eight words) per record.
func ParseHeaderTo(h *Header, rec []byte) ([]byte, error) {
	if len(rec) > 0 && rec[0] < 0x80 {
		f := 1 + int(rec[0])
		if f < len(rec) && rec[f] < 0x80 {
			e := f + 1 + int(rec[f])
			if e+9 <= len(rec) {
				h.Row, h.Family = rec[1:f:f], rec[f+1:e:e]
				h.TS, h.Type = int64(binary.BigEndian.Uint64(rec[e:])), kv.Type(rec[e+8])
				return rec[e+9:], nil
			}
		}
	}
	var cells []byte
	var err error
	*h, cells, err = parseHeader(rec)
	return cells, err
}

// parseHeader is ParseHeader for any record.
func parseHeader(rec []byte) (Header, []byte, error) {
	var h Header
	rl, n := uvarint(rec)
	if n <= 0 || rl > uint64(len(rec)-n) {
		return h, nil, errShort
	}
	h.Row = rec[n : n+int(rl) : n+int(rl)]
	rec = rec[n+int(rl):]
	fl, n := uvarint(rec)
	if n <= 0 || fl > uint64(len(rec)-n) {
		return h, nil, errShort
	}
	h.Family = rec[n : n+int(fl) : n+int(fl)]
	rec = rec[n+int(fl):]
	if len(rec) < 9 {
		return h, nil, errShort
	}
	h.TS = int64(binary.BigEndian.Uint64(rec))
	h.Type = kv.Type(rec[8])
	return h, rec[9:], nil
}

// Row returns the row of a well-formed record (bounds are Go's).
func Row(rec []byte) []byte {
	rl, n := uvarint(rec)
	return rec[n : n+int(rl) : n+int(rl)]
}

// RowPrefix returns the first 8 bytes of the row of a well-formed record, big-endian, zero padded:
// comparing two prefixes as integers orders their rows as bytes.Compare does whenever they differ.
func RowPrefix(rec []byte) uint64 {
	return Prefix(Row(rec))
}

// Prefix returns the first 8 bytes of row, big-endian, zero padded.
func Prefix(row []byte) uint64 {
	if len(row) >= 8 {
		return binary.BigEndian.Uint64(row)
	}
	var b [8]byte
	copy(b[:], row)
	return binary.BigEndian.Uint64(b[:])
}

// Next decodes the first cell of a well-formed cells region and returns its qualifier, its value and
// the rest of the region; a cell's tags (Tagged) are skipped. It does not check bounds beyond Go's: use
// it on validated records.
//
// Its body repeats nextValue's on purpose: Next is on the sorter's per-cell path, and neither function
// is inlined; calling nextValue here measured about 18% slower per cell (64-cell records, 5 runs).
func (d *Dict) Next(cells []byte) (qualifier, value, rest []byte) {
	if len(cells) > 1 && cells[0]&0x81 == 1 && cells[1] < 0x80 && !d.Tagged() {
		// The usual cell: a one-byte dictionary code and a one-byte value length.
		end := 2 + int(cells[1])
		return d.q[cells[0]>>1], cells[2:end:end], cells[end:]
	}
	var q uint64
	n := 1
	if len(cells) != 0 && cells[0] < 0x80 { // uvarint's one-byte path, as in nextValue
		q = uint64(cells[0])
	} else {
		q, n = uvarint(cells)
	}
	cells = cells[n:]
	if q&1 == 1 {
		qualifier = d.q[q>>1]
	} else {
		l := int(q >> 1)
		qualifier = cells[:l:l]
		cells = cells[l:]
	}
	var vl uint64
	if n = 1; len(cells) != 0 && cells[0] < 0x80 {
		vl = uint64(cells[0])
	} else {
		vl, n = uvarint(cells)
	}
	end := n + int(vl)
	value, rest = cells[n:end:end], cells[end:]
	if d.Tagged() {
		tl, n := uvarint(rest)
		rest = rest[n+int(tl):]
	}
	return qualifier, value, rest
}

// NextTags is Next that also returns the cell's tags (nil when d's cells carry none).
func (d *Dict) NextTags(cells []byte) (qualifier, value, tags, rest []byte) {
	qualifier, value, rest = d.nextValue(cells)
	if d.Tagged() {
		tl, n := uvarint(rest)
		end := n + int(tl)
		tags, rest = rest[n:end:end], rest[end:]
	}
	return qualifier, value, tags, rest
}

// nextValue decodes a cell's qualifier and value and returns the rest from its tags on.
func (d *Dict) nextValue(cells []byte) (qualifier, value, rest []byte) {
	if len(cells) > 1 && cells[0]&0x81 == 1 && cells[1] < 0x80 {
		// The usual cell: a one-byte dictionary code and a one-byte value length.
		end := 2 + int(cells[1])
		return d.q[cells[0]>>1], cells[2:end:end], cells[end:]
	}
	// uvarint's one-byte path written out (it is too big to inline): qualifier codes and value lengths
	// are mostly one byte, and this runs for every cell the write phase reads.
	var q uint64
	n := 1
	if len(cells) != 0 && cells[0] < 0x80 {
		q = uint64(cells[0])
	} else {
		q, n = uvarint(cells)
	}
	cells = cells[n:]
	if q&1 == 1 {
		qualifier = d.q[q>>1]
	} else {
		l := int(q >> 1)
		qualifier = cells[:l:l]
		cells = cells[l:]
	}
	var vl uint64
	if n = 1; len(cells) != 0 && cells[0] < 0x80 {
		vl = uint64(cells[0])
	} else {
		vl, n = uvarint(cells)
	}
	end := n + int(vl)
	return qualifier, cells[n:end:end], cells[end:]
}

// AppendUntagged decodes the cells of a well-formed cells region from its first for as long as they carry
// no tags (all of them, when d's cells carry none) and appends their qualifiers and values to dst. It
// returns dst and the rest of the region, from the first cell with tags on. Like Next it checks no bounds
// beyond Go's: use it on validated records.
func (d *Dict) AppendUntagged(dst []kv.QualifierValue, cells []byte) ([]kv.QualifierValue, []byte) {
	tagged := d.Tagged()
	if !tagged && d != nil {
		// The usual cell first, in a loop of its own: a dictionary qualifier code and a value length of
		// one byte each. It stops at the first other cell, which the general loop below takes on.
		q, p := d.q, 0
		for p+1 < len(cells) {
			code, vl := cells[p], cells[p+1]
			end := p + 2 + int(vl)
			if code&1 == 0 || code|vl >= 0x80 || int(code>>1) >= len(q) || end > len(cells) {
				break
			}
			dst = append(dst, kv.QualifierValue{Qualifier: q[code>>1], Value: cells[p+2 : end : end]})
			p = end
		}
		cells = cells[p:]
	}
	for len(cells) > 0 {
		var q uint64
		n := 1
		if cells[0] < 0x80 { // uvarint's one-byte path, as in nextValue
			q = uint64(cells[0])
		} else {
			q, n = uvarint(cells)
		}
		rest := cells[n:]
		var qualifier []byte
		if q&1 == 1 {
			qualifier = d.q[q>>1]
		} else {
			l := int(q >> 1)
			qualifier, rest = rest[:l:l], rest[l:]
		}
		var vl uint64
		if n = 1; rest[0] < 0x80 {
			vl = uint64(rest[0])
		} else {
			vl, n = uvarint(rest)
		}
		end := n + int(vl)
		value := rest[n:end:end]
		rest = rest[end:]
		if tagged {
			if rest[0] != 0 { // tags follow: the caller takes this cell with NextTags
				break
			}
			rest = rest[1:]
		}
		dst = append(dst, kv.QualifierValue{Qualifier: qualifier, Value: value})
		cells = rest
	}
	return dst, cells
}

// Skip returns the rest of a well-formed cells region after its first cell, and that cell's qualifier.
func (d *Dict) Skip(cells []byte) (qualifier, rest []byte) {
	q, _, rest := d.Next(cells)
	return q, rest
}

// nextChecked is NextTags with bounds checks.
func (d *Dict) nextChecked(cells []byte) (qualifier, value, tags, rest []byte, err error) {
	qualifier, value, tags, rest, _, err = d.nextCode(cells)
	return qualifier, value, tags, rest, err
}

// nextCode is nextChecked that also returns the cell's qualifier code (2·i+1 for entry i of the
// dictionary, even for a literal).
func (d *Dict) nextCode(cells []byte) (qualifier, value, tags, rest []byte, code uint64, err error) {
	qualifier, value, rest, code, err = d.nextCodeValue(cells)
	if err != nil || !d.Tagged() {
		return qualifier, value, nil, rest, code, err
	}
	tl, n := uvarint(rest)
	if n <= 0 || tl > uint64(len(rest)-n) {
		return nil, nil, nil, nil, 0, errShort
	}
	end := n + int(tl)
	return qualifier, value, rest[n:end:end], rest[end:], code, nil
}

// nextCodeValue is nextCode up to the cell's value: rest starts at its tags, if it has any.
func (d *Dict) nextCodeValue(cells []byte) (qualifier, value, rest []byte, code uint64, err error) {
	q, n := uvarint(cells)
	if n <= 0 {
		return nil, nil, nil, 0, errShort
	}
	cells = cells[n:]
	if q&1 == 1 {
		if q>>1 >= uint64(d.Len()) {
			return nil, nil, nil, 0, fmt.Errorf("qualifier index %d outside the dictionary of %d", q>>1, d.Len())
		}
		qualifier = d.q[q>>1]
	} else {
		if q>>1 > uint64(len(cells)) {
			return nil, nil, nil, 0, errShort
		}
		l := int(q >> 1)
		qualifier = cells[:l:l]
		cells = cells[l:]
	}
	vl, n := uvarint(cells)
	if n <= 0 || vl > uint64(len(cells)-n) {
		return nil, nil, nil, 0, errShort
	}
	end := n + int(vl)
	return qualifier, cells[n:end:end], cells[end:], q, nil
}

// Validate checks that rec is a well-formed record: bounds, at least one cell, a storable type, sizes
// within HBase's limits (row, family, key, value and tags lengths of the KeyValues it stands for),
// well-formed tag lists (kv.CheckTags) and strictly ascending qualifiers. It returns the number of cells.
func (d *Dict) Validate(rec []byte) (int, error) {
	if n, ok := d.validShort(rec); ok {
		return n, nil
	}
	_, n, err := d.check(nil, rec, false)
	return n, err
}

// validShort is Validate for records whose lengths and qualifier codes all fit one byte (rows and
// values under 128 bytes, literal qualifiers under 64, dictionary indexes under 64: most records), in
// one loop. It reports false for any other record, valid or not; Validate then checks it the long way
// and says what is wrong.
func (d *Dict) validShort(rec []byte) (int, bool) {
	if len(rec) == 0 || rec[0] == 0 || rec[0] >= 0x80 {
		return 0, false
	}
	p := 1 + int(rec[0])
	if p >= len(rec) || rec[p] >= 0x80 { // a family of at most 127 bytes: HBase's limit
		return 0, false
	}
	p += 1 + int(rec[p])
	if p+9 >= len(rec) { // ts, type and at least one cell
		return 0, false
	}
	switch kv.Type(rec[p+8]) {
	case kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily,
		kv.TypeDeleteFamilyVersion:
	default:
		return 0, false
	}
	p += 9
	// The dictionary's qualifiers are looked at only when a literal one is compared with them: two
	// dictionary cells compare by code.
	nq, tagged := d.Len(), d.Tagged()
	n := 0
	var prevLit []byte
	var prevCode byte
	if !tagged {
		// The usual cells first, in a loop of their own (usualRun). The general loop below goes on from
		// the first other cell. Two checks wait for the loop's end: the codes ascend, so the last is the
		// largest and only it is checked against the dictionary; and a value running past the record
		// leaves p beyond its end, which stops the loop.
		p, n, prevCode = usualRun(rec, p)
		if p > len(rec) || n > 0 && int(prevCode>>1) >= nq {
			return 0, false
		}
	}
	for p < len(rec) {
		code := rec[p]
		if code >= 0x80 {
			return 0, false
		}
		p++
		var lit []byte
		if code&1 == 1 {
			if int(code>>1) >= nq { // also a nil Dict
				return 0, false
			}
		} else {
			l := int(code >> 1)
			if l > len(rec)-p {
				return 0, false
			}
			lit = rec[p : p+l]
			p += l
		}
		if p >= len(rec) || rec[p] >= 0x80 {
			return 0, false
		}
		vl := int(rec[p])
		p++
		if vl > len(rec)-p {
			return 0, false
		}
		p += vl
		if tagged {
			if p >= len(rec) || rec[p] >= 0x80 {
				return 0, false
			}
			tl := int(rec[p])
			p++
			if tl > len(rec)-p || kv.CheckTags(rec[p:p+tl]) != nil {
				return 0, false
			}
			p += tl
		}
		if n > 0 {
			if code&prevCode&1 == 1 {
				if code <= prevCode {
					return 0, false
				}
			} else {
				prev, q := prevLit, lit
				if prevCode&1 == 1 {
					prev = d.q[prevCode>>1]
				}
				if code&1 == 1 {
					q = d.q[code>>1]
				}
				if bytes.Compare(prev, q) >= 0 {
					return 0, false
				}
			}
		}
		prevLit, prevCode = lit, code
		n++
	}
	return n, true
}

// usualRun is validShort's loop over the usual cells of rec from p on: a dictionary qualifier code and a
// value length of one byte each, codes ascending. It returns where the first other cell starts (past
// len(rec) when the last value runs past the record), how many it went over and the last one's code
// (0 for none). The code and the value's length are read and checked as one little-endian 16-bit word
// (x&0x8081 == 1: an odd code and both below 0x80); the code 0 before the first cell (codes are odd)
// lets that one pass the order check.
//
// The word is read through an unsafe pointer (with checked indexes Go recomputed the bound and checked
// both bytes in every step): only at p with 0 <= p < len(rec)-1, so both bytes are in rec.
func usualRun(rec []byte, p int) (int, int, byte) {
	if p < 0 {
		return p, 0, 0
	}
	rp, last := unsafe.Pointer(unsafe.SliceData(rec)), len(rec)-1
	n, prev := 0, uint32(0)
	for p < last {
		x := uint32(*(*uint16)(unsafe.Add(rp, p)))
		if x&0x8081 != 1 || x&0xff <= prev {
			break
		}
		p += 2 + int(x>>8)
		prev = x & 0xff
		n++
	}
	return p, n, byte(prev)
}

// AppendKeyValuesChecked is Validate and AppendKeyValues in one pass: it appends the KeyValue records of
// every cell of rec to dst and returns the number of cells, or, when rec is not well-formed, dst as it
// was and Validate's error.
func (d *Dict) AppendKeyValuesChecked(dst, rec []byte) ([]byte, int, error) {
	return d.check(dst, rec, true)
}

// check validates rec and, with expand, appends the KeyValues of its cells to dst as it goes.
func (d *Dict) check(dst, rec []byte, expand bool) ([]byte, int, error) {
	h, cells, err := ParseHeader(rec)
	if err != nil {
		return dst, 0, err
	}
	switch {
	case len(h.Row) == 0:
		return dst, 0, errors.New("empty row")
	case len(h.Row) > kv.MaxRowLength:
		return dst, 0, fmt.Errorf("row of %d bytes exceeds HBase's limit of %d", len(h.Row), kv.MaxRowLength)
	case len(h.Family) > kv.MaxFamilyLength:
		return dst, 0, fmt.Errorf("family of %d bytes exceeds HBase's limit of %d", len(h.Family), kv.MaxFamilyLength)
	}
	switch h.Type {
	case kv.TypePut, kv.TypeDelete, kv.TypeDeleteColumn, kv.TypeDeleteFamily,
		kv.TypeDeleteFamilyVersion:
	default:
		return dst, 0, fmt.Errorf("type %s cannot be stored", h.Type)
	}
	if len(cells) == 0 {
		return dst, 0, errors.New("record without cells")
	}
	dst0 := len(dst)
	n := 0
	var prev []byte
	var prevCode uint64
	base := kv.KeyInfrastructureSize + len(h.Row) + len(h.Family)
	for len(cells) > 0 {
		q, v, tags, rest, code, err := d.nextCode(cells)
		if err != nil {
			return dst[:dst0], 0, fmt.Errorf("cell %d: %w", n, err)
		}
		if len(tags) > kv.MaxTagsLength {
			return dst[:dst0], 0, fmt.Errorf("cell %d: tags of %d bytes exceed HBase's limit of %d", n, len(tags), kv.MaxTagsLength)
		}
		if err := kv.CheckTags(tags); err != nil {
			return dst[:dst0], 0, fmt.Errorf("cell %d: %w", n, err)
		}
		if n > 0 {
			// Two qualifiers of the (sorted) dictionary compare as their indexes.
			ascending := code > prevCode
			if code&1 == 0 || prevCode&1 == 0 {
				ascending = bytes.Compare(prev, q) < 0
			}
			if !ascending {
				return dst[:dst0], 0, fmt.Errorf("cell %d: qualifier %q does not sort after %q", n, kv.ToStringBinary(q), kv.ToStringBinary(prev))
			}
		}
		if klen := base + len(q); klen > 1<<31-1 || len(v) > 1<<31-1-klen {
			return dst[:dst0], 0, fmt.Errorf("cell %d: key and value too large for a KeyValue", n)
		}
		if expand {
			dst = d.appendKeyValue(dst, &h, q, v, tags)
		}
		prev, prevCode, cells = q, code, rest
		n++
	}
	return dst, n, nil
}

// CheckCells checks that a cells region is well formed: bounds, dictionary indexes, at least one cell.
// Unlike Validate it does not compare qualifiers: it is for records validated once and read back.
func (d *Dict) CheckCells(cells []byte) error {
	if len(cells) == 0 {
		return errors.New("record without cells")
	}
	for len(cells) > 0 {
		var err error
		if _, _, _, cells, err = d.nextChecked(cells); err != nil {
			return err
		}
	}
	return nil
}

// Cells returns the number of cells of a well-formed cells region.
func (d *Dict) Cells(cells []byte) int {
	n := 0
	for len(cells) > 0 {
		_, cells = d.Skip(cells)
		n++
	}
	return n
}

// Last returns the last cell of a well-formed, non-empty cells region: its qualifier and where it starts.
func (d *Dict) Last(cells []byte) (qualifier []byte, off int) {
	rest := cells
	for {
		q, r := d.Skip(rest)
		if len(r) == 0 {
			return q, len(cells) - len(rest)
		}
		rest = r
	}
}

// KeyValueSize is the size of the KeyValue record (int32 keyLen | int32 valueLen | key | value) of a
// cell with header h, a qualifier of ql bytes and a value of vl bytes.
func KeyValueSize(h *Header, ql, vl int) int {
	return 8 + kv.KeyInfrastructureSize + len(h.Row) + len(h.Family) + ql + vl
}

// KeyValueSize is the size of the KeyValue record a cell of d's records stands for (what
// AppendKeyValues appends for it): the package's KeyValueSize, plus the tags length and tl bytes of
// tags when d's cells carry tags (int16 tagsLen | tags after the value, as HBase's KeyValue has them).
func (d *Dict) KeyValueSize(h *Header, ql, vl, tl int) int {
	n := KeyValueSize(h, ql, vl)
	if d.Tagged() {
		n += 2 + tl
	}
	return n
}

// appendKeyValue appends the KeyValue record of one cell of d's records: with tags when d's cells
// carry them.
func (d *Dict) appendKeyValue(dst []byte, h *Header, qualifier, value, tags []byte) []byte {
	if d.Tagged() {
		return kv.AppendKeyValueTags(dst, h.Row, h.Family, qualifier, h.TS, h.Type, value, tags)
	}
	return AppendKeyValue(dst, h, qualifier, value)
}

// AppendKeyValue appends the KeyValue record of one cell (no tags, no mvcc).
func AppendKeyValue(dst []byte, h *Header, qualifier, value []byte) []byte {
	return kv.AppendKeyValue(dst, h.Row, h.Family, qualifier, h.TS, h.Type, value)
}

// AppendKey appends the flat key of one cell.
func AppendKey(dst []byte, h *Header, qualifier []byte) []byte {
	return kv.AppendKey(dst, h.Row, h.Family, qualifier, h.TS, h.Type)
}

// Compare orders two cells, each given by its header and qualifier, as kv.CompareKeys orders
// their keys: row, family and qualifier as unsigned bytes, timestamp and type descending. (Records hold
// storable types only, so CompareKeys' special case for type Minimum does not arise.)
func Compare(a *Header, aq []byte, b *Header, bq []byte) int {
	if c := bytes.Compare(a.Row, b.Row); c != 0 {
		return c
	}
	return CompareInRow(a, aq, b, bq)
}

// CompareInRow is Compare for two cells known to have equal rows.
func CompareInRow(a *Header, aq []byte, b *Header, bq []byte) int {
	if c := bytes.Compare(a.Family, b.Family); c != 0 {
		return c
	}
	if c := bytes.Compare(aq, bq); c != 0 {
		return c
	}
	if a.TS != b.TS {
		if a.TS > b.TS {
			return -1
		}
		return 1
	}
	if a.Type != b.Type {
		if a.Type > b.Type {
			return -1
		}
		return 1
	}
	return 0
}

// FromKeyValues encodes KeyValue records (no mvcc; with tags exactly when d's cells carry them, as
// AppendKeyValues writes them) as records, one per maximal stretch of consecutive cells that share row,
// family, timestamp and type and have ascending qualifiers, and calls emit with each record and the
// number of cells in it. It is for tests and tools, not hot paths.
func (d *Dict) FromKeyValues(kvs [][]byte, emit func(rec []byte, cells int) error) error {
	var rec []byte
	var h Header
	var prevQ []byte
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		err := emit(rec, n)
		rec, n = rec[:0], 0
		return err
	}
	for _, kvRec := range kvs {
		key, value, m, err := kv.SplitKeyValue(kvRec)
		var tags []byte
		if err == nil && d.Tagged() {
			if len(kvRec)-m < 2 {
				err = errShort
			} else {
				tags = kvRec[m+2:]
				m += 2 + int(binary.BigEndian.Uint16(kvRec[m:]))
			}
		}
		if err != nil || m != len(kvRec) || !kv.Key(key).Valid() {
			return fmt.Errorf("cellrec: malformed KeyValue record of %d bytes", len(kvRec))
		}
		k := kv.Key(key)
		q := k.Qualifier()
		same := n > 0 && bytes.Equal(h.Row, k.Row()) && bytes.Equal(h.Family, k.Family()) && h.TS == k.Timestamp() &&
			h.Type == k.Type() && bytes.Compare(prevQ, q) < 0
		if !same {
			if err := flush(); err != nil {
				return err
			}
			h = Header{Row: bytes.Clone(k.Row()), Family: bytes.Clone(k.Family()), TS: k.Timestamp(), Type: k.Type()}
			rec = AppendHeader(rec, h.Row, h.Family, h.TS, h.Type)
		}
		rec = d.AppendQualifierCellTags(rec, q, value, tags)
		prevQ = append(prevQ[:0], q...)
		n++
	}
	return flush()
}

// AppendKeyValues appends the KeyValue records of every cell of a well-formed record to dst: with the
// cells' tags (int16 tagsLen | tags after the value, as in HBase's KeyValue) when d's cells carry tags.
func (d *Dict) AppendKeyValues(dst []byte, rec []byte) []byte {
	h, cells, err := ParseHeader(rec)
	if err != nil {
		return dst
	}
	for len(cells) > 0 {
		var q, v, t []byte
		q, v, t, cells = d.NextTags(cells)
		dst = d.appendKeyValue(dst, &h, q, v, t)
	}
	return dst
}
