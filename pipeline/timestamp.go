package pipeline

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// timeFormat says how a column's text or integer becomes a point in time (epoch milliseconds, HBase's
// cell timestamp unit).
type timeFormat struct {
	unitNS int64 // nanoseconds per epoch unit (1e9 s, 1e6 ms, 1e3 us, 1 ns); 0 = layout
	layout string
	loc    *time.Location
}

// parseTimeFormat reads a column's `format` ("" = ms, s, ms, us, ns, or a Go time layout such as
// "2006-01-02 15:04:05") and `timezone` ("" = UTC, or an IANA name such as Europe/Berlin, or Local is
// refused because it would make output depend on the machine).
func parseTimeFormat(format, tz string) (timeFormat, error) {
	tf := timeFormat{loc: time.UTC}
	switch strings.ToLower(format) {
	case "", "ms", "millis", "epoch_ms":
		tf.unitNS = 1e6
	case "s", "seconds", "epoch", "epoch_s":
		tf.unitNS = 1e9
	case "us", "micros", "epoch_us":
		tf.unitNS = 1e3
	case "ns", "nanos", "epoch_ns":
		tf.unitNS = 1
	default:
		if !strings.ContainsAny(format, "0123456789") {
			return tf, fmt.Errorf("time format %q is neither an epoch unit (s, ms, us, ns) nor a Go layout like 2006-01-02 15:04:05", format)
		}
		tf.layout = format
	}
	if tz != "" && tz != "UTC" {
		if strings.EqualFold(tz, "local") {
			return tf, fmt.Errorf("timezone Local is not allowed (output would depend on the machine); name the zone, e.g. Europe/Berlin")
		}
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return tf, fmt.Errorf("timezone %q: %w", tz, err)
		}
		tf.loc = loc
	}
	return tf, nil
}

// epochToMillis converts n units of unitNS nanoseconds to milliseconds (floor), refusing overflow.
func epochToMillis(n, unitNS int64) (int64, error) {
	switch {
	case unitNS == 1e6:
		return n, nil
	case unitNS > 1e6:
		mul := unitNS / 1e6
		if n > math.MaxInt64/mul || n < math.MinInt64/mul {
			return 0, fmt.Errorf("timestamp %d overflows epoch milliseconds", n)
		}
		return n * mul, nil
	}
	return floorDiv(n, 1e6/unitNS), nil
}

// toMillis reads v as a point in time in epoch milliseconds.
func (e *encoder) toMillis(v *value, tf *timeFormat) (int64, error) {
	switch v.kind {
	case vkNull:
		return 0, errNull
	case vkTimeUS:
		return floorDiv(v.i, 1000), nil
	case vkDate:
		return v.i * 86400000, nil
	case vkInt:
		if tf.unitNS == 0 {
			return 0, fmt.Errorf("integer %d given for a timestamp with layout %q", v.i, tf.layout)
		}
		return epochToMillis(v.i, tf.unitNS)
	}
	b := e.textOf(v)
	if tf.unitNS != 0 {
		n, err := parseInt(b)
		if err != nil {
			return 0, fmt.Errorf("bad epoch timestamp: %v", err)
		}
		return epochToMillis(n, tf.unitNS)
	}
	t, err := time.ParseInLocation(tf.layout, unsafeString(b), tf.loc)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q does not match layout %q", b, tf.layout)
	}
	return t.UnixMilli(), nil
}

// parseInterval reads a bucket width such as 1h, 15m, 1d, 30s, 500ms, in milliseconds.
func parseInterval(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mul := int64(0)
	if strings.HasSuffix(s, "d") {
		var n int64
		if _, err := fmt.Sscanf(s, "%dd", &n); err != nil || n <= 0 {
			return 0, fmt.Errorf("bad interval %q", s)
		}
		return n * 86400000, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad interval %q (want e.g. 1h, 15m, 1d): %w", s, err)
	}
	mul = d.Milliseconds()
	if mul <= 0 || d%time.Millisecond != 0 {
		return 0, fmt.Errorf("interval %q must be a positive whole number of milliseconds", s)
	}
	return mul, nil
}
