package pipeline

import (
	"fmt"
	"math"
	"strconv"
	"time"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/decimal128"
)

// valKind says which field of a value holds the data.
type valKind uint8

const (
	vkNull    valKind = iota
	vkText            // b: text (a CSV field, a Parquet string)
	vkBinary          // b: raw bytes (Parquet binary)
	vkInt             // i
	vkFloat           // f
	vkBool            // i: 0 or 1
	vkTimeUS          // i: microseconds since the epoch, UTC
	vkDate            // i: days since the epoch
	vkDecimal         // i: unscaled value, scale: digits after the point
)

// value is one field of one row, as read from the input, before encoding. It never owns b.
type value struct {
	kind  valKind
	f32   bool // f came from a float32 (text form uses the float32's shortest digits)
	scale int32
	b     []byte
	i     int64
	f     float64
}

// empty reports a NULL, or text or bytes of length 0.
func (v *value) empty() bool {
	return v.kind == vkNull || len(v.b) == 0 && (v.kind == vkText || v.kind == vkBinary)
}

// unsafeString views b as a string without copying. The string must not outlive b (it is only passed to
// parsers, and their errors are formatted before b changes).
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// unsafeBytes views s as bytes without copying; the bytes must not be modified.
func unsafeBytes(s string) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// appendText appends the canonical text of v (ImportTsv mode and the string encoding of typed Parquet
// values): integers in decimal, floats in Go's shortest round-trip form ('g', -1), booleans true/false,
// timestamps "2006-01-02 15:04:05[.ffffff]" in UTC (fraction only when non-zero, trailing zeros removed),
// dates "2006-01-02", decimals with exactly their scale, strings and binary as their bytes.
func appendText(dst []byte, v *value) []byte {
	switch v.kind {
	case vkText, vkBinary:
		return append(dst, v.b...)
	case vkInt:
		return strconv.AppendInt(dst, v.i, 10)
	case vkFloat:
		if v.f32 {
			return strconv.AppendFloat(dst, v.f, 'g', -1, 32)
		}
		return strconv.AppendFloat(dst, v.f, 'g', -1, 64)
	case vkBool:
		if v.i != 0 {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case vkTimeUS:
		sec, us := v.i/1e6, v.i%1e6
		if us < 0 {
			sec, us = sec-1, us+1e6
		}
		return time.Unix(sec, us*1000).UTC().AppendFormat(dst, "2006-01-02 15:04:05.999999")
	case vkDate:
		return time.Unix(v.i*86400, 0).UTC().AppendFormat(dst, "2006-01-02")
	case vkDecimal:
		return appendDecimal(dst, v.i, v.scale)
	}
	return dst
}

// appendDecimal formats an unscaled int64 with scale digits after the point (scale may be negative).
func appendDecimal(dst []byte, unscaled int64, scale int32) []byte {
	if scale <= 0 {
		dst = strconv.AppendInt(dst, unscaled, 10)
		for ; scale < 0; scale++ {
			if unscaled != 0 {
				dst = append(dst, '0')
			}
		}
		return dst
	}
	neg := unscaled < 0
	var u uint64
	if neg {
		u = uint64(-(unscaled + 1)) + 1
		dst = append(dst, '-')
	} else {
		u = uint64(unscaled)
	}
	var digits [24]byte
	d := strconv.AppendUint(digits[:0], u, 10)
	if len(d) <= int(scale) {
		dst = append(dst, '0', '.')
		for k := len(d); k < int(scale); k++ {
			dst = append(dst, '0')
		}
		return append(dst, d...)
	}
	cut := len(d) - int(scale)
	dst = append(dst, d[:cut]...)
	dst = append(dst, '.')
	return append(dst, d[cut:]...)
}

// arrowValue reads row i of arr into v. Values that have no native kind here (uint64 beyond int64,
// decimals beyond int64, times of day) are formatted as text into scratch, which is returned (grown).
func arrowValue(arr arrow.Array, i int, v *value, scratch []byte) ([]byte, error) {
	if arr.IsNull(i) {
		v.kind = vkNull
		return scratch, nil
	}
	switch a := arr.(type) {
	case *array.Dictionary:
		return arrowValue(a.Dictionary(), a.GetValueIndex(i), v, scratch)
	case *array.String:
		v.kind, v.b = vkText, unsafeBytes(a.Value(i))
	case *array.LargeString:
		v.kind, v.b = vkText, unsafeBytes(a.Value(i))
	case *array.Binary:
		v.kind, v.b = vkBinary, a.Value(i)
	case *array.LargeBinary:
		v.kind, v.b = vkBinary, a.Value(i)
	case *array.FixedSizeBinary:
		v.kind, v.b = vkBinary, a.Value(i)
	case *array.Int8:
		v.kind, v.i = vkInt, int64(a.Value(i))
	case *array.Int16:
		v.kind, v.i = vkInt, int64(a.Value(i))
	case *array.Int32:
		v.kind, v.i = vkInt, int64(a.Value(i))
	case *array.Int64:
		v.kind, v.i = vkInt, a.Value(i)
	case *array.Uint8:
		v.kind, v.i = vkInt, int64(a.Value(i))
	case *array.Uint16:
		v.kind, v.i = vkInt, int64(a.Value(i))
	case *array.Uint32:
		v.kind, v.i = vkInt, int64(a.Value(i))
	case *array.Uint64:
		u := a.Value(i)
		if u <= math.MaxInt64 {
			v.kind, v.i = vkInt, int64(u)
		} else {
			scratch = strconv.AppendUint(scratch[:0], u, 10)
			v.kind, v.b = vkText, scratch
		}
	case *array.Float32:
		// Formatted as the float32's own shortest form, not its float64 widening's (0.1f → "0.1").
		v.kind, v.f, v.f32 = vkFloat, float64(a.Value(i)), true
	case *array.Float64:
		v.kind, v.f, v.f32 = vkFloat, a.Value(i), false
	case *array.Boolean:
		v.kind, v.i = vkBool, 0
		if a.Value(i) {
			v.i = 1
		}
	case *array.Date32:
		v.kind, v.i = vkDate, int64(a.Value(i))
	case *array.Date64:
		ms := int64(a.Value(i))
		v.kind, v.i = vkDate, floorDiv(ms, 86400000)
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		t := int64(a.Value(i))
		switch unit {
		case arrow.Second:
			t *= 1e6
		case arrow.Millisecond:
			t *= 1e3
		case arrow.Nanosecond:
			t = floorDiv(t, 1000)
		}
		v.kind, v.i = vkTimeUS, t
	case *array.Decimal128:
		scale := a.DataType().(*arrow.Decimal128Type).Scale
		n := a.Value(i)
		if n.HighBits() == 0 && n.LowBits() <= math.MaxInt64 || n.HighBits() == -1 && n.LowBits() > math.MaxInt64 {
			v.kind, v.i, v.scale = vkDecimal, int64(n.LowBits()), scale
		} else {
			scratch = append(scratch[:0], decimal128.Num(n).ToString(scale)...)
			v.kind, v.b = vkText, scratch
		}
	case *array.Time32:
		unit := a.DataType().(*arrow.Time32Type).Unit
		scratch = a.Value(i).ToTime(unit).AppendFormat(scratch[:0], "15:04:05.999999")
		v.kind, v.b = vkText, scratch
	case *array.Time64:
		unit := a.DataType().(*arrow.Time64Type).Unit
		scratch = a.Value(i).ToTime(unit).AppendFormat(scratch[:0], "15:04:05.999999")
		v.kind, v.b = vkText, scratch
	default:
		return scratch, fmt.Errorf("unsupported Parquet/Arrow column type %s", arr.DataType())
	}
	return scratch, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
