package sorter

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"strings"
	"sync"

	"github.com/hfload/hfload/internal/cellrec"
	"github.com/hfload/hfload/internal/kv"
)

// Aggregator folds the values of cells with equal keys for summary tables (issue 7). Use one Aggregator
// per Sorter, via Options, so that an error is attributed to that sorter:
//
//	agg, err := sorter.NewAggregator("sum", "long")
//	s := pool.NewSorter(name, agg.Options())
//
// Ops and value types:
//
//   - long: 8-byte big-endian two's complement (Bytes.toBytes(long)); sum, min, max, first, last.
//   - double: 8-byte big-endian IEEE 754 (Bytes.toBytes(double)); sum, min, max, first, last. min/max use
//     Java's Double.compare order (-0.0 < 0.0, NaN above +Inf). A double sum is rounded at every step,
//     and the grouping of partial sums depends on where runs were cut, so the last bits of a double sum
//     may differ between runs with different budgets or timing; use decimal for exact, reproducible sums.
//   - decimal: text [+-]digits[.digits][(e|E)[+-]digits], exact (math/big). sum keeps the larger scale of
//     its operands (0.1 + 0.20 = 0.30); min/max compare numerically and, on numeric ties such as 1.0 vs
//     1.00, pick by text so that the result does not depend on fold order; the winner's text is kept.
//   - string: bytes compared unsigned; min, max, first, last.
//   - count (any type name): the mapping emits, for each input row, a count cell whose value is the 8-byte
//     long 1; count then folds by long sum.
//
// first keeps the value of the cell with the smallest seq, last the one with the largest (Options sets
// SorterOptions.FoldSeqLast for last so that the merge orders partial groups by their last seq).
//
// Combine cannot return an error. Malformed values (wrong length, bad decimal text) and long overflow
// record the first error, naming the key, and keep the earlier operand unchanged; Err returns it and
// Options wires it as SorterOptions.CombineErr, so Add, Finish or Iterator.Err fail with it. A long sum
// is checked at every partial sum: a total in range whose partial sums leave the range is reported too.
type Aggregator struct {
	op, typ string
	fold    func(dst, a, b []byte) ([]byte, error) // appends the folded value of a and b to dst

	mu  sync.Mutex
	err error
}

// NewAggregator returns an aggregator for op (sum|count|min|max|first|last) over values of typ
// (long|double|decimal|string; ignored by count, first and last).
func NewAggregator(op, typ string) (*Aggregator, error) {
	op, typ = strings.ToLower(op), strings.ToLower(typ)
	g := &Aggregator{op: op, typ: typ}
	switch op {
	case "first", "last":
		return g, nil
	case "count":
		g.fold = sumLong
		return g, nil
	case "sum", "min", "max":
	default:
		return nil, fmt.Errorf("sorter: unknown aggregate %q (want sum, count, min, max, first or last)", op)
	}
	switch typ {
	case "long":
		g.fold = map[string]func(dst, a, b []byte) ([]byte, error){"sum": sumLong, "min": minLong, "max": maxLong}[op]
	case "double":
		g.fold = map[string]func(dst, a, b []byte) ([]byte, error){"sum": sumDouble, "min": minDouble, "max": maxDouble}[op]
	case "decimal":
		g.fold = map[string]func(dst, a, b []byte) ([]byte, error){"sum": sumDecimal, "min": minDecimal, "max": maxDecimal}[op]
	case "string":
		if op == "sum" {
			return nil, fmt.Errorf("sorter: aggregate sum is not defined for string values")
		}
		g.fold = map[string]func(dst, a, b []byte) ([]byte, error){"min": minString, "max": maxString}[op]
	default:
		return nil, fmt.Errorf("sorter: unknown aggregate value type %q (want long, double, decimal or string)", typ)
	}
	return g, nil
}

// Options returns SorterOptions that fold with g and surface its errors.
func (g *Aggregator) Options() SorterOptions {
	return SorterOptions{Combine: g.Combine, CombineErr: g.Err, FoldSeqLast: g.op == "last"}
}

