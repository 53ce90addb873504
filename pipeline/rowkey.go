package pipeline

import (
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/hfload/hfload/internal/kv"
)

// partKind is the kind of a compiled row-key or qualifier part.
type partKind uint8

const (
	pkColumn partKind = iota
	pkLiteral
	pkSalt
	pkHash
	pkReverseTS
	pkTimeBucket
	pkTimeOffset
)

// part is a compiled PartConfig.
type part struct {
	kind    partKind
	col     int  // slot of the column in the row's values (column-based parts)
	typ     Type // encoding of a column part
	flip    bool
	reverse bool
	width   int // pad target (column parts) or byte width (hash, time parts)
	padLeft bool
	padChar byte
	lit     []byte
	buckets int
	sub     []part
	// time parts
	interval int64 // ms
	unitMS   int64 // 1000 (s) or 1 (ms)
}

// partContext resolves column names while compiling parts.
type partContext interface {
	columnSlot(name string) (int, error)
	columnType(slot int) Type
}

// compileParts compiles a list of parts. top allows salt (row keys only); hash sub-parts allow neither.
func compileParts(cfgs []PartConfig, ctx partContext, where string, top, allowHash bool) ([]part, error) {
	parts := make([]part, 0, len(cfgs))
	salts := 0
	for i := range cfgs {
		p, err := compilePart(&cfgs[i], ctx, allowHash)
		if err != nil {
			return nil, fmt.Errorf("%s part %d: %w", where, i+1, err)
		}
		if p.kind == pkSalt {
			if !top {
				return nil, fmt.Errorf("%s part %d: salt is only allowed in the row key, not in hashes or qualifiers", where, i+1)
			}
			salts++
			if salts > 1 {
				return nil, fmt.Errorf("%s part %d: only one salt part is allowed", where, i+1)
			}
		}
		parts = append(parts, p)
	}
	return parts, nil
}

func compilePart(c *PartConfig, ctx partContext, allowHash bool) (part, error) {
	var p part
	if c.kinds() != 1 {
		return p, errors.New("exactly one of column, literal, salt, hash, reverse_timestamp, time_bucket, time_offset must be set")
	}
	modifiers := c.Type != "" || c.FlipSign || c.Reverse || c.Width != 0 || c.Pad != "" || c.PadChar != ""
	if c.Column == "" && modifiers {
		return p, errors.New("type, flip_sign, reverse, width, pad and pad_char only apply to column parts")
	}
	switch {
	case c.Column != "":
		return compileColumnPart(c, ctx)
	case c.Literal != nil:
		b, err := kv.FromStringBinary(*c.Literal)
		if err != nil {
			return p, fmt.Errorf("literal %q: %w", *c.Literal, err)
		}
		p.kind, p.lit = pkLiteral, b
	case c.Salt != 0:
		if c.Salt < 1 || c.Salt > 256 {
			return p, fmt.Errorf("salt buckets %d out of range 1..256", c.Salt)
		}
		p.kind, p.buckets = pkSalt, c.Salt
	case c.Hash != nil:
		return compileHashPart(c.Hash, ctx, allowHash)
	case c.ReverseTimestamp != "":
		slot, err := ctx.columnSlot(c.ReverseTimestamp)
		if err != nil {
			return p, err
		}
		p.kind, p.col = pkReverseTS, slot
	case c.TimeBucket != nil:
		return compileTimePart(c.TimeBucket, pkTimeBucket, ctx)
	case c.TimeOffset != nil:
		return compileTimePart(c.TimeOffset, pkTimeOffset, ctx)
	}
	return p, nil
}

// kinds counts the kinds of part c sets (column, literal, salt, ...): exactly one is valid.
func (c *PartConfig) kinds() int {
	n := 0
	for _, set := range []bool{c.Column != "", c.Literal != nil, c.Salt != 0, c.Hash != nil, c.ReverseTimestamp != "",
		c.TimeBucket != nil, c.TimeOffset != nil} {
		if set {
			n++
		}
	}
	return n
}

