package hfilewriter

import "encoding/binary"

// decodeTagDictCapacity is the dictionary size HBase uses for tag compression in data blocks
// (TagCompressionContext with LRUDictionary, capacity Byte.MAX_VALUE), reset at every block.
const decodeTagDictCapacity = 127

// decodeTagDict mirrors HBase's LRUDictionary as used by TagCompressionContext.uncompressTags: entries
// get indexes 0,1,2,... until full; then a new entry replaces the least recently used one and takes
// its index. Looking an entry up makes it the most recently used.
type decodeTagDict struct {
	entries [][]byte
	// LRU order as a doubly linked list over entry indexes; head = most recently used.
	prev, next []int
	head, tail int
}

func newDecodeTagDict(o *decodeCellOptions) *decodeTagDict {
	if !o.Tags || !o.CompressTags {
		return nil
	}
	return &decodeTagDict{head: -1, tail: -1}
}

func (d *decodeTagDict) unlink(i int) {
	if d.prev[i] >= 0 {
		d.next[d.prev[i]] = d.next[i]
	} else {
		d.head = d.next[i]
	}
	if d.next[i] >= 0 {
		d.prev[d.next[i]] = d.prev[i]
	} else {
		d.tail = d.prev[i]
	}
}

func (d *decodeTagDict) pushHead(i int) {
	d.prev[i] = -1
	d.next[i] = d.head
	if d.head >= 0 {
		d.prev[d.head] = i
	}
	d.head = i
	if d.tail < 0 {
		d.tail = i
	}
}

func (d *decodeTagDict) touch(i int) {
	if d.head == i {
		return
	}
	d.unlink(i)
	d.pushHead(i)
}

func (d *decodeTagDict) add(v []byte) {
	if len(v) == 0 {
		return // LRUDictionary.addEntry ignores empty entries
	}
	if len(d.entries) < decodeTagDictCapacity {
		d.entries = append(d.entries, v)
		d.prev = append(d.prev, -1)
		d.next = append(d.next, -1)
		d.pushHead(len(d.entries) - 1)
		return
	}
	t := d.tail
	d.entries[t] = v
	d.touch(t)
}

// uncompress reads compressed tags until n bytes of serialized tags (uint16 len | type | value)* exist:
// per tag, either 0xFF (NOT_IN_DICTIONARY) + varint32 length + bytes (added to the dictionary), or a
// 2-byte big-endian dictionary index.
func (d *decodeTagDict) uncompress(c *decodeCursor, n int) []byte {
	if d == nil {
		c.fail("compressed tags without a dictionary")
		return nil
	}
	out := make([]byte, 0, n)
	for len(out) < n && c.err == nil {
		status := c.u8()
		var tag []byte
		if status == 0xFF {
			l := c.varint32()
			tag = c.take(l)
			if c.err == nil {
				d.add(tag)
			}
		} else {
			idx := int(status)<<8 | int(c.u8())
			if c.err == nil && idx >= len(d.entries) {
				c.fail("tag dictionary index %d not in the %d-entry dictionary", idx, len(d.entries))
			}
			if c.err == nil {
				tag = d.entries[idx]
				d.touch(idx)
			}
		}
		if c.err != nil {
			return nil
		}
		if len(tag) > 0xFFFF {
			c.fail("tag of %d bytes", len(tag))
			return nil
		}
		out = binary.BigEndian.AppendUint16(out, uint16(len(tag)))
		out = append(out, tag...)
	}
	if c.err == nil && len(out) != n {
		c.fail("compressed tags expand to %d bytes, want %d", len(out), n)
		return nil
	}
	return out
}
