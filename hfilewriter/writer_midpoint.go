package hfilewriter

import (
	"bytes"
	"encoding/binary"

	"github.com/hfload/hfload/internal/kv"
)

// appendMidpointKey appends the data index key HBase stores for a block whose first key is right
// when the previous block ended with left (HFileWriterImpl.getMidpoint, HBASE-7845): a short "fake"
// key K with left < K <= right. With left == nil (first block) it is right itself. Both keys must
// be well formed and left < right.
func appendMidpointKey(dst, left, right []byte) []byte {
	if left == nil {
		return append(dst, right...)
	}
	l, r := Key(left), Key(right)
	lr, rr := l.Row(), r.Row()
	if c := bytes.Compare(lr, rr); c < 0 {
		return appendFakeKey(dst, writeMinimumMidpoint(lr, rr), midBytes{}, midBytes{})
	} else if c > 0 {
		return append(dst, right...)
	}
	lf, rf := l.Family(), r.Family()
	if c := bytes.Compare(lf, rf); c < 0 {
		return appendFakeKey(dst, asMid(rr), writeMinimumMidpoint(lf, rf), midBytes{})
	} else if c > 0 {
		return append(dst, right...)
	}
	lq, rq := l.Qualifier(), r.Qualifier()
	if bytes.Compare(lq, rq) < 0 {
		return appendFakeKey(dst, asMid(rr), asMid(rf), writeMinimumMidpoint(lq, rq))
	}
	return append(dst, right...)
}

// appendFakeKey appends the flat key (row, family, qualifier, LATEST_TIMESTAMP, Maximum), i.e.
// HBase's createFirstOnRow / createFirstOnRowFamily / createFirstOnRowCol serialized as a key.
// The parts are midBytes so a computed midpoint is appended without allocating.
func appendFakeKey(dst []byte, row midBytes, family midBytes, qualifier midBytes) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(row.len()))
	dst = row.appendTo(dst)
	dst = append(dst, byte(family.len()))
	dst = family.appendTo(dst)
	dst = qualifier.appendTo(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(kv.LatestTimestamp))
	return append(dst, byte(kv.TypeMaximum))
}

// midBytes is a byte string given as prefix + optional replaced last byte, so midpoints can be
// built without allocating.
type midBytes struct {
	prefix  []byte
	last    byte
	hasLast bool
}

func (m midBytes) len() int {
	if m.hasLast {
		return len(m.prefix) + 1
	}
	return len(m.prefix)
}

func (m midBytes) appendTo(dst []byte) []byte {
	dst = append(dst, m.prefix...)
	if m.hasLast {
		dst = append(dst, m.last)
	}
	return dst
}

// writeMinimumMidpoint is HFileWriterImpl.getMinimumMidpointArray for left < right: the shortest
// byte string m with left < m <= right that HBase picks, including its use of the signed Java byte
// when deciding whether left's differing byte can be incremented.
func writeMinimumMidpoint(left, right []byte) midBytes {
	n := min(len(left), len(right))
	i := 0
	for i < n && left[i] == right[i] {
		i++
	}
	if i >= n { // left is a prefix of right
		return midBytes{prefix: right[:i+1]}
	}
	diff := int(int8(left[i]))
	if left[i] != 0xFF && diff+1 < int(right[i]) {
		return midBytes{prefix: left[:i], last: byte(diff + 1), hasLast: true}
	}
	return midBytes{prefix: right[:i+1]}
}

// asMid wraps a plain byte slice.
func asMid(b []byte) midBytes { return midBytes{prefix: b} }
