package jobs

import (
	"fmt"
	"math/big"
	"strings"
	"time"
)

// Watermark is the high-water mark of one input column over a run: the
// largest value seen, compared by Type. Value is canonical text: numbers as
// given (compared exactly as decimals), times as RFC 3339 UTC with
// nanoseconds, strings as bytes.
type Watermark struct {
	Column string `json:"column"`
	Type   string `json:"type"` // string | number | time
	Value  string `json:"value"`
}

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// canonicalWatermark parses v as typ and returns its canonical text.
func canonicalWatermark(typ, v string) (string, error) {
	v = strings.TrimSpace(v)
	switch typ {
	case "", "string":
		return v, nil
	case "number":
		if _, ok := new(big.Rat).SetString(v); !ok {
			return "", fmt.Errorf("watermark %q is not a number", v)
		}
		return v, nil
	case "time":
		for _, l := range timeLayouts {
			if t, err := time.Parse(l, v); err == nil {
				return t.UTC().Format(time.RFC3339Nano), nil
			}
		}
		return "", fmt.Errorf("watermark %q is not a time (RFC 3339, 2006-01-02 15:04:05 or 2006-01-02)", v)
	default:
		return "", fmt.Errorf("watermark type %q: want string, number or time", typ)
	}
}

// CompareWatermarks compares two values of type typ (string, number, time):
// -1, 0 or +1.
func CompareWatermarks(typ, a, b string) (int, error) {
	ca, err := canonicalWatermark(typ, a)
	if err != nil {
		return 0, err
	}
	cb, err := canonicalWatermark(typ, b)
	if err != nil {
		return 0, err
	}
	switch typ {
	case "number":
		ra, _ := new(big.Rat).SetString(ca)
		rb, _ := new(big.Rat).SetString(cb)
		return ra.Cmp(rb), nil
	case "time":
		ta, _ := time.Parse(time.RFC3339Nano, ca)
		tb, _ := time.Parse(time.RFC3339Nano, cb)
		return ta.Compare(tb), nil
	default:
		return strings.Compare(ca, cb), nil
	}
}

// Observe raises the watermark to v if v is larger (or the watermark is
// empty). Values that do not parse as Type are errors.
func (w *Watermark) Observe(v string) error {
	c, err := canonicalWatermark(w.Type, v)
	if err != nil {
		return fmt.Errorf("column %s: %w", w.Column, err)
	}
	if w.Value == "" {
		w.Value = c
		return nil
	}
	cmp, err := CompareWatermarks(w.Type, c, w.Value)
	if err != nil {
		return fmt.Errorf("column %s: %w", w.Column, err)
	}
	if cmp > 0 {
		w.Value = c
	}
	return nil
}

// After reports whether v is strictly above the watermark (true when the
// watermark is empty): the rows an incremental run should load.
func (w *Watermark) After(v string) (bool, error) {
	if w == nil || w.Value == "" {
		return true, nil
	}
	cmp, err := CompareWatermarks(w.Type, v, w.Value)
	if err != nil {
		return false, fmt.Errorf("column %s: %w", w.Column, err)
	}
	return cmp > 0, nil
}
