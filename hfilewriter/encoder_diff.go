package hfilewriter

// DIFF flag bits (DiffKeyDeltaEncoder).
const (
	diffSameKeyLength   = 1
	diffSameValueLength = 1 << 1
	diffSameType        = 1 << 2
	diffTimestampIsDiff = 1 << 3
	diffShiftTsLength   = 4
	diffTimestampSign   = 1 << 7
)

// encodeDiff is DIFF encoding (DiffKeyDeltaEncoder.compressSingleKeyValue): the family is stored
// once at the start of the block; timestamps are stored in as few little-endian bytes as possible,
// or as the difference to the previous timestamp when that is shorter.
type encodeDiff struct{ prev encodePrev }

func (e *encodeDiff) start(dst []byte) []byte {
	e.prev.reset()
	return encodeStart(dst, EncodingDiff)
}

func (e *encodeDiff) finish(payload []byte, n int) { encodeFinish(payload, n) }

// encodeLongFitsIn is ByteBufferUtils.longFitsIn.
func encodeLongFitsIn(v int64) int {
	if v < 0 {
		return 8
	}
	n := 1
	for n < 8 && v >= int64(1)<<(8*n) {
		n++
	}
	return n
}

// encodePutLongLE is ByteBufferUtils.putLong(out, value, fitInBytes): the low bytes, least
// significant first.
func encodePutLongLE(dst []byte, v int64, n int) []byte {
	u := uint64(v)
	for i := 0; i < n; i++ {
		dst = append(dst, byte(u))
		u >>= 8
	}
	return dst
}

func (e *encodeDiff) encode(dst, key, value []byte) []byte {
	k := Key(key)
	flag := 0
	common := 0
	ts := k.Timestamp()
	var diffTs int64
	diffFits, tsFits := 0, 0
	if !e.prev.has {
		if ts < 0 {
			flag |= diffTimestampSign
			ts = -ts
		}
		tsFits = encodeLongFitsIn(ts)
		flag |= (tsFits - 1) << diffShiftTsLength
		fam := k.Family()
		dst = append(dst, byte(len(fam)))
		dst = append(dst, fam...)
	} else {
		pk := Key(e.prev.key)
		common = encodeCommonPrefix(key, pk, false)
		if len(key) == len(pk) {
			flag |= diffSameKeyLength
		}
		if len(value) == len(e.prev.value) {
			flag |= diffSameValueLength
		}
		if k.Type() == pk.Type() {
			flag |= diffSameType
		}
		diffTs = pk.Timestamp() - ts
		negTs := ts < 0
		if negTs {
			ts = -ts
		}
		tsFits = encodeLongFitsIn(ts)
		negDiff := diffTs < 0
		if negDiff {
			diffTs = -diffTs
		}
		diffFits = encodeLongFitsIn(diffTs)
		if diffFits < tsFits {
			flag |= (diffFits-1)<<diffShiftTsLength | diffTimestampIsDiff
			if negDiff {
				flag |= diffTimestampSign
			}
		} else {
			flag |= (tsFits - 1) << diffShiftTsLength
			if negTs {
				flag |= diffTimestampSign
			}
		}
	}
	dst = append(dst, byte(flag))
	if flag&diffSameKeyLength == 0 {
		dst = encodeCInt(dst, len(key))
	}
	if flag&diffSameValueLength == 0 {
		dst = encodeCInt(dst, len(value))
	}
	dst = encodeCInt(dst, common)
	dst = appendKeyRest(dst, k, common)
	if flag&diffTimestampIsDiff == 0 {
		dst = encodePutLongLE(dst, ts, tsFits)
	} else {
		dst = encodePutLongLE(dst, diffTs, diffFits)
	}
	if flag&diffSameType == 0 {
		dst = append(dst, byte(k.Type()))
	}
	dst = append(dst, value...)
	e.prev.set(key, value)
	return dst
}

// appendKeyRest appends what DIFF and FAST_DIFF write of a flat key after its common prefix with the
// previous key: the rest of (rowLength, row) and the whole qualifier when the rows differ, else the
// qualifier after its common bytes. The family is never written.
func appendKeyRest(dst []byte, k Key, common int) []byte {
	rl := len(k.Row())
	if common < rl+2 {
		dst = append(dst, k[common:2+rl]...)
		return append(dst, k.Qualifier()...)
	}
	fl := len(k.Family())
	return append(dst, k.Qualifier()[common-(rl+2)-(fl+1):]...)
}
