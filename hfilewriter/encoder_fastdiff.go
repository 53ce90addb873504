package hfilewriter

import (
	"bytes"
	"encoding/binary"

	"github.com/hfload/hfload/internal/kv"
)

// FAST_DIFF flag bits (FastDiffDeltaEncoder).
const (
	fastDiffSameKeyLength   = 1 << 3
	fastDiffSameValueLength = 1 << 4
	fastDiffSameType        = 1 << 5
	fastDiffSameValue       = 1 << 6
)

// encodeFastDiff is FAST_DIFF encoding (FastDiffDeltaEncoder.compressSingleKeyValue). It encodes from
// the parts of the key (encodeCell), comparing with the previous cell's row and qualifier (given by the
// caller), timestamp, type and value rather than its flat key: within a row it compares only qualifiers.
//
// The previous value is not copied: it is found where it was last written, dst[valOff:valOff+valLen],
// so the dst of every encodeCell call between two starts must be the block's buffer, appended to only
// (as the Writer does).
type encodeFastDiff struct {
	has            bool
	row, qual      []byte // the previous row and qualifier, kept only by encode (flat keys)
	valOff, valLen int
	ts             [8]byte
	typ            byte
	klen           int
}

func (e *encodeFastDiff) start(dst []byte) []byte {
	e.has = false
	return encodeStart(dst, EncodingFastDiff)
}

func (e *encodeFastDiff) finish(payload []byte, n int) { encodeFinish(payload, n) }

// encode encodes a cell given as a flat key.
func (e *encodeFastDiff) encode(dst, key, value []byte) []byte {
	k := Key(key)
	dst = e.encodeCell(dst, k.Row(), k.Family(), k.Qualifier(), k.Timestamp(), k.Type(), value, e.row, e.qual)
	e.row = append(e.row[:0], k.Row()...)
	e.qual = append(e.qual[:0], k.Qualifier()...)
	return dst
}

// encodeCell appends one cell:
//
//	flag | [cint keyLength] | [cint valueLength] | cint common | key bytes after the common prefix
//	(family skipped) | timestamp bytes after the shared ones | [type] | [value]
//
// where common is PrivateCellUtil.findCommonPrefixInFlatKey(cur, prev, true, false) computed from the
// parts: 0 or 1 (the row length's high byte) for rows of different lengths, 2 + the common row bytes
// for different rows of one length, and row, family and common qualifier bytes within a row.
func (e *encodeFastDiff) encodeCell(dst, row, family, qualifier []byte, ts int64, typ Type, value, prevRow, prevQual []byte) []byte {
	klen := kv.KeyInfrastructureSize + len(row) + len(family) + len(qualifier)
	var tsb [8]byte
	binary.BigEndian.PutUint64(tsb[:], uint64(ts))
	if !e.has {
		dst = append(dst, 0)
		dst = encodeCInt(dst, klen)
		dst = encodeCInt(dst, len(value))
		dst = encodeCInt(dst, 0)
		dst = kv.AppendKey(dst, row, family, qualifier, ts, typ)
		e.valOff, e.valLen = len(dst), len(value)
		dst = append(dst, value...)
		e.has = true
		e.ts, e.typ, e.klen = tsb, byte(typ), klen
		return dst
	}
	rl := len(row)
	sameRow := false
	common := 0
	switch {
	case rl != len(prevRow):
		if rl>>8 == len(prevRow)>>8 {
			common = 1
		}
	default:
		c := rl // the caller's previous row itself (AppendSameRow) is the same row without a look
		if rl > 0 && &row[0] != &prevRow[0] {
			c = kv.CommonPrefix(row, prevRow)
		}
		if c != rl {
			common = 2 + c
		} else {
			sameRow = true
			common = 2 + rl + 1 + len(family) + kv.CommonPrefix(qualifier, prevQual)
		}
	}
	flag := 0
	if klen == e.klen {
		flag |= fastDiffSameKeyLength
	}
	if len(value) == e.valLen {
		flag |= fastDiffSameValueLength
	}
	if byte(typ) == e.typ {
		flag |= fastDiffSameType
	}
	tsCommon := 0
	for tsCommon < 7 && tsb[tsCommon] == e.ts[tsCommon] {
		tsCommon++
	}
	flag |= tsCommon
	sameValue := len(value) == e.valLen && bytes.Equal(value, dst[e.valOff:e.valOff+e.valLen])
	if sameValue {
		flag |= fastDiffSameValue
	}
	dst = append(dst, byte(flag))
	if flag&fastDiffSameKeyLength == 0 {
		dst = encodeCInt(dst, klen)
	}
	if flag&fastDiffSameValueLength == 0 {
		dst = encodeCInt(dst, len(value))
	}
	dst = encodeCInt(dst, common)
	if !sameRow {
		// Rows differ: the rest of (rowLength, row), then the whole qualifier (family skipped).
		if common < 2 {
			if common == 0 {
				dst = append(dst, byte(rl>>8))
			}
			dst = append(dst, byte(rl))
			dst = append(dst, row...)
		} else {
			dst = append(dst, row[common-2:]...)
		}
		dst = append(dst, qualifier...)
	} else {
		dst = append(dst, qualifier[common-(rl+2)-(len(family)+1):]...)
	}
	dst = append(dst, tsb[tsCommon:]...)
	if flag&fastDiffSameType == 0 {
		dst = append(dst, byte(typ))
	}
	if !sameValue {
		e.valOff, e.valLen = len(dst), len(value)
		dst = append(dst, value...)
	}
	e.ts, e.typ, e.klen = tsb, byte(typ), klen
	return dst
}

// encodeSameRow appends a cell with the previous cell's row, family, timestamp and type (encodeCell's
// bytes for it) to a block that holds cells already (e.has): head is the key's row and family part
// (2 + row length + 1 + family length), klen the key's length, prevQual the previous cell's qualifier.
// Such a cell shares the whole timestamp but its last byte (FAST_DIFF stores at least one) and the type.
func (e *encodeFastDiff) encodeSameRow(dst []byte, head, klen int, qualifier, value, prevQual []byte) []byte {
	q := kv.CommonPrefix(qualifier, prevQual)
	flag := fastDiffSameType | 7
	if klen == e.klen {
		flag |= fastDiffSameKeyLength
	}
	sameValue := false
	if len(value) == e.valLen {
		flag |= fastDiffSameValueLength
		if sameValue = bytes.Equal(value, dst[e.valOff:e.valOff+e.valLen]); sameValue {
			flag |= fastDiffSameValue
		}
	}
	dst = append(dst, byte(flag))
	if flag&fastDiffSameKeyLength == 0 {
		dst = encodeCInt(dst, klen)
	}
	if flag&fastDiffSameValueLength == 0 {
		dst = encodeCInt(dst, len(value))
	}
	dst = encodeCInt(dst, head+q)
	dst = append(dst, qualifier[q:]...)
	dst = append(dst, e.ts[7])
	if !sameValue {
		e.valOff, e.valLen = len(dst), len(value)
		dst = append(dst, value...)
	}
	e.klen = klen
	return dst
}
