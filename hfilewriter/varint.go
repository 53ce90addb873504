package hfilewriter

import "errors"

// AppendVLong appends v as Hadoop WritableUtils.writeVLong does (§1.2).
func AppendVLong(dst []byte, v int64) []byte {
	if v >= -112 && v <= 127 {
		return append(dst, byte(v))
	}
	l := int64(-112)
	if v < 0 {
		v = ^v
		l = -120
	}
	for tmp := v; tmp != 0; tmp >>= 8 {
		l--
	}
	dst = append(dst, byte(l))
	n := int(-(l + 112))
	if l < -120 {
		n = int(-(l + 120))
	}
	for i := n - 1; i >= 0; i-- {
		dst = append(dst, byte(v>>(8*uint(i))))
	}
	return dst
}

// VLongSize is the encoded size of v.
func VLongSize(v int64) int {
	if v >= -112 && v <= 127 {
		return 1
	}
	if v < 0 {
		v = ^v
	}
	n := 1
	for tmp := v; tmp != 0; tmp >>= 8 {
		n++
	}
	return n
}

var errVLong = errors.New("truncated vlong")

// ReadVLong decodes a Hadoop vlong from b, returning the value and the bytes consumed.
func ReadVLong(b []byte) (int64, int, error) {
	if len(b) == 0 {
		return 0, 0, errVLong
	}
	first := int8(b[0])
	if first >= -112 {
		return int64(first), 1, nil
	}
	size := int(-111 - int(first))
	neg := first < -120
	if neg {
		size = int(-119 - int(first))
	}
	if len(b) < size {
		return 0, 0, errVLong
	}
	var v int64
	for i := 1; i < size; i++ {
		v = v<<8 | int64(b[i])
	}
	if neg {
		v = ^v
	}
	return v, size, nil
}

// AppendByteArray appends vint(len(b)) followed by b (Bytes.writeByteArray).
func AppendByteArray(dst, b []byte) []byte {
	dst = AppendVLong(dst, int64(len(b)))
	return append(dst, b...)
}

// ReadByteArray reads a Bytes.writeByteArray field.
func ReadByteArray(b []byte) ([]byte, int, error) {
	l, n, err := ReadVLong(b)
	if err != nil {
		return nil, 0, err
	}
	if l < 0 || int64(len(b)-n) < l {
		return nil, 0, errors.New("truncated byte array")
	}
	return b[n : n+int(l)], n + int(l), nil
}
