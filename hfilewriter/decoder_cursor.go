package hfilewriter

import (
	"encoding/binary"
	"fmt"
)

// decodeCursor reads a data block payload with a sticky error: after the first failure every read
// returns zero values and err describes the first problem (with its offset in the payload).
type decodeCursor struct {
	b   []byte
	pos int
	err error
}

func (c *decodeCursor) fail(format string, a ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("at payload offset %d: %s", c.pos, fmt.Sprintf(format, a...))
	}
}

func (c *decodeCursor) remaining() int { return len(c.b) - c.pos }

func (c *decodeCursor) take(n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || n > len(c.b)-c.pos {
		c.fail("need %d bytes, %d left", n, len(c.b)-c.pos)
		return nil
	}
	s := c.b[c.pos : c.pos+n : c.pos+n]
	c.pos += n
	return s
}

func (c *decodeCursor) u8() byte {
	s := c.take(1)
	if s == nil {
		return 0
	}
	return s[0]
}

func (c *decodeCursor) u16() int {
	s := c.take(2)
	if s == nil {
		return 0
	}
	return int(binary.BigEndian.Uint16(s))
}

func (c *decodeCursor) i32() int {
	s := c.take(4)
	if s == nil {
		return 0
	}
	return int(int32(binary.BigEndian.Uint32(s)))
}

// cint reads HBase's 7-bit compressed int (ByteBufferUtils.readCompressedInt), at most 5 bytes.
func (c *decodeCursor) cint() int {
	if c.err != nil {
		return 0
	}
	var v uint64
	for i := 0; i < 5; i++ {
		if c.pos >= len(c.b) {
			c.fail("truncated compressed int")
			return 0
		}
		x := c.b[c.pos]
		c.pos++
		v |= uint64(x&0x7F) << (7 * i)
		if x&0x80 == 0 {
			if v > 1<<31-1 {
				c.fail("compressed int %d overflows int32", v)
				return 0
			}
			return int(v)
		}
	}
	c.fail("compressed int longer than 5 bytes")
	return 0
}

// varint32 reads a protobuf raw varint32 (StreamUtils.readRawVarint32).
func (c *decodeCursor) varint32() int {
	if c.err != nil {
		return 0
	}
	v, n := binary.Uvarint(c.b[c.pos:])
	if n <= 0 || v > 1<<31-1 {
		c.fail("bad varint32")
		return 0
	}
	c.pos += n
	return int(v)
}

func (c *decodeCursor) vlong() int64 {
	if c.err != nil {
		return 0
	}
	if c.pos < len(c.b) {
		if v := int8(c.b[c.pos]); v >= -112 { // one byte: what almost every sequence id takes
			c.pos++
			return int64(v)
		}
	}
	v, n, err := ReadVLong(c.b[c.pos:])
	if err != nil {
		c.fail("%v", err)
		return 0
	}
	c.pos += n
	return v
}

// decodeArena hands out key buffers carved from larger chunks, so decoding a block allocates a few
// chunks instead of one slice per cell. Handed-out slices are never reused.
type decodeArena struct{ buf []byte }

// alloc returns an empty slice with capacity n.
func (a *decodeArena) alloc(n int) []byte {
	if n > cap(a.buf)-len(a.buf) {
		a.buf = make([]byte, 0, max(n, 32<<10))
	}
	s := a.buf[len(a.buf) : len(a.buf) : len(a.buf)+n]
	a.buf = a.buf[:len(a.buf)+n]
	return s
}
