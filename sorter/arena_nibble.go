package sorter

// This file holds the radix sort's pass over a small bucket whose entries first differ in the low half
// of one byte (a decimal digit, the usual case once the leading digits are sorted): 16 buckets, whose
// counts cost little to clear and walk, where a pass of 256 cost more than the comparison sort it
// saved.

// nibbleMin is the smallest bucket sortNibble distributes; smaller ones go to sortSmall. A bucket of
// radixCutoff entries or more has a full pass (radixStep).
const nibbleMin = 16

// sortNibble sorts v (fewer than radixCutoff entries sharing their cached row bytes before depth) as
// radixSort would when its entries' first differing byte from depth on differs in its low four bits
// only: one pass on those bits, then radixSort of each bucket from the next byte. It reports false,
// v unchanged, otherwise.
func (a *arena) sortNibble(v []entry, depth, w int) bool {
	if len(v) > radixCutoff {
		return false
	}
	dp, dn := diffBits(v)
	d := diffDepthFrom(dp, dn, depth)
	if d == 8*keyWords {
		return false
	}
	k, next := dp, false
	if d >= 8 {
		k, next = dn, true
	}
	sh := uint(56-8*(d&7)) & 63
	if (k>>sh)&0xF0 != 0 {
		return false
	}
	// The bucket is small: its digits are read once, and its entries are copied out in bucket order
	// and back (instead of swapped around cycles in place).
	var count, at [16]int
	var digits [radixCutoff]uint8
	var tmp [radixCutoff]entry
	dg := digits[:len(v)]
	if next {
		for i := range dg {
			dg[i] = uint8(v[i].next>>sh) & 15
		}
	} else {
		for i := range dg {
			dg[i] = uint8(v[i].prefix>>sh) & 15
		}
	}
	for _, c := range dg {
		count[c&15]++
	}
	sum := 0
	for b := range count {
		at[b] = sum
		sum += count[b]
	}
	for i, c := range dg {
		tmp[uint(at[c&15])%radixCutoff] = v[i] // (< len(v): the modulo only spares a bounds check)
		at[c&15]++
	}
	copy(v, tmp[:len(v)])
	start := 0
	for b := range count {
		if n := count[b]; n > 1 {
			a.radixSort(v[start:start+n], d+1, w)
		}
		start += count[b]
	}
	return true
}
