package hfilewriter

import "encoding/binary"

// copyShort copies src into dst (len(dst) >= len(src)) like copy, with a few word moves for up to 32
// bytes: a cell's row, qualifier and small value are that short, and a call to the runtime's memmove
// per field costs more than the move itself (and makes the caller save and reload its registers).
func copyShort(dst, src []byte) {
	switch n := len(src); {
	case n > 32:
		copy(dst, src)
	case n >= 16:
		_ = dst[n-1]
		a, b := binary.LittleEndian.Uint64(src), binary.LittleEndian.Uint64(src[8:])
		c, d := binary.LittleEndian.Uint64(src[n-16:]), binary.LittleEndian.Uint64(src[n-8:])
		binary.LittleEndian.PutUint64(dst, a)
		binary.LittleEndian.PutUint64(dst[8:], b)
		binary.LittleEndian.PutUint64(dst[n-16:], c)
		binary.LittleEndian.PutUint64(dst[n-8:], d)
	case n >= 8:
		_ = dst[n-1]
		a, b := binary.LittleEndian.Uint64(src), binary.LittleEndian.Uint64(src[n-8:])
		binary.LittleEndian.PutUint64(dst, a)
		binary.LittleEndian.PutUint64(dst[n-8:], b)
	case n >= 4:
		_ = dst[n-1]
		a, b := binary.LittleEndian.Uint32(src), binary.LittleEndian.Uint32(src[n-4:])
		binary.LittleEndian.PutUint32(dst, a)
		binary.LittleEndian.PutUint32(dst[n-4:], b)
	case n > 0:
		_ = dst[n-1]
		dst[0], dst[n>>1], dst[n-1] = src[0], src[n>>1], src[n-1]
	}
}

// copyMid is copyShort for 4 to 15 bytes (a short row key), small enough to be inlined: two
// overlapping moves of 8 or 4 bytes.
func copyMid(dst, src []byte) {
	if n := len(src); n >= 8 {
		*(*[8]byte)(dst[n-8:]) = [8]byte(src[n-8:])
		*(*[8]byte)(dst) = [8]byte(src)
	} else {
		*(*[4]byte)(dst[n-4:]) = [4]byte(src[n-4:])
		*(*[4]byte)(dst) = [4]byte(src)
	}
}