// compileColumnPart compiles a column part with its modifiers (type, flip_sign, reverse, width, pad).
func compileColumnPart(c *PartConfig, ctx partContext) (part, error) {
	var p part
	slot, err := ctx.columnSlot(c.Column)
	if err != nil {
		return p, err
	}
	p.kind, p.col, p.typ = pkColumn, slot, ctx.columnType(slot)
	if c.Type != "" {
		if p.typ, err = ParseType(c.Type); err != nil {
			return p, err
		}
	}
	if c.FlipSign {
		switch p.typ {
		case TypeLong, TypeInt, TypeShort, TypeDouble, TypeFloat, TypeTimestamp:
		default:
			return p, fmt.Errorf("flip_sign needs a binary number type, not %s", p.typ)
		}
	}
	p.flip, p.reverse = c.FlipSign, c.Reverse
	if c.Width < 0 || c.Width > kv.MaxRowLength {
		return p, fmt.Errorf("width %d out of range 0..%d", c.Width, kv.MaxRowLength)
	}
	p.width = c.Width
	switch strings.ToLower(c.Pad) {
	case "", "left":
		p.padLeft, p.padChar = true, '0'
	case "right":
		p.padLeft, p.padChar = false, ' '
	default:
		return p, fmt.Errorf("pad %q: want left or right", c.Pad)
	}
	if c.PadChar != "" {
		b, err := kv.FromStringBinary(c.PadChar)
		if err != nil || len(b) != 1 {
			return p, fmt.Errorf("pad_char %q must be exactly one byte", c.PadChar)
		}
		p.padChar = b[0]
	}
	if (c.Pad != "" || c.PadChar != "") && c.Width == 0 {
		return p, errors.New("pad and pad_char need a width")
	}
	return p, nil
}

// compileHashPart compiles hash(parts): the first bytes of the MD5 of its (unnested) parts.
func compileHashPart(h *HashConfig, ctx partContext, allowHash bool) (part, error) {
	var p part
	if !allowHash {
		return p, errors.New("hash parts cannot be nested")
	}
	n := h.Bytes
	if n == 0 {
		n = md5.Size
	}
	if n < 1 || n > md5.Size {
		return p, fmt.Errorf("hash bytes %d out of range 1..16", n)
	}
	if len(h.Parts) == 0 {
		return p, errors.New("hash needs parts")
	}
	sub, err := compileParts(h.Parts, ctx, "hash", false, false)
	if err != nil {
		return p, err
	}
	p.kind, p.width, p.sub = pkHash, n, sub
	return p, nil
}

// compileTimePart compiles time_bucket (kind pkTimeBucket) or time_offset (pkTimeOffset).
func compileTimePart(tc *TimeConfig, kind partKind, ctx partContext) (part, error) {
	var p part
	slot, err := ctx.columnSlot(tc.Column)
	if err != nil {
		return p, err
	}
	p.kind, p.col = kind, slot
	if p.interval, err = parseInterval(tc.Interval); err != nil {
		return p, err
	}
	switch strings.ToLower(tc.Unit) {
	case "", "s", "seconds":
		p.unitMS = 1000
	case "ms", "millis":
		p.unitMS = 1
	default:
		return p, fmt.Errorf("time unit %q: want s or ms", tc.Unit)
	}
	if p.interval%p.unitMS != 0 {
		return p, fmt.Errorf("interval %s is not a whole number of %s", tc.Interval, tc.Unit)
	}
	p.width = tc.Width
	if kind == pkTimeBucket {
		if p.width == 0 {
			p.width = 4
		}
		if p.width != 4 && p.width != 8 {
			return p, fmt.Errorf("time_bucket width %d: want 4 or 8", p.width)
		}
		if p.width == 4 && p.unitMS == 1 {
			return p, errors.New("time_bucket in ms needs width 8 (4 bytes of milliseconds end in 1970)")
		}
		return p, nil
	}
	if p.width == 0 {
		p.width = 2
	}
	if p.width < 2 || p.width > 4 {
		return p, fmt.Errorf("time_offset width %d: want 2, 3 or 4", p.width)
	}
	if max := p.interval/p.unitMS - 1; p.width < 8 && max >= int64(1)<<(8*p.width) {
		return p, fmt.Errorf("time_offset: offsets up to %d do not fit in %d bytes", max, p.width)
	}
	return p, nil
}

// keyBuilder appends parts. It belongs to one worker.
type keyBuilder struct {
	enc  encoder
	hash []byte // scratch for hash parts
	// per-row cache of column times (a time column often feeds the key and the cell timestamp)
	ms   []int64
	msOK []bool
}

// resetRow forgets the cached times of the previous row.
func (kb *keyBuilder) resetRow(ncols int) {
	if len(kb.msOK) != ncols {
		kb.ms, kb.msOK = make([]int64, ncols), make([]bool, ncols)
	}
	clear(kb.msOK)
}

// millis is enc.toMillis of column slot, computed once per row.
func (kb *keyBuilder) millis(vals []value, cols []column, slot int) (int64, error) {
	if slot < len(kb.msOK) && kb.msOK[slot] {
		return kb.ms[slot], nil
	}
	ms, err := kb.enc.toMillis(&vals[slot], &cols[slot].tf)
	if err == nil && slot < len(kb.msOK) {
		kb.ms[slot], kb.msOK[slot] = ms, true
	}
	return ms, err
}

