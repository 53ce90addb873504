package hfilewriter

import "bytes"

// FAST_DIFF flag bits (FastDiffDeltaEncoder).
const (
	fastDiffSameKeyLength   = 1 << 3
	fastDiffSameValueLength = 1 << 4
	fastDiffSameType        = 1 << 5
	fastDiffSameValue       = 1 << 6
)

// encodeFastDiff is FAST_DIFF encoding (FastDiffDeltaEncoder.compressSingleKeyValue).
type encodeFastDiff struct{ prev encodePrev }

func (e *encodeFastDiff) start(dst []byte) []byte {
	e.prev.reset()
	return encodeStart(dst, EncodingFastDiff)
}

func (e *encodeFastDiff) finish(payload []byte, n int) { encodeFinish(payload, n) }

func (e *encodeFastDiff) encode(dst, key, value []byte) []byte {
	if !e.prev.has {
		dst = append(dst, 0)
		dst = encodeCInt(dst, len(key))
		dst = encodeCInt(dst, len(value))
		dst = encodeCInt(dst, 0)
		dst = append(dst, key...)
		dst = append(dst, value...)
		e.prev.set(key, value)
		return dst
	}
	pk, pv := e.prev.key, e.prev.value
	common := encodeCommonPrefix(key, pk, false)
	flag := 0
	if len(key) == len(pk) {
		flag |= fastDiffSameKeyLength
	}
	if len(value) == len(pv) {
		flag |= fastDiffSameValueLength
	}
	typ := key[len(key)-1]
	if typ == pk[len(pk)-1] {
		flag |= fastDiffSameType
	}
	ts := key[len(key)-9 : len(key)-1]
	pts := pk[len(pk)-9 : len(pk)-1]
	tsCommon := 0
	for tsCommon < 7 && ts[tsCommon] == pts[tsCommon] {
		tsCommon++
	}
	flag |= tsCommon
	sameValue := len(value) == len(pv) && bytes.Equal(value, pv)
	if sameValue {
		flag |= fastDiffSameValue
	}
	dst = append(dst, byte(flag))
	if flag&fastDiffSameKeyLength == 0 {
		dst = encodeCInt(dst, len(key))
	}
	if flag&fastDiffSameValueLength == 0 {
		dst = encodeCInt(dst, len(value))
	}
	dst = encodeCInt(dst, common)
	k := Key(key)
	rl := len(k.Row())
	if common < rl+2 {
		// Rows differ: the rest of (rowLength, row), then the whole qualifier (family skipped).
		dst = append(dst, key[common:2+rl]...)
		dst = append(dst, k.Qualifier()...)
	} else {
		fl := len(k.Family())
		dst = append(dst, k.Qualifier()[common-(rl+2)-(fl+1):]...)
	}
	dst = append(dst, ts[tsCommon:]...)
	if flag&fastDiffSameType == 0 {
		dst = append(dst, typ)
	}
	if !sameValue {
		dst = append(dst, value...)
	}
	e.prev.set(key, value)
	return dst
}
