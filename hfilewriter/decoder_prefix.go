package hfilewriter

import (
	"fmt"

	"github.com/hfload/hfload/internal/kv"
)

// decodePrefixCells decodes PREFIX records (PrefixKeyDeltaEncoder):
// cint keyLength-common | cint valueLength | cint common | key[common:] | value | suffix.
func decodePrefixCells(c *decodeCursor, o *decodeCellOptions) ([]Cell, error) {
	var cells []Cell
	var prev []byte
	dict := newDecodeTagDict(o)
	arena := &decodeArena{}
	for c.remaining() > 0 {
		start := c.pos
		rest, vlen, common := c.cint(), c.cint(), c.cint()
		if c.err == nil && common > len(prev) {
			c.fail("common prefix %d longer than the previous key (%d bytes)", common, len(prev))
		}
		if c.err == nil && common+rest > kv.MaxRowLength+kv.MaxFamilyLength+1<<20 {
			c.fail("key length %d too large", common+rest)
		}
		var key []byte
		if c.err == nil {
			key = arena.alloc(common + rest)
			key = append(key, prev[:common]...)
			key = append(key, c.take(rest)...)
		}
		value := c.take(vlen)
		var cell Cell
		if c.err == nil {
			var err error
			if cell, err = decodeMakeCell(key, value); err != nil {
				return nil, fmt.Errorf("cell %d at payload offset %d: %w", len(cells), start, err)
			}
		}
		decodeAfterKeyValue(c, o, dict, &cell)
		if c.err != nil {
			return nil, fmt.Errorf("cell %d at payload offset %d: %w", len(cells), start, c.err)
		}
		cells = append(cells, cell)
		prev = key
	}
	return cells, nil
}
