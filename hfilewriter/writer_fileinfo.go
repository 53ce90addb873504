package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"sort"
)

// writeFileInfoMap collects file info entries; they are serialized sorted by key (unsigned bytes),
// as HBase's TreeMap(Bytes.BYTES_COMPARATOR) does. A later put of the same key replaces the value.
type writeFileInfoMap struct {
	keys   []string
	values [][]byte
}

func (m *writeFileInfoMap) put(key string, value []byte) {
	for i, k := range m.keys {
		if k == key {
			m.values[i] = value
			return
		}
	}
	m.keys = append(m.keys, key)
	m.values = append(m.values, value)
}

func (m *writeFileInfoMap) putInt32(key string, v int32) {
	m.put(key, binary.BigEndian.AppendUint32(nil, uint32(v)))
}

func (m *writeFileInfoMap) putInt64(key string, v int64) {
	m.put(key, binary.BigEndian.AppendUint64(nil, uint64(v)))
}

func (m *writeFileInfoMap) putBool(key string, v bool) {
	b := byte(0)
	if v {
		b = 0xFF
	}
	m.put(key, []byte{b})
}

// appendProto appends "PBUF" + the length-delimited FileInfoProto
// (repeated BytesBytesPair map_entry = 1; BytesBytesPair{bytes first = 1; bytes second = 2}).
func (m *writeFileInfoMap) appendProto(dst []byte) []byte {
	idx := make([]int, len(m.keys))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		return bytes.Compare([]byte(m.keys[idx[a]]), []byte(m.keys[idx[b]])) < 0
	})
	var msg []byte
	for _, i := range idx {
		k, v := m.keys[i], m.values[i]
		pairLen := 1 + writeUvarintLen(uint64(len(k))) + len(k) + 1 + writeUvarintLen(uint64(len(v))) + len(v)
		msg = append(msg, 0x0A)
		msg = binary.AppendUvarint(msg, uint64(pairLen))
		msg = append(msg, 0x0A)
		msg = binary.AppendUvarint(msg, uint64(len(k)))
		msg = append(msg, k...)
		msg = append(msg, 0x12)
		msg = binary.AppendUvarint(msg, uint64(len(v)))
		msg = append(msg, v...)
	}
	dst = append(dst, "PBUF"...)
	dst = binary.AppendUvarint(dst, uint64(len(msg)))
	return append(dst, msg...)
}

func writeUvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
