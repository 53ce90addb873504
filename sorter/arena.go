package sorter

import (
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
	return 0
}

// sort orders the index by (CompareKeys, seq).
func (a *arena) sort() {
	slices.SortFunc(a.idx, func(x, y entry) int { return a.compare(&x, &y) })
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