// Err returns the first error met while folding, or nil.
func (g *Aggregator) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Combine folds the values of two cells with equal keys (a earlier) into dst (a CombineFunc). It is
// safe for concurrent use.
func (g *Aggregator) Combine(dst []byte, h *cellrec.Header, qualifier, a, b []byte) []byte {
	switch g.op {
	case "first":
		return append(dst, a...)
	case "last":
		return append(dst, b...)
	}
	out, err := g.fold(dst, a, b)
	if err != nil {
		g.mu.Lock()
		if g.err == nil {
			g.err = fmt.Errorf("aggregate %s(%s) at key %s: %w", g.op, g.typ, kv.Key(cellrec.AppendKey(nil, h, qualifier)), err)
		}
		g.mu.Unlock()
		return append(dst, a...)
	}
	return out
}

func longs(a, b []byte) (int64, int64, error) {
	if len(a) != 8 || len(b) != 8 {
		return 0, 0, fmt.Errorf("long values must be 8 bytes, got %d and %d", len(a), len(b))
	}
	return int64(binary.BigEndian.Uint64(a)), int64(binary.BigEndian.Uint64(b)), nil
}

func sumLong(dst, a, b []byte) ([]byte, error) {
	x, y, err := longs(a, b)
	if err != nil {
		return nil, err
	}
	s := x + y
	if (x > 0 && y > 0 && s < 0) || (x < 0 && y < 0 && s >= 0) {
		return nil, fmt.Errorf("long sum overflows: %d + %d", x, y)
	}
	return binary.BigEndian.AppendUint64(dst, uint64(s)), nil
}

func minLong(dst, a, b []byte) ([]byte, error) {
	x, y, err := longs(a, b)
	if err != nil {
		return nil, err
	}
	return binary.BigEndian.AppendUint64(dst, uint64(min(x, y))), nil
}

func maxLong(dst, a, b []byte) ([]byte, error) {
	x, y, err := longs(a, b)
	if err != nil {
		return nil, err
	}
	return binary.BigEndian.AppendUint64(dst, uint64(max(x, y))), nil
}

func doubles(a, b []byte) (float64, float64, error) {
	if len(a) != 8 || len(b) != 8 {
		return 0, 0, fmt.Errorf("double values must be 8 bytes, got %d and %d", len(a), len(b))
	}
	return math.Float64frombits(binary.BigEndian.Uint64(a)), math.Float64frombits(binary.BigEndian.Uint64(b)), nil
}

// compareDouble is Java's Double.compare: numeric order, -0.0 < 0.0, NaN (canonical) above +Inf.
func compareDouble(x, y float64) int {
	if x < y {
		return -1
	}
	if x > y {
		return 1
	}
	bits := func(f float64) int64 {
		if f != f {
			return 0x7ff8000000000000
		}
		return int64(math.Float64bits(f))
	}
	xb, yb := bits(x), bits(y)
	switch {
	case xb < yb:
		return -1
	case xb > yb:
		return 1
	}
	return 0
}

func sumDouble(dst, a, b []byte) ([]byte, error) {
	x, y, err := doubles(a, b)
	if err != nil {
		return nil, err
	}
	return binary.BigEndian.AppendUint64(dst, math.Float64bits(x+y)), nil
}

func minDouble(dst, a, b []byte) ([]byte, error) {
	x, y, err := doubles(a, b)
	if err != nil {
		return nil, err
	}
	if compareDouble(y, x) < 0 {
		return append(dst, b...), nil
	}
	return append(dst, a...), nil
}

func maxDouble(dst, a, b []byte) ([]byte, error) {
	x, y, err := doubles(a, b)
	if err != nil {
		return nil, err
	}
	if compareDouble(y, x) > 0 {
		return append(dst, b...), nil
	}
	return append(dst, a...), nil
}

func minString(dst, a, b []byte) ([]byte, error) {
	if bytes.Compare(b, a) < 0 {
		return append(dst, b...), nil
	}
	return append(dst, a...), nil
}

func maxString(dst, a, b []byte) ([]byte, error) {
	if bytes.Compare(b, a) > 0 {
		return append(dst, b...), nil
	}
	return append(dst, a...), nil
}

// decimal is unscaled × 10^-scale.
type decimal struct {
	unscaled big.Int
	scale    int
}

