package hfilewriter

import (
	"fmt"

	"github.com/hfload/hfload/internal/kv"
)

// FAST_DIFF flag bits (FastDiffDeltaEncoder).
const (
	decodeFastTSPrefixMask = 7
	decodeFastSameKeyLen   = 1 << 3
	decodeFastSameValueLen = 1 << 4
	decodeFastSameType     = 1 << 5
	decodeFastSameValue    = 1 << 6
)

// decodeFastDiffCells decodes FAST_DIFF records. First record of a block: flag | cint keyLen |
// cint valueLen | cint common(ignored) | full key | value. Others: flag | [cint keyLen] | [cint valueLen] |
// cint common | row rest + qualifier or qualifier rest | timestamp suffix (8 - flag&7 bytes) | [type] |
// [value]. Each record ends with the §5.2 suffix.
func decodeFastDiffCells(c *decodeCursor, o *decodeCellOptions) ([]Cell, error) {
	var cells []Cell
	dict := newDecodeTagDict(o)
	arena := &decodeArena{}
	var prev, prevValue []byte
	var keyLen, valueLen int
	for c.remaining() > 0 {
		start := c.pos
		flag := c.u8()
		if flag&decodeFastSameKeyLen == 0 {
			keyLen = c.cint()
		}
		if flag&decodeFastSameValueLen == 0 {
			valueLen = c.cint()
		}
		common := c.cint()
		var key, value []byte
		if len(cells) == 0 {
			if c.err == nil && keyLen < kv.KeyInfrastructureSize {
				c.fail("key length %d", keyLen)
			}
			key = c.take(keyLen)
			value = c.take(valueLen)
		} else {
			key = decodeDeltaKey(c, arena, prev, false, common, keyLen, decodeFamilyOf(prev))
			p := int(flag & decodeFastTSPrefixMask)
			if c.err == nil {
				key = append(key, prev[len(prev)-9:len(prev)-9+p]...)
				key = append(key, c.take(8-p)...)
			}
			if flag&decodeFastSameType != 0 {
				if c.err == nil {
					key = append(key, prev[len(prev)-1])
				}
			} else {
				key = append(key, c.u8())
			}
			if flag&decodeFastSameValue != 0 {
				if c.err == nil && len(prevValue) != valueLen {
					c.fail("SAME_VALUE flag with value length %d, previous value %d bytes", valueLen, len(prevValue))
				}
				value = prevValue
			} else {
				value = c.take(valueLen)
			}
		}
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
		prev, prevValue = key, value
	}
	return cells, nil
}
