package pipeline

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/hfload/hfload/internal/kv"
)

// encoder holds the scratch space of one worker for encoding values. It is not safe for concurrent use.
type encoder struct {
	text []byte // canonical text of a native (Parquet) value being re-parsed
}

// errNull is returned when a NULL value has to be encoded (a key part or a timestamp).
var errNull = errors.New("value is NULL")

// textOf returns the bytes of v as text: the field itself for text values, the canonical text otherwise.
func (e *encoder) textOf(v *value) []byte {
	if v.kind == vkText || v.kind == vkBinary {
		return v.b
	}
	e.text = appendText(e.text[:0], v)
	return e.text
}

// encode appends v encoded as t to dst. Errors are row-level reasons (the row is rejected).
func (e *encoder) encode(dst []byte, v *value, t Type, tf *timeFormat) ([]byte, error) {
	if v.kind == vkNull {
		return dst, errNull
	}
	switch t {
	case TypeBytes:
		return append(dst, e.textOf(v)...), nil
	case TypeString:
		b := e.textOf(v)
		if !utf8.Valid(b) {
			return dst, errors.New("invalid UTF-8 for type string")
		}
		return append(dst, b...), nil
	case TypeLong, TypeInt, TypeShort:
		n, err := e.toInt(v)
		if err != nil {
			return dst, err
		}
		switch t {
		case TypeLong:
			return binary.BigEndian.AppendUint64(dst, uint64(n)), nil
		case TypeInt:
			if n < math.MinInt32 || n > math.MaxInt32 {
				return dst, fmt.Errorf("%d overflows type int", n)
			}
			return binary.BigEndian.AppendUint32(dst, uint32(int32(n))), nil
		default:
			if n < math.MinInt16 || n > math.MaxInt16 {
				return dst, fmt.Errorf("%d overflows type short", n)
			}
			return binary.BigEndian.AppendUint16(dst, uint16(int16(n))), nil
		}
	case TypeDouble, TypeFloat:
		bits := 64
		if t == TypeFloat {
			bits = 32
		}
		var f float64
		switch v.kind {
		case vkFloat:
			f = v.f
			if bits == 32 && !math.IsInf(f, 0) && math.Abs(f) > math.MaxFloat32 {
				return dst, fmt.Errorf("%g overflows type float", f)
			}
		case vkInt:
			f = float64(v.i)
		default:
			b := e.textOf(v)
			var err error
			f, err = strconv.ParseFloat(unsafeString(b), bits)
			if err != nil {
				if errors.Is(err, strconv.ErrRange) {
					return dst, fmt.Errorf("%q overflows type %s", b, t)
				}
				return dst, fmt.Errorf("%q is not a number", b)
			}
		}
		if bits == 32 {
			return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case TypeBoolean:
		var on bool
		switch v.kind {
		case vkBool:
			on = v.i != 0
		case vkInt:
			if v.i != 0 && v.i != 1 {
				return dst, fmt.Errorf("%d is not a boolean (want 0 or 1)", v.i)
			}
			on = v.i == 1
		default:
			b := e.textOf(v)
			var ok bool
			on, ok = parseBool(b)
			if !ok {
				return dst, fmt.Errorf("%q is not a boolean (want true/false, 1/0, t/f, yes/no)", b)
			}
		}
		if on {
			return append(dst, 0xFF), nil
		}
		return append(dst, 0x00), nil
	case TypeHex:
		return appendHexDecoded(dst, e.textOf(v))
	case TypeBase64:
		return appendBase64Decoded(dst, e.textOf(v))
	case TypeDecimal:
		b := e.textOf(v)
		if !validDecimal(b) {
			return dst, fmt.Errorf("%q is not a decimal number", b)
		}
		return append(dst, b...), nil
	case TypeTimestamp:
		ms, err := e.toMillis(v, tf)
		if err != nil {
			return dst, err
		}
		return binary.BigEndian.AppendUint64(dst, uint64(ms)), nil
	}
	return dst, fmt.Errorf("unsupported type %s", t)
}

// toInt reads v as a 64-bit integer.
func (e *encoder) toInt(v *value) (int64, error) {
	switch v.kind {
	case vkInt, vkBool:
		return v.i, nil
	case vkFloat:
		if v.f != math.Trunc(v.f) || v.f < -9.223372036854775808e18 || v.f >= 9.223372036854775808e18 {
			return 0, fmt.Errorf("%g is not a 64-bit integer", v.f)
		}
		return int64(v.f), nil
	case vkTimeUS:
		return floorDiv(v.i, 1000), nil
	}
	return parseInt(e.textOf(v))
}

// parseInt parses an optionally signed decimal integer (Java's Long.parseLong syntax for ASCII digits).
func parseInt(b []byte) (int64, error) {
	if len(b) == 0 {
		return 0, errors.New("empty string is not an integer")
	}
	neg := false
	i := 0
	if b[0] == '-' || b[0] == '+' {
		neg = b[0] == '-'
		i = 1
		if len(b) == 1 {
			return 0, fmt.Errorf("%q is not an integer", b)
		}
	}
	var u uint64
	for ; i < len(b); i++ {
		c := b[i] - '0'
		if c > 9 {
			return 0, fmt.Errorf("%q is not an integer", b)
		}
		if u > (1<<63)/10 {
			return 0, fmt.Errorf("%q overflows a 64-bit integer", b)
		}
		u = u*10 + uint64(c)
		if u > 1<<63 {
			return 0, fmt.Errorf("%q overflows a 64-bit integer", b)
		}
	}
	if neg {
		return -int64(u-1) - 1, nil
	}
	if u > math.MaxInt64 {
		return 0, fmt.Errorf("%q overflows a 64-bit integer", b)
	}
	return int64(u), nil
}

func parseBool(b []byte) (on, ok bool) {
	switch len(b) {
	case 1:
		switch b[0] | 0x20 {
		case '1' | 0x20, 't', 'y':
			return true, true
		case '0' | 0x20, 'f', 'n':
			return false, true
		}
	case 2:
		return false, (b[0]|0x20) == 'n' && (b[1]|0x20) == 'o'
	case 3:
		return true, (b[0]|0x20) == 'y' && (b[1]|0x20) == 'e' && (b[2]|0x20) == 's'
	case 4:
		return true, (b[0]|0x20) == 't' && (b[1]|0x20) == 'r' && (b[2]|0x20) == 'u' && (b[3]|0x20) == 'e'
	case 5:
		return false, (b[0]|0x20) == 'f' && (b[1]|0x20) == 'a' && (b[2]|0x20) == 'l' && (b[3]|0x20) == 's' &&
			(b[4]|0x20) == 'e'
	}
	return false, false
}

func appendHexDecoded(dst, src []byte) ([]byte, error) {
	if len(src)%2 != 0 {
		return dst, fmt.Errorf("hex %q has an odd length", src)
	}
	for i := 0; i < len(src); i += 2 {
		h, ok1 := kv.Unhex(src[i])
		l, ok2 := kv.Unhex(src[i+1])
		if !ok1 || !ok2 {
			return dst, fmt.Errorf("%q is not hex", src)
		}
		dst = append(dst, h<<4|l)
	}
	return dst, nil
}

// appendBase64Decoded decodes standard base64, with or without '=' padding.
func appendBase64Decoded(dst, src []byte) ([]byte, error) {
	for len(src) > 0 && src[len(src)-1] == '=' {
		src = src[:len(src)-1]
	}
	n := base64.RawStdEncoding.DecodedLen(len(src))
	dst = slices.Grow(dst, n)
	m, err := base64.RawStdEncoding.Decode(dst[len(dst):len(dst)+n], src)
	if err != nil {
		return dst, fmt.Errorf("%q is not base64", src)
	}
	return dst[:len(dst)+m], nil
}

// validDecimal accepts [+-]digits[.digits][(e|E)[+-]digits] with at least one digit before the exponent
// (the syntax of java.math.BigDecimal's string constructor).
func validDecimal(b []byte) bool {
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		digits++
	}
	if i < len(b) && b[i] == '.' {
		i++
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		exp := 0
		for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(b)
}
