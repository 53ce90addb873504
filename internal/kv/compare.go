package kv

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// CompareKeys orders two flat keys as HBase's CellComparatorImpl does (ignoring mvcc):
// row, family, qualifier ascending as unsigned bytes; timestamp descending; type descending.
// A key with type Minimum and no family or qualifier sorts after every other key of its row.
// Both keys must be well formed (Key.Valid). This is the one comparator of the project: the sorter,
// the writer's order check and the reader all use it.
func CompareKeys(a, b []byte) int {
	arl := int(binary.BigEndian.Uint16(a))
	brl := int(binary.BigEndian.Uint16(b))
	if c := bytes.Compare(a[2:2+arl], b[2:2+brl]); c != 0 {
		return c
	}
	// Row equal. Family + qualifier region: [2+rl, len-9); family length byte first.
	afl := int(a[2+arl])
	bfl := int(b[2+brl])
	aEnd, bEnd := len(a)-9, len(b)-9
	aType, bType := a[len(a)-1], b[len(b)-1]
	aColLen := aEnd - (3 + arl) // family + qualifier bytes
	bColLen := bEnd - (3 + brl)
	if aColLen == 0 && aType == byte(TypeMinimum) {
		if bColLen == 0 && bType == byte(TypeMinimum) {
			return compareTsType(a, b)
		}
		return 1
	}
	if bColLen == 0 && bType == byte(TypeMinimum) {
		return -1
	}
	if afl == bfl {
		// Same family length: family then qualifier is one lexicographic comparison of fam|qual.
		if c := bytes.Compare(a[3+arl:aEnd], b[3+brl:bEnd]); c != 0 {
			return c
		}
		return compareTsType(a, b)
	}
	if c := bytes.Compare(a[3+arl:3+arl+afl], b[3+brl:3+brl+bfl]); c != 0 {
		return c
	}
	if c := bytes.Compare(a[3+arl+afl:aEnd], b[3+brl+bfl:bEnd]); c != 0 {
		return c
	}
	return compareTsType(a, b)
}

func compareTsType(a, b []byte) int {
	ats := int64(binary.BigEndian.Uint64(a[len(a)-9:]))
	bts := int64(binary.BigEndian.Uint64(b[len(b)-9:]))
	if ats != bts {
		if ats > bts { // descending
			return -1
		}
		return 1
	}
	at, bt := a[len(a)-1], b[len(b)-1]
	if at != bt {
		if at > bt { // descending
			return -1
		}
		return 1
	}
	return 0
}

// CompareKeyValues orders two KeyValue records (int32 keyLen | int32 valueLen | key | value) by key.
func CompareKeyValues(a, b []byte) int { return CompareKeys(KVKey(a), KVKey(b)) }

// CommonPrefix returns the length of the longest common prefix of a and b (compared eight bytes at a
// time), as the prefix and diff encoders measure shared key bytes.
func CommonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	// Eight bytes at a time; the first differing byte is the lowest set byte of the XOR of little-endian
	// loads.
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