// maxDecimalScale bounds scales (and exponents) so that hostile input cannot request huge powers of ten.
const maxDecimalScale = 1000

func parseDecimal(s []byte) (*decimal, error) {
	t := s
	neg := false
	if len(t) > 0 && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	var digits []byte
	scale, nd, seenDot := 0, 0, false
	i := 0
	for ; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			nd++
			if seenDot {
				scale++
			}
		case c == '.' && !seenDot:
			seenDot = true
		default:
			goto exp
		}
	}
exp:
	if nd == 0 {
		return nil, fmt.Errorf("bad decimal %q", s)
	}
	if i < len(t) {
		if t[i] != 'e' && t[i] != 'E' {
			return nil, fmt.Errorf("bad decimal %q", s)
		}
		e := t[i+1:]
		eneg := false
		if len(e) > 0 && (e[0] == '+' || e[0] == '-') {
			eneg = e[0] == '-'
			e = e[1:]
		}
		if len(e) == 0 || len(e) > 4 {
			return nil, fmt.Errorf("bad decimal exponent in %q", s)
		}
		ev := 0
		for _, c := range e {
			if c < '0' || c > '9' {
				return nil, fmt.Errorf("bad decimal exponent in %q", s)
			}
			ev = ev*10 + int(c-'0')
		}
		if eneg {
			scale += ev
		} else {
			scale -= ev
		}
	}
	if scale > maxDecimalScale || scale < -maxDecimalScale {
		return nil, fmt.Errorf("decimal %q: scale out of range", s)
	}
	d := &decimal{}
	d.unscaled.SetString(string(digits), 10)
	if scale < 0 {
		d.unscaled.Mul(&d.unscaled, pow10(-scale))
		scale = 0
	}
	d.scale = scale
	if neg {
		d.unscaled.Neg(&d.unscaled)
	}
	return d, nil
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// rescale returns d's unscaled value at a larger or equal scale.
func (d *decimal) rescale(scale int) *big.Int {
	if scale == d.scale {
		return &d.unscaled
	}
	return new(big.Int).Mul(&d.unscaled, pow10(scale-d.scale))
}

func (d *decimal) cmp(e *decimal) int {
	s := max(d.scale, e.scale)
	return d.rescale(s).Cmp(e.rescale(s))
}

// appendDecimal formats unscaled × 10^-scale as plain text with exactly scale fraction digits.
func appendDecimal(dst []byte, unscaled *big.Int, scale int) []byte {
	neg := unscaled.Sign() < 0
	digits := new(big.Int).Abs(unscaled).Text(10)
	if scale > 0 && len(digits) <= scale {
		digits = strings.Repeat("0", scale-len(digits)+1) + digits
	}
	if neg {
		dst = append(dst, '-')
	}
	if scale == 0 {
		return append(dst, digits...)
	}
	dst = append(dst, digits[:len(digits)-scale]...)
	dst = append(dst, '.')
	return append(dst, digits[len(digits)-scale:]...)
}

func decimals(a, b []byte) (*decimal, *decimal, error) {
	x, err := parseDecimal(a)
	if err != nil {
		return nil, nil, err
	}
	y, err := parseDecimal(b)
	if err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

func sumDecimal(dst, a, b []byte) ([]byte, error) {
	x, y, err := decimals(a, b)
	if err != nil {
		return nil, err
	}
	s := max(x.scale, y.scale)
	sum := new(big.Int).Add(x.rescale(s), y.rescale(s))
	return appendDecimal(dst, sum, s), nil
}

func minDecimal(dst, a, b []byte) ([]byte, error) {
	x, y, err := decimals(a, b)
	if err != nil {
		return nil, err
	}
	c := y.cmp(x)
	if c < 0 || (c == 0 && bytes.Compare(b, a) < 0) {
		return append(dst, b...), nil
	}
	return append(dst, a...), nil
}

func maxDecimal(dst, a, b []byte) ([]byte, error) {
	x, y, err := decimals(a, b)
	if err != nil {
		return nil, err
	}
	c := y.cmp(x)
	if c > 0 || (c == 0 && bytes.Compare(b, a) > 0) {
		return append(dst, b...), nil
	}
	return append(dst, a...), nil
}
