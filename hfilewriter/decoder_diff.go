package hfilewriter

import (
	"encoding/binary"
	"fmt"

	"github.com/hfload/hfload/internal/kv"
)

// DIFF flag bits (DiffKeyDeltaEncoder).
const (
	decodeDiffSameKeyLen   = 1 << 0
	decodeDiffSameValueLen = 1 << 1
	decodeDiffSameType     = 1 << 2
	decodeDiffTSIsDiff     = 1 << 3
	decodeDiffTSLenShift   = 4
	decodeDiffTSLenMask    = 7 << 4
	decodeDiffTSSign       = 1 << 7
)

// decodeDeltaKey rebuilds a flat key shared by DIFF and FAST_DIFF: common bytes from prev, then
// (if the row differs) the rest of the row length and row from the stream, the family (famWithLen,
// copied, never stored), and the qualifier; or (same row) just the rest of the qualifier. The
// timestamp and type are appended by the caller; the returned key has room for them.
func decodeDeltaKey(c *decodeCursor, arena *decodeArena, prev []byte, first bool, common, keyLen int, famWithLen []byte) []byte {
	if c.err != nil {
		return nil
	}
	if keyLen < kv.KeyInfrastructureSize || common > len(prev) || common > keyLen-9 {
		c.fail("bad key length %d / common prefix %d (previous key %d bytes)", keyLen, common, len(prev))
		return nil
	}
	key := arena.alloc(keyLen)
	key = append(key, prev[:common]...)
	prevRowLen := -1
	if len(prev) >= 2 {
		prevRowLen = decodeRowLen(prev)
	}
	if first || common < 2+prevRowLen {
		if common < 2 {
			key = append(key, c.take(2-common)...)
			if c.err != nil {
				return nil
			}
		}
		need := 2 + decodeRowLen(key) - len(key)
		if need < 0 {
			c.fail("common prefix %d extends past the row", common)
			return nil
		}
		key = append(key, c.take(need)...)
		key = append(key, famWithLen...)
		q := keyLen - len(key) - 9
		if q < 0 {
			c.fail("key length %d too short for row and family", keyLen)
			return nil
		}
		key = append(key, c.take(q)...)
	} else {
		key = append(key, c.take(keyLen-common-9)...)
	}
	if c.err != nil {
		return nil
	}
	return key
}

// decodeFamilyOf returns the family length byte + family of a well-formed key.
func decodeFamilyOf(k []byte) []byte {
	rl := decodeRowLen(k)
	fl := int(k[2+rl])
	return k[2+rl : 3+rl+fl]
}

// decodeDiffCells decodes DIFF records. The block starts with the family (int8 length + bytes), then
// per record: flag | [cint keyLen] | [cint valueLen] | cint common | row rest + qualifier or qualifier
// rest | timestamp (1-8 bytes little-endian, maybe a difference, maybe negated) | [type] | value | suffix.
func decodeDiffCells(c *decodeCursor, o *decodeCellOptions) ([]Cell, error) {
	var cells []Cell
	if c.remaining() == 0 {
		return nil, nil
	}
	fl := int(c.u8())
	if fl > kv.MaxFamilyLength {
		return nil, fmt.Errorf("family length %d in DIFF block header", fl)
	}
	fam := c.take(fl)
	if c.err != nil {
		return nil, c.err
	}
	famWithLen := append([]byte{byte(fl)}, fam...)
	dict := newDecodeTagDict(o)
	arena := &decodeArena{}
	var prev []byte
	var keyLen, valueLen int
	var ts int64
	var typ byte
	for c.remaining() > 0 {
		start := c.pos
		first := len(cells) == 0
		flag := c.u8()
		if flag&decodeDiffSameKeyLen == 0 {
			keyLen = c.cint()
		}
		if flag&decodeDiffSameValueLen == 0 {
			valueLen = c.cint()
		}
		common := c.cint()
		key := decodeDeltaKey(c, arena, prev, first, common, keyLen, famWithLen)
		n := int(flag&decodeDiffTSLenMask)>>decodeDiffTSLenShift + 1
		tb := c.take(n)
		var v int64
		for i := range tb {
			v |= int64(tb[i]) << (8 * i)
		}
		if flag&decodeDiffTSSign != 0 {
			v = -v
		}
		if flag&decodeDiffTSIsDiff != 0 {
			v = ts - v
		}
		if flag&decodeDiffSameType == 0 {
			typ = c.u8()
		}
		value := c.take(valueLen)
		var cell Cell
		if c.err == nil {
			key = binary.BigEndian.AppendUint64(key, uint64(v))
			key = append(key, typ)
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
		prev, ts = key, v
	}
	return cells, nil
}
