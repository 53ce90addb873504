package partition

import (
	"bytes"
	"encoding/binary"
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
		if lo, ok := searchPrefix(r.prefix, binary.BigEndian.Uint64(row)); ok {
			return lo
		}
	}
	return r.region(row)
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
