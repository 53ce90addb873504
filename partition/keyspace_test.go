package partition

import (
	"fmt"
	"strings"
	"testing"
)

func TestUniform(t *testing.T) {
	for _, c := range []struct {
		n    int
		ks   string
		want []string
	}{
		{4, "hex", []string{"4", "8", "c"}},
		{4, "HEX", []string{"4", "8", "C"}},
		{3, "hex", []string{"55555555", "aaaaaaaa"}},
		{3, "hex:2", []string{"55", "aa"}},
		{16, "hex:1", []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "a", "b", "c", "d", "e", "f"}},
		{4, "decimal", []string{"25", "5", "75"}},
		{3, "decimal:3", []string{"333", "666"}},
		{4, "bytes", []string{"\x40", "\x80", "\xc0"}},
		{3, "bytes:2", []string{"\x55\x55", "\xaa\xaa"}},
		{1, "hex", []string{}},
	} {
		got, err := Uniform(c.n, c.ks)
		if err != nil {
			t.Errorf("Uniform(%d, %q): %v", c.n, c.ks, err)
			continue
		}
		if fmt.Sprintf("%q", []string(got.Strings())) != fmt.Sprintf("%q", toBinary(c.want)) {
			t.Errorf("Uniform(%d, %q) = %q, want %q", c.n, c.ks, got.Strings(), c.want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("Uniform(%d, %q): invalid: %v", c.n, c.ks, err)
		}
	}
}

func toBinary(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = splitFileString([]byte(s))
	}
	return out
}

// TestUniformHexBalanced routes every 2-hex-digit key through Uniform(n, "hex") splits and checks that
// regions differ by at most one key prefix and none is empty — the property byte-uniform splits lack.
func TestUniformHexBalanced(t *testing.T) {
	for _, n := range []int{2, 3, 5, 7, 10, 16, 100, 256} {
		s, err := Uniform(n, "hex")
		if err != nil {
			t.Fatal(err)
		}
		if s.Len() != n {
			t.Fatalf("n=%d: %d regions", n, s.Len())
		}
		counts := make([]int, n)
		for v := 0; v < 256; v++ {
			counts[s.Region([]byte(fmt.Sprintf("%02x-rest", v)))]++
		}
		lo, hi := 1<<30, 0
		for _, c := range counts {
			lo, hi = min(lo, c), max(hi, c)
		}
		if lo == 0 || hi-lo > 1 {
			t.Errorf("n=%d: region sizes %v not balanced", n, counts)
		}
	}
}

func TestUniformErrors(t *testing.T) {
	for _, c := range []struct {
		n    int
		ks   string
		want string
	}{
		{0, "hex", "at least 1"},
		{17, "hex:1", "do not fit"},
		{4, "base64", "unknown key space"},
		{4, "hex:0", "width"},
		{4, "hex:x", "width"},
		{4, "hex:65", "width"},
	} {
		if _, err := Uniform(c.n, c.ks); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Uniform(%d, %q) = %v, want %q", c.n, c.ks, err, c.want)
		}
	}
}

func TestBySalt(t *testing.T) {
	s := BySalt(4)
	if fmt.Sprintf("%q", s) != fmt.Sprintf("%q", keys("\x01", "\x02", "\x03")) {
		t.Fatalf("BySalt(4) = %q", s)
	}
	for b := 0; b < 4; b++ {
		if r := s.Region([]byte{byte(b), 'k', 0xff}); r != b {
			t.Errorf("salt %d → region %d", b, r)
		}
	}
	if len(BySalt(1)) != 0 || len(BySalt(256)) != 255 || BySalt(257) != nil || BySalt(0) != nil {
		t.Error("BySalt edge cases")
	}
	if _, err := SaltSplits(300); err == nil {
		t.Error("SaltSplits(300): no error")
	}
}

// TestUniformShortKeysPadded: shortened split points route keys shorter than the width as if padded
// with the lowest digit, and keys of full width exactly as the unshortened boundaries would.
func TestUniformShortKeysPadded(t *testing.T) {
	s, err := Uniform(4, "hex") // "4", "8", "c" for boundaries 40000000, 80000000, c0000000
	if err != nil {
		t.Fatal(err)
	}
	full := keys("40000000", "80000000", "c0000000")
	pad := func(k string) string { return k + strings.Repeat("0", max(0, 8-len(k))) }
	for _, k := range []string{"4", "40", "3", "3fffffff", "40000000", "4000000", "7", "8", "80000001", "c", "bf", "fffffff", "ffffffff"} {
		if got, want := s.Region([]byte(k)), full.Region([]byte(pad(k))); got != want {
			t.Errorf("Region(%q) = %d, padded key %q is in region %d", k, got, pad(k), want)
		}
	}
}
