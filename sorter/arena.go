package sorter

import (
	"bytes"
	"encoding/binary"
	"slices"

	"github.com/hfload/hfload/hfilewriter"
)

// entry is the index of one record in the arena: 24 bytes, sorted instead of the records.
type entry struct {
	prefix uint64 // first 8 bytes of the row, big-endian, zero padded
	off    uint32 // offset of the record in its slab
	slab   uint32 // slab id
	seq    uint64 // input order
}

// arena holds records back to back in slabs; a record never straddles two slabs.
type arena struct {
	slabs [][]byte
	idx   []entry
}

// rowPrefix returns the first 8 bytes of the row of a KeyValue record, big-endian, zero padded.
// Comparing prefixes as integers orders rows as bytes.Compare does whenever the prefixes differ.
func rowPrefix(kv []byte) uint64 {
	rl := int(binary.BigEndian.Uint16(kv[8:]))
	row := kv[10 : 10+rl]
	if len(row) >= 8 {
		return binary.BigEndian.Uint64(row)
	}
	var b [8]byte
	copy(b[:], row)
	return binary.BigEndian.Uint64(b[:])
}

// record returns the KeyValue record of e.
func (a *arena) record(e *entry) []byte {
	s := a.slabs[e.slab][e.off:]
	n := 8 + binary.BigEndian.Uint32(s) + binary.BigEndian.Uint32(s[4:])
	return s[:n:n]
}

// compare orders two entries by (CompareKeys, seq).
func (a *arena) compare(x, y *entry) int {
	if x.prefix != y.prefix {
		if x.prefix < y.prefix {
			return -1
		}
		return 1
	}
	if c := hfilewriter.CompareKeys(hfilewriter.KVKey(a.record(x)), hfilewriter.KVKey(a.record(y))); c != 0 {
		return c
	}
	switch {
	case x.seq < y.seq:
		return -1
	case x.seq > y.seq:
		return 1
	}
	// Equal key and seq (a caller reusing a seq): order by value so the output stays deterministic.
	return bytes.Compare(hfilewriter.KVValue(a.record(x)), hfilewriter.KVValue(a.record(y)))
}

// radixCutoff is the size below which a bucket is sorted by comparisons.
const radixCutoff = 64

// smallGroup is the largest group of equal prefixes sorted by sortEqualPrefix.
const smallGroup = 32

// sortEqualPrefix sorts a small group whose prefixes are all equal (typically the cells of one row).
// It first restores arena order, which is the order the cells were added in: the pipeline emits a
// row's cells in key order, so the insertion sort that follows mostly confirms the order with one
// comparison per entry instead of sorting a permutation the radix pass scrambled.
func (a *arena) sortEqualPrefix(v []entry) {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && (v[j].slab < v[j-1].slab || v[j].slab == v[j-1].slab && v[j].off < v[j-1].off); j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && a.compare(&v[j], &v[j-1]) < 0; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}

// sort orders the index by (CompareKeys, seq): an in-place MSD radix sort (American flag sort) on the
// 8-byte row prefix, needing no extra memory, with pdqsort on the full comparator for small buckets and
// for groups whose whole prefix is equal.
func (a *arena) sort() { a.radixSort(a.idx, 0) }

func (a *arena) radixSort(v []entry, depth int) {
	for {
		if depth == 8 && len(v) <= smallGroup {
			a.sortEqualPrefix(v)
			return
		}
		if len(v) < radixCutoff || depth == 8 {
			slices.SortFunc(v, func(x, y entry) int { return a.compare(&x, &y) })
			return
		}
		shift := uint(56 - 8*depth)
		var count [256]int
		for i := range v {
			count[byte(v[i].prefix>>shift)]++
		}
		if count[byte(v[0].prefix>>shift)] == len(v) { // one bucket: look at the next byte
			depth++
			continue
		}
		var next, end [256]int
		sum := 0
		for b := range count {
			next[b] = sum
			sum += count[b]
			end[b] = sum
		}
		for b := range count {
			for next[b] < end[b] {
				e := v[next[b]]
				d := int(byte(e.prefix >> shift))
				for d != b {
					e, v[next[d]] = v[next[d]], e
					next[d]++
					d = int(byte(e.prefix >> shift))
				}
				v[next[b]] = e
				next[b]++
			}
		}
		start := 0
		for b := range count {
			if n := count[b]; n > 1 {
				a.radixSort(v[start:start+n], depth+1)
			}
			start += count[b]
		}
		return
	}
}

// memSource iterates a sorted arena.
type memSource struct {
	a   *arena
	i   int
	cur []byte
	sq  uint64
}

func (m *memSource) next() (bool, error) {
	if m.i >= len(m.a.idx) {
		m.cur = nil
		return false, nil
	}
	e := &m.a.idx[m.i]
	m.i++
	m.cur = m.a.record(e)
	m.sq = e.seq
	return true, nil
}

func (m *memSource) kv() []byte      { return m.cur }
func (m *memSource) seq() uint64     { return m.sq }
func (m *memSource) close() error    { return nil }
func (m *memSource) bufBytes() int64 { return 0 }