// appendParts appends the encoded parts to dst using the row's values.
func (kb *keyBuilder) appendParts(dst []byte, parts []part, vals []value, cols []column) ([]byte, error) {
	salt := -1
	var saltBuckets int
	for i := range parts {
		p := &parts[i]
		var err error
		switch p.kind {
		case pkLiteral:
			dst = append(dst, p.lit...)
		case pkSalt:
			salt, saltBuckets = len(dst), p.buckets
			dst = append(dst, 0)
		case pkColumn:
			dst, err = kb.appendColumn(dst, p, vals, cols)
		case pkHash:
			kb.hash, err = kb.appendParts(kb.hash[:0], p.sub, vals, cols)
			if err == nil {
				sum := md5.Sum(kb.hash)
				dst = append(dst, sum[:p.width]...)
			}
		case pkReverseTS:
			var ms int64
			ms, err = kb.millis(vals, cols, p.col)
			if err == nil {
				if ms < 0 {
					err = fmt.Errorf("reverse_timestamp of column %q: negative time %d", cols[p.col].name, ms)
				} else {
					dst = binary.BigEndian.AppendUint64(dst, uint64(math.MaxInt64-ms))
				}
			}
		case pkTimeBucket, pkTimeOffset:
			dst, err = kb.appendTime(dst, p, vals, cols)
		}
		if err != nil {
			return dst, err
		}
	}
	if salt >= 0 {
		dst[salt] = SaltByte(dst[salt+1:], saltBuckets)
	}
	return dst, nil
}

func (kb *keyBuilder) appendColumn(dst []byte, p *part, vals []value, cols []column) ([]byte, error) {
	v := &vals[p.col]
	c := &cols[p.col]
	start := len(dst)
	if v.kind == vkNull {
		if !c.nullEmpty {
			return dst, fmt.Errorf("column %q is NULL", c.name)
		}
	} else {
		var err error
		dst, err = kb.enc.encode(dst, v, p.typ, &c.tf)
		if err != nil {
			return dst, fmt.Errorf("column %q: %w", c.name, err)
		}
	}
	b := dst[start:]
	if p.flip {
		flipSign(b, p.typ)
	}
	if p.reverse {
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
	}
	if p.width > 0 {
		n := len(b)
		if n > p.width {
			return dst, fmt.Errorf("column %q: %d bytes do not fit width %d", c.name, n, p.width)
		}
		for k := n; k < p.width; k++ {
			dst = append(dst, p.padChar)
		}
		if p.padLeft {
			b = dst[start:]
			copy(b[p.width-n:], b[:n])
			for k := 0; k < p.width-n; k++ {
				b[k] = p.padChar
			}
		}
	}
	return dst, nil
}

// flipSign makes unsigned byte order equal numeric order for big-endian numbers: the sign bit of
// integers is inverted; for IEEE floats all bits are inverted when negative, else the sign bit.
func flipSign(b []byte, t Type) {
	if len(b) == 0 {
		return
	}
	switch t {
	case TypeDouble, TypeFloat:
		if b[0]&0x80 != 0 {
			for i := range b {
				b[i] = ^b[i]
			}
			return
		}
	}
	b[0] ^= 0x80
}

func (kb *keyBuilder) appendTime(dst []byte, p *part, vals []value, cols []column) ([]byte, error) {
	c := &cols[p.col]
	ms, err := kb.millis(vals, cols, p.col)
	if err != nil {
		return dst, fmt.Errorf("column %q: %w", c.name, err)
	}
	start := floorDiv(ms, p.interval) * p.interval
	if p.kind == pkTimeBucket {
		n := start / p.unitMS
		if p.width == 8 {
			return binary.BigEndian.AppendUint64(dst, uint64(n)), nil
		}
		if n < 0 || n > math.MaxUint32 {
			return dst, fmt.Errorf("column %q: bucket start %d does not fit 4 unsigned bytes", c.name, n)
		}
		return binary.BigEndian.AppendUint32(dst, uint32(n)), nil
	}
	off := uint64((ms - start) / p.unitMS)
	for k := p.width - 1; k >= 0; k-- {
		dst = append(dst, byte(off>>(8*k)))
	}
	return dst, nil
}

// SaltByte is Phoenix's salt byte (SaltingUtil.getSaltingByte) of key for the given number of buckets:
// (byte)(Math.abs(h) % buckets) where h is Java's Arrays.hashCode over the key's signed bytes
// (h = 31*h + b, starting at 1, int32 overflow). As in Java, Math.abs(Integer.MIN_VALUE) stays negative,
// so for that one hash value the byte is (byte)(MIN_VALUE % buckets).
func SaltByte(key []byte, buckets int) byte {
	if buckets <= 0 {
		return 0
	}
	h := int32(1)
	for _, b := range key {
		h = 31*h + int32(int8(b))
	}
	if h < 0 {
		h = -h // Math.abs: -MinInt32 overflows back to MinInt32, as in Java
	}
	return byte(h % int32(buckets))
}
