package hfilewriter

import (
	"encoding/binary"
	"fmt"

	"github.com/hfload/hfload/internal/kv"
)

// writeBlockEncoder encodes the key/value part of cells into a data block payload
// (BufferedDataBlockEncoder subclasses). The writer appends the per-cell suffix (cint tags length,
// tags, vlong sequence id) itself.
type writeBlockEncoder interface {
	// start appends the encoding id and the unencoded-size placeholder and resets the state.
	start(dst []byte) []byte
	// encode appends one encoded cell.
	encode(dst, key, value []byte) []byte
	// finish patches the block's unencoded size into payload (the bytes after the block header).
	finish(payload []byte, unencodedSize int)
}

// cellEncoder is a writeBlockEncoder that also encodes a cell from the parts of its key, without the
// flat key being built first. prevRow and prevQual are the previous cell's row and qualifier, as the
// caller keeps them anyway (the Writer's order check needs them): the encoder keeps no copies of its own.
// They are not read for the first cell after start.
type cellEncoder interface {
	encodeCell(dst, row, family, qualifier []byte, ts int64, typ Type, value, prevRow, prevQual []byte) []byte
}

func newWriteBlockEncoder(e DataBlockEncoding) (writeBlockEncoder, error) {
	switch e {
	case EncodingPrefix:
		return &encodePrefix{}, nil
	case EncodingFastDiff:
		return &encodeFastDiff{}, nil
	case EncodingDiff:
		return &encodeDiff{}, nil
	}
	return nil, fmt.Errorf("data block encoding %s cannot be written", e)
}

// encodePrev is the state shared by the delta encoders: the previous cell of the block.
type encodePrev struct {
	key, value []byte
	has        bool
}

func (p *encodePrev) reset() { p.has = false }

func (p *encodePrev) set(key, value []byte) {
	p.key = append(p.key[:0], key...)
	p.value = append(p.value[:0], value...)
	p.has = true
}

// encodeStart appends the DataBlockEncoding id and a zero unencoded-size placeholder.
func encodeStart(dst []byte, id DataBlockEncoding) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(id))
	return append(dst, 0, 0, 0, 0)
}

// encodeFinish patches the unencoded size (BufferedDataBlockEncoder.endBlockEncoding).
func encodeFinish(payload []byte, unencodedSize int) {
	binary.BigEndian.PutUint32(payload[2:], uint32(unencodedSize))
}

// encodeCommonPrefix is PrivateCellUtil.findCommonPrefixInFlatKey(cur, prev, bypassFamilyCheck=true,
// withTsType) on two flat keys of the same family.
func encodeCommonPrefix(cur, prev []byte, withTsType bool) int {
	crl := int(binary.BigEndian.Uint16(cur))
	prl := int(binary.BigEndian.Uint16(prev))
	if crl != prl {
		if cur[0] == prev[0] {
			return 1
		}
		return 0
	}
	c := 2 + kv.CommonPrefix(cur[2:2+crl], prev[2:2+prl])
	if c-2 != crl {
		return c
	}
	cfl := int(cur[2+crl])
	pfl := int(prev[2+prl])
	c += 1 + cfl
	cq := cur[3+crl+cfl : len(cur)-9]
	pq := prev[3+prl+pfl : len(prev)-9]
	q := kv.CommonPrefix(cq, pq)
	c += q
	if !withTsType || max(len(cq), len(pq)) != q {
		return c
	}
	t := kv.CommonPrefix(cur[len(cur)-9:len(cur)-1], prev[len(prev)-9:len(prev)-1])
	c += t
	if t != 8 {
		return c
	}
	if cur[len(cur)-1] == prev[len(prev)-1] {
		c++
	}
	return c
}

// encodeCInt appends HBase's putCompressedInt (unsigned LEB128).
func encodeCInt(dst []byte, v int) []byte { return binary.AppendUvarint(dst, uint64(uint32(v))) }
