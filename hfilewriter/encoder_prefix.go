package hfilewriter

// encodePrefix is PREFIX encoding (PrefixKeyDeltaEncoder): each key is stored as the length of the
// prefix it shares with the previous key plus the remaining bytes.
//
//	cint keyLength-common | cint valueLength | cint common | key[common:] | value
type encodePrefix struct{ prev encodePrev }

func (e *encodePrefix) start(dst []byte) []byte {
	e.prev.reset()
	return encodeStart(dst, EncodingPrefix)
}

func (e *encodePrefix) finish(payload []byte, n int) { encodeFinish(payload, n) }

func (e *encodePrefix) encode(dst, key, value []byte) []byte {
	common := 0
	if e.prev.has {
		common = encodeCommonPrefix(key, e.prev.key, true)
	}
	dst = encodeCInt(dst, len(key)-common)
	dst = encodeCInt(dst, len(value))
	dst = encodeCInt(dst, common)
	dst = append(dst, key[common:]...)
	dst = append(dst, value...)
	e.prev.key = append(e.prev.key[:0], key...)
	e.prev.has = true
	return dst
}
