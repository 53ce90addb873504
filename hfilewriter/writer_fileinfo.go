package hfilewriter

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"unsafe"
)

// writeFileInfoMap collects file info entries; they are serialized sorted by key (unsigned bytes),
// as HBase's TreeMap(Bytes.BYTES_COMPARATOR) does. A later put of the same key replaces the value.
// Every file has one, so its numbers and flags share one small buffer (num) instead of one
// allocation each.
type writeFileInfoMap struct {
	keys   []string
	values [][]byte
	num    []byte // backing bytes of putInt32, putInt64, putBool, putCopy and putString values

	// last is how many keys the map held before its last reset: distinct keys, still in keys' array
	// past len(keys). inOrder: every key put since that reset was the one at its position there. The
	// files of a load put the same keys in the same order, so put takes such a key without comparing it
	// with every key before it.
	last    int
	inOrder bool
	// gen counts the keys put's search added: the only writes to the key array (a key put in order
	// or a value replaced leaves it as it was), so fileInfoOrder knows the keys it checked are still
	// there.
	gen uint64

	// direct, when set (resetDirect), is the last message's template: each put writes its value
	// straight into its slot there, keys, values and order untouched, if it is the key put at its
	// place in the last message's order with a value of the same length (n counts the puts); a put
	// that is not is missed (miss), and the caller puts the file's info again after reset.
	direct *fileInfoOrder
	n      int
	miss   bool
}

// fileInfoEntries is about how many entries a file's info holds (Writer.fileInfo).
const fileInfoEntries = 20

func (m *writeFileInfoMap) put(key string, value []byte) {
	if m.direct != nil {
		if s := m.slot(key, len(value)); s != nil {
			copy(s, value)
		}
		return
	}
	if i := len(m.keys); m.inOrder && i < m.last && m.keys[:m.last][i] == key {
		// The keys before it are the first i of the last reset's, which are distinct: key is not among them.
		m.keys = m.keys[:i+1]
		m.values = append(m.values, value)
		return
	}
	m.inOrder = false
	for i, k := range m.keys {
		if k == key {
			m.values[i] = value
			return
		}
	}
	if m.keys == nil {
		m.keys = make([]string, 0, fileInfoEntries)
		m.values = make([][]byte, 0, fileInfoEntries)
	}
	m.keys = append(m.keys, key)
	m.values = append(m.values, value)
	m.gen++
}

// reset empties m for another file's info, keeping its storage.
func (m *writeFileInfoMap) reset() {
	m.direct, m.n, m.miss = nil, 0, false
	clear(m.values)
	m.last, m.inOrder = len(m.keys), true
	m.keys, m.values, m.num = m.keys[:0], m.values[:0], m.num[:0]
}

// resetDirect starts another file's info put straight into c's last message (see direct), when c
// has one; it reports whether it did.
func (m *writeFileInfoMap) resetDirect(c *fileInfoOrder) bool {
	if c.payload == nil || len(c.vals) != len(c.keys) || len(c.keys) == 0 {
		return false
	}
	m.direct, m.n, m.miss, m.num = c, 0, false, m.num[:0]
	return true
}

// directDone reports whether every put since resetDirect went into its slot, and every slot got one:
// the template is the message of the file's info.
func (m *writeFileInfoMap) directDone() bool {
	return m.direct != nil && !m.miss && m.n == len(m.direct.vals)
}

// slot returns the template's bytes for the value of the next put (direct mode) if key is the one
// put there last time and n its value's length; otherwise nil, and the put is missed.
func (m *writeFileInfoMap) slot(key string, n int) []byte {
	c, i := m.direct, m.n
	m.n++
	if i < len(c.vals) {
		// The keys are the constants putFileInfo puts, the same strings as last time: compared by
		// address first, by bytes only when that differs.
		if v, k := c.vals[i], c.keys[i]; len(v) == n && len(k) == len(key) && (unsafe.StringData(k) == unsafe.StringData(key) || k == key) {
			return v
		}
	}
	m.miss = true
	return nil
}

// putCopy puts a copy of value (in m.num).
func (m *writeFileInfoMap) putCopy(key string, value []byte) {
	if m.direct != nil {
		if s := m.slot(key, len(value)); s != nil {
			copy(s, value)
		}
		return
	}
	m.grow(len(value))
	m.num = append(m.num, value...)
	m.putNum(key, len(value))
}

// putString puts the bytes of value (in m.num).
func (m *writeFileInfoMap) putString(key, value string) {
	if m.direct != nil {
		if s := m.slot(key, len(value)); s != nil {
			copy(s, value)
		}
		return
	}
	m.grow(len(value))
	m.num = append(m.num, value...)
	m.putNum(key, len(value))
}

// putNum puts the n bytes that were just appended to m.num.
func (m *writeFileInfoMap) putNum(key string, n int) {
	m.put(key, m.num[len(m.num)-n:len(m.num):len(m.num)])
}

func (m *writeFileInfoMap) grow(n int) {
	if cap(m.num)-len(m.num) < n {
		m.num = make([]byte, 0, max(128, 2*cap(m.num), 2*n)) // earlier values keep the old array
	}
}

func (m *writeFileInfoMap) putInt32(key string, v int32) {
	if m.direct != nil {
		if s := m.slot(key, 4); s != nil {
			binary.BigEndian.PutUint32(s, uint32(v))
		}
		return
	}
	m.grow(4)
	m.num = binary.BigEndian.AppendUint32(m.num, uint32(v))
	m.putNum(key, 4)
}

