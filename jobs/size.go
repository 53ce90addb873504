package jobs

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Size is a byte count that job files and flags may write as a plain integer
// ("1048576") or with a unit ("256MiB", "256M", "1.5GiB", "64k"). Every unit
// is binary: K = KB = KiB = 1024, M = MB = MiB = 1024², G, T and P likewise
// (as in HBase settings and JVM flags), so "256MB" and "256MiB" mean the same.
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	// Longest suffixes first so "KiB" is not read as "B".
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"pib", 1 << 50},
	{"kb", 1 << 10}, {"mb", 1 << 20}, {"gb", 1 << 30}, {"tb", 1 << 40}, {"pb", 1 << 50},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"p", 1 << 50},
	{"b", 1},
}

// ParseSize parses a byte count such as "256MiB", "1G", "64k", "1.5GiB" or
// "1048576". Negative sizes, fractions of a byte and overflow are errors.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, fmt.Errorf("size %q: empty", s)
	}
	lower := strings.ToLower(t)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(lower, u.suffix) {
			mult = u.mult
			lower = strings.TrimSpace(lower[:len(lower)-len(u.suffix)])
			break
		}
	}
	if lower == "" {
		return 0, fmt.Errorf("size %q: missing number", s)
	}
	if n, err := strconv.ParseInt(lower, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("size %q: negative", s)
		}
		if n > math.MaxInt64/mult {
			return 0, fmt.Errorf("size %q: too large", s)
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(lower, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("size %q: not a number with an optional unit (K, M, G, T, KiB, MiB, ...)", s)
	}
	if f < 0 {
		return 0, fmt.Errorf("size %q: negative", s)
	}
	v := f * float64(mult)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("size %q: not a whole number of bytes", s)
	}
	return int64(v), nil
}

// FormatSize renders n with the largest binary unit that divides it exactly
// ("256MiB", "1GiB", "1000"), so FormatSize and ParseSize round-trip.
func FormatSize(n int64) string {
	units := []struct {
		name string
		mult int64
	}{{"PiB", 1 << 50}, {"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}
	if n > 0 {
		for _, u := range units {
			if n%u.mult == 0 {
				return strconv.FormatInt(n/u.mult, 10) + u.name
			}
		}
	}
	return strconv.FormatInt(n, 10)
}

// String implements fmt.Stringer.
func (s Size) String() string { return FormatSize(int64(s)) }

// UnmarshalYAML accepts an integer or a size string.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: expected a size such as 256MiB", n.Line)
	}
	v, err := ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*s = Size(v)
	return nil
}

// MarshalYAML writes the size in its shortest exact form.
func (s Size) MarshalYAML() (any, error) { return s.String(), nil }

// UnmarshalText accepts a size string (used for flags and JSON).
func (s *Size) UnmarshalText(b []byte) error {
	v, err := ParseSize(string(b))
	if err != nil {
		return err
	}
	*s = Size(v)
	return nil
}

// MarshalText writes the size in its shortest exact form.
func (s Size) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// HumanSize renders n approximately for people ("58.2 MiB"); use FormatSize where the text must parse back.
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + string("KMGTP"[exp]) + "iB"
}

// Count renders n with its noun in the right number: Count(1, "file") = "1 file", Count(2, "pass") =
// "2 passes".
func Count(n int64, noun string) string {
	s := strconv.FormatInt(n, 10) + " " + noun
	switch {
	case n == 1:
		return s
	case strings.HasSuffix(noun, "s"):
		return s + "es"
	}
	return s + "s"
}
