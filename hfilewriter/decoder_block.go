package hfilewriter

import (
	"encoding/binary"
	"fmt"

	"github.com/hfload/hfload/internal/kv"
)

// decodeCellOptions says what each cell record carries, from the file info (§2.3).
type decodeCellOptions struct {
	Tags         bool // file info has hfile.MAX_TAGS_LEN (v3 only)
	CompressTags bool // hfile.TAGS_COMPRESSED = true (encoded blocks only)
	Mvcc         bool // KEY_VALUE_VERSION == 1
	// DecodeMvcc is false when MAX_MEMSTORE_TS_KEY is 0: HBase then skips one byte per cell in
	// unencoded blocks without decoding it (HFileReaderImpl.readMvccVersion).
	DecodeMvcc bool
	Encoding   DataBlockEncoding // from DATA_BLOCK_ENCODING
}

// decodeDataBlock decodes every cell of a DATA or ENCODED_DATA block payload. The returned cells own
// their keys and share value and tag bytes with payload.
func decodeDataBlock(typ BlockType, payload []byte, o *decodeCellOptions) ([]Cell, error) {
	switch typ {
	case BlockData:
		return decodeNoneCells(payload, o, o.DecodeMvcc)
	case BlockEncodedData:
	default:
		return nil, fmt.Errorf("%s is not a data block", typ)
	}
	if len(payload) < 2 {
		return nil, fmt.Errorf("encoded data block of %d bytes has no encoding id", len(payload))
	}
	id := DataBlockEncoding(binary.BigEndian.Uint16(payload))
	if id != o.Encoding {
		return nil, fmt.Errorf("encoded data block uses encoding %s (id %d) but file info DATA_BLOCK_ENCODING is %s", id, uint16(id), o.Encoding)
	}
	body := payload[2:]
	switch id {
	case EncodingPrefix, EncodingDiff, EncodingFastDiff:
		if len(body) < 4 {
			return nil, fmt.Errorf("%s block too short for its unencoded size", id)
		}
		if us := int32(binary.BigEndian.Uint32(body)); us < 0 {
			return nil, fmt.Errorf("%s block has negative unencoded size %d", id, us)
		}
		c := &decodeCursor{b: body, pos: 4}
		var cells []Cell
		var err error
		switch id {
		case EncodingPrefix:
			cells, err = decodePrefixCells(c, o)
		case EncodingDiff:
			cells, err = decodeDiffCells(c, o)
		default:
			cells, err = decodeFastDiffCells(c, o)
		}
		if err != nil {
			return nil, fmt.Errorf("%s block: %w", id, err)
		}
		return cells, nil
	case EncodingRowIndexV1:
		// cells (unencoded layout) | int32 numRows | int32 rowOffsets[numRows] | int32 cellsDataSize
		if len(body) < 8 {
			return nil, fmt.Errorf("ROW_INDEX_V1 block of %d bytes too short", len(body))
		}
		size := int(int32(binary.BigEndian.Uint32(body[len(body)-4:])))
		if size < 0 || size > len(body)-8 {
			return nil, fmt.Errorf("ROW_INDEX_V1 cells size %d outside the %d-byte block", size, len(body))
		}
		rows := int(int32(binary.BigEndian.Uint32(body[size:])))
		if rows < 0 || size+4+4*rows+4 != len(body) {
			return nil, fmt.Errorf("ROW_INDEX_V1 row index of %d rows does not fill the block", rows)
		}
		cells, err := decodeNoneCells(body[:size], o, true)
		if err != nil {
			return nil, fmt.Errorf("ROW_INDEX_V1 block: %w", err)
		}
		return cells, nil
	}
	return nil, fmt.Errorf("unsupported data block encoding %s (id %d)", id, uint16(id))
}

// decodeMakeCell builds a Cell from an owned flat key, checking that the key is well formed.
func decodeMakeCell(key, value []byte) (Cell, error) {
	if !Key(key).Valid() {
		return Cell{}, fmt.Errorf("malformed key %s", kv.ToStringBinary(key))
	}
	return kv.CellFromKey(key, value), nil
}

// decodeNoneCells decodes unencoded records: int32 keyLen | int32 valueLen | key | value |
// [uint16 tagsLen | tags] | [vlong mvcc].
func decodeNoneCells(payload []byte, o *decodeCellOptions, decodeMvcc bool) ([]Cell, error) {
	var cells []Cell
	err := walkNoneCells(payload, o, decodeMvcc, func(start, _ int, key, value, tags []byte, seq uint64) error {
		cell, err := decodeMakeCell(key, value)
		if err != nil {
			return fmt.Errorf("cell %d at payload offset %d: %w", len(cells), start, err)
		}
		cell.Tags, cell.SeqID = decodeNilIfEmpty(tags), seq
		cells = append(cells, cell)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return cells, nil
}

// walkNoneCells calls fn with every cell of an unencoded data block: where it starts and ends in the
// payload, its key, value and tags, and its mvcc (0 unless decodeMvcc). It stops at fn's first error.
func walkNoneCells(payload []byte, o *decodeCellOptions, decodeMvcc bool, fn func(start, end int, key, value, tags []byte, seq uint64) error) error {
	c := &decodeCursor{b: payload}
	for n := 0; c.remaining() > 0 && c.err == nil; n++ {
		start := c.pos
		klen, vlen := c.i32(), c.i32()
		if c.err == nil && (klen < kv.KeyInfrastructureSize || vlen < 0) {
			c.fail("cell %d has key length %d and value length %d", n, klen, vlen)
		}
		key := c.take(klen)
		value := c.take(vlen)
		var tags []byte
		if o.Tags {
			tags = c.take(c.u16())
		}
		var seq uint64
		if o.Mvcc {
			if decodeMvcc {
				seq = uint64(c.vlong())
			} else {
				c.take(1)
			}
		}
		if c.err != nil {
			return fmt.Errorf("cell %d at payload offset %d: %w", n, start, c.err)
		}
		if err := fn(start, c.pos, key, value, tags, seq); err != nil {
			return err
		}
	}
	return nil
}

func decodeNilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// decodeAfterKeyValue reads the per-record suffix of PREFIX/DIFF/FAST_DIFF records (§5.2):
// [cint tagsLen | tags (maybe dictionary-compressed)] [vlong mvcc].
func decodeAfterKeyValue(c *decodeCursor, o *decodeCellOptions, dict *decodeTagDict, cell *Cell) {
	if o.Tags {
		n := c.cint()
		if n > kv.MaxTagsLength {
			c.fail("tags length %d exceeds %d", n, kv.MaxTagsLength)
			return
		}
		if n > 0 {
			if o.CompressTags {
				cell.Tags = dict.uncompress(c, n)
			} else {
				cell.Tags = c.take(n)
			}
		}
	}
	if o.Mvcc {
		cell.SeqID = uint64(c.vlong())
	}
}

// decodeRowLen returns the row length of a key prefix that holds at least the 2 length bytes.
func decodeRowLen(k []byte) int { return int(binary.BigEndian.Uint16(k)) }