func (m *writeFileInfoMap) putInt64(key string, v int64) {
	if m.direct != nil {
		if s := m.slot(key, 8); s != nil {
			binary.BigEndian.PutUint64(s, uint64(v))
		}
		return
	}
	m.grow(8)
	m.num = binary.BigEndian.AppendUint64(m.num, uint64(v))
	m.putNum(key, 8)
}

func (m *writeFileInfoMap) putBool(key string, v bool) {
	b := byte(0)
	if v {
		b = 0xFF
	}
	if m.direct != nil {
		if s := m.slot(key, 1); s != nil {
			s[0] = b
		}
		return
	}
	m.grow(1)
	m.num = append(m.num, b)
	m.putNum(key, 1)
}

// appendProto appends "PBUF" + the length-delimited FileInfoProto
// (repeated BytesBytesPair map_entry = 1; BytesBytesPair{bytes first = 1; bytes second = 2}).
func (m *writeFileInfoMap) appendProto(dst []byte) []byte { return m.appendProtoOrder(dst, nil) }

// fileInfoOrder remembers the sorted order of the last key list it was asked for: the files of a
// run have the same file info keys in the same put order, so a Writer made with NewWriterReusing
// sorts them once, not once a file.
//
// It also keeps the last message written with that order (payload) and where its values lie: a file
// whose values have the same lengths writes the same bytes but for the values, so appendProtoOrder
// copies them and puts the values in place.
type fileInfoOrder struct {
	keys  []string
	order []int
	// m and gen: the map whose keys were last found equal to keys, and its gen then (ofMap).
	m   *writeFileInfoMap
	gen uint64

	payload []byte     // the last message appendProtoOrder wrote with keys (nil: none)
	values  [][2]int32 // its values in payload order (order[j]'s): offset in payload and length
	vals    [][]byte   // the same values in put order (keys[i]'s), as slices of payload, capacity limited
}

// of returns the indexes of keys in sorted order (from the cache when keys are the last ones).
func (c *fileInfoOrder) of(keys []string) []int {
	if c != nil && c.keys != nil && slices.Equal(c.keys, keys) {
		return c.order
	}
	if c != nil {
		c.payload = nil // another key list: the last message is not its layout
	}
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	// Go compares strings by their bytes, unsigned: Bytes.BYTES_COMPARATOR's order.
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	if c != nil {
		c.keys, c.order = append(c.keys[:0:0], keys...), idx
	}
	return idx
}

// ofMap is of(m.keys), without comparing the keys when they are m's keys of the last call and m's
// search has added none since (the files of a writer, one after the other).
func (c *fileInfoOrder) ofMap(m *writeFileInfoMap) []int {
	if c != nil && c.m == m && c.gen == m.gen && c.keys != nil && len(c.keys) == len(m.keys) {
		return c.order
	}
	idx := c.of(m.keys)
	if c != nil {
		c.m, c.gen = m, m.gen
	}
	return idx
}

// appendProtoOrder is appendProto taking the sort order from cache (nil: none), and the message's
// bytes from the last one's when every value has the length it had there.
func (m *writeFileInfoMap) appendProtoOrder(dst []byte, cache *fileInfoOrder) []byte {
	if m.direct != nil && m.direct == cache && m.directDone() {
		return append(dst, cache.payload...) // every value put in its place (resetDirect)
	}
	idx := cache.ofMap(m)
	start := len(dst)
	if cache != nil && cache.payload != nil && len(cache.values) == len(idx) {
		same := true
		for j, i := range idx {
			if len(m.values[i]) != int(cache.values[j][1]) {
				same = false
				break
			}
		}
		if same {
			dst = append(dst, cache.payload...)
			for j, i := range idx {
				copy(dst[start+int(cache.values[j][0]):], m.values[i])
			}
			return dst
		}
	}
	pairLen := func(i int) int {
		k, v := m.keys[i], m.values[i]
		return 1 + writeUvarintLen(uint64(len(k))) + len(k) + 1 + writeUvarintLen(uint64(len(v))) + len(v)
	}
	size := 0
	for _, i := range idx {
		n := pairLen(i)
		size += 1 + writeUvarintLen(uint64(n)) + n
	}
	dst = append(dst, "PBUF"...)
	dst = binary.AppendUvarint(dst, uint64(size))
	remember := cache != nil && size <= math.MaxInt32/2
	if remember {
		cache.values = cache.values[:0]
	}
	for _, i := range idx {
		k, v := m.keys[i], m.values[i]
		dst = append(dst, 0x0A)
		dst = binary.AppendUvarint(dst, uint64(pairLen(i)))
		dst = append(dst, 0x0A)
		dst = binary.AppendUvarint(dst, uint64(len(k)))
		dst = append(dst, k...)
		dst = append(dst, 0x12)
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		if remember {
			cache.values = append(cache.values, [2]int32{int32(len(dst) - start), int32(len(v))})
		}
		dst = append(dst, v...)
	}
	if remember {
		cache.payload = append(cache.payload[:0], dst[start:]...)
		cache.vals = append(cache.vals[:0], make([][]byte, len(idx))...)
		for j, i := range idx {
			off, n := int(cache.values[j][0]), int(cache.values[j][1])
			cache.vals[i] = cache.payload[off : off+n : off+n]
		}
	}
	return dst
}

func writeUvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
