package sorter

// This file holds the digit of a radix pass: one byte of the entries' cached row bytes, or the low
// halves of two neighbouring bytes when both differ only there. Keys are mostly decimal digits
// ([customer][order], order ids, salts, timestamps): bytes 0x30-0x39, whose high halves all share, so one
// pass of 256 buckets orders two of their bytes instead of one, halving the passes over the index, and
// the buckets the comparison sort is left with are smaller.

// digit is the key of one radix pass over the word next or prefix (of): width bytes of the row, the
// byte at shift sh of the word, or the low halves of the two bytes from sh on, brought together by a
// multiplication (y = the two bytes masked to 0x0F0F: y*17>>4 holds the first's half over the second's
// in its low byte; one byte: y*16>>4 is y). No branch and no check on the shift in a pass's loops.
// Four fields, so that a pass's loops keep them in registers.
type digit struct {
	sh        uint
	mask, mul uint64
	next      bool // of the next field (bytes 8-15), else of prefix
}

// of returns the digit of the word k.
func (g digit) of(k uint64) byte { return byte((k >> (g.sh & 63)) & g.mask * g.mul >> 4) }

// width returns the number of row bytes g covers: 1, or 2 for a nibble pair (mul 17).
func (g digit) width() int { return int(g.mul&1) + 1 }

// digitAt returns the digit of the pass at byte depth, given dp and dn, the bits in which the entries'
// prefix and next fields differ (diffBits): the nibble pair when the bytes at depth and depth+1 are in
// one word and differ in their low halves only, else the byte.
func digitAt(dp, dn uint64, depth int) digit {
	w, d, next := dp, depth, false
	if depth >= 8 {
		w, d, next = dn, depth-8, true
	}
	sh := uint(56 - 8*d)
	if d < 7 && (w>>(sh-8))&0xF0F0 == 0 {
		return digit{sh: sh - 8, mask: 0x0F0F, mul: 17, next: next}
	}
	return digit{sh: sh, mask: 0xFF, mul: 16, next: next}
}

// diffBits returns the bits in which v's entries' prefix and next fields differ from v[0]'s (from each
// other: ORed over v).
func diffBits(v []entry) (dp, dn uint64) {
	if len(v) == 0 {
		return 0, 0
	}
	p0, n0 := v[0].prefix, v[0].next
	for i := range v {
		dp |= v[i].prefix ^ p0
		dn |= v[i].next ^ n0
	}
	return dp, dn
}

// diffDepthFrom returns the first byte depth, from depth on, in which entries differ whose prefix and
// next fields differ in the bits dp and dn, or 8*keyWords when they are all equal from depth on.
func diffDepthFrom(dp, dn uint64, depth int) int {
	switch {
	case depth >= 8*keyWords:
		return 8 * keyWords
	case depth < 8:
		dp &= ^uint64(0) >> (8 * depth)
	default:
		dp, dn = 0, dn&(^uint64(0)>>(8*(depth-8)))
	}
	return diffDepth(dp, dn)
}
