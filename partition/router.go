package partition

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Router routes row keys to regions like Splits.Region, faster: it keeps each split point's first
// 8 bytes as a big-endian integer (zero-padded) and compares those, falling back to a full byte
// comparison only when the 8-byte prefixes are equal. Zero-padding preserves order: a differing padded
// prefix orders the keys the same way the bytes do. A Router is immutable and safe for concurrent use.
type Router struct {
	splits Splits
	prefix []uint64
}

// NewRouter returns a Router for s (which must be valid; see Splits.Validate).
func NewRouter(s Splits) *Router {
	r := &Router{splits: s, prefix: make([]uint64, len(s))}
	for i, k := range s {
		r.prefix[i] = prefix8(k)
	}
	return r
}

// Region returns the region holding row (the number of split points <= row).
func (r *Router) Region(row []byte) int {
	if len(row) >= 8 {
		p := binary.BigEndian.Uint64(row)
		if len(r.prefix) <= fewSplits {
			if lo, ok := countPrefix(r.prefix, p); ok {
				return lo
			}
		} else if lo, ok := searchPrefix(r.prefix, p); ok {
			return lo
		}
	}
	return r.region(row)
}

// fewSplits is the number of split points up to which Region counts the prefixes below the row's
// instead of searching them: a load's given split points are mostly few (the engine routes with a
// Router below 16 of them), and a binary search's branches go either way at random for each row.
const fewSplits = 16

// countPrefix is searchPrefix by counting, without a branch per split point: the prefixes below p, from
// the borrows of subtracting p from each; the prefixes are in order, so one equals p when the first
// one not below it does.
func countPrefix(prefix []uint64, p uint64) (int, bool) {
	var below uint64
	for _, sp := range prefix {
		_, b := bits.Sub64(sp, p, 0)
		below, _ = bits.Add64(below, 0, b)
	}
	lo := int(below)
	return lo, lo == len(prefix) || prefix[lo] != p
}

// searchPrefix returns the number of prefixes below p, and false when one of them equals p (the
// rows' bytes after the prefix decide then). A leaf without calls: Region's usual path needs no frame.
func searchPrefix(prefix []uint64, p uint64) (int, bool) {
	lo, hi := 0, len(prefix)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		sp := prefix[mid]
		if sp == p {
			return 0, false
		}
		if sp < p {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, true
}

// region is Region for any row: split points whose prefix equals the row's are compared in full.
func (r *Router) region(row []byte) int {
	p := prefix8(row)
	lo, hi := 0, len(r.prefix)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		sp := r.prefix[mid]
		if sp < p || (sp == p && bytes.Compare(r.splits[mid], row) <= 0) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

func prefix8(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var buf [8]byte
	copy(buf[:], b)
	return binary.BigEndian.Uint64(buf[:])
}
