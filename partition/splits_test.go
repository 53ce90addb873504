package partition

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

func keys(ss ...string) Splits {
	out := make(Splits, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func TestRegionAndBounds(t *testing.T) {
	s := keys("b", "d", "f")
	cases := []struct {
		row  string
		want int
	}{{"", 0}, {"a", 0}, {"azzz", 0}, {"b", 1}, {"b\x00", 1}, {"c", 1}, {"d", 2}, {"e", 2}, {"f", 3}, {"zz", 3}}
	for _, c := range cases {
		if got := s.Region([]byte(c.row)); got != c.want {
			t.Errorf("Region(%q) = %d, want %d", c.row, got, c.want)
		}
		if !s.Contains(c.want, []byte(c.row)) {
			t.Errorf("Contains(%d, %q) = false", c.want, c.row)
		}
		if err := s.CheckRegion(c.want, []byte(c.row)); err != nil {
			t.Errorf("CheckRegion(%d, %q): %v", c.want, c.row, err)
		}
		other := (c.want + 1) % s.Len()
		if s.Contains(other, []byte(c.row)) {
			t.Errorf("Contains(%d, %q) = true", other, c.row)
		}
		if err := s.CheckRegion(other, []byte(c.row)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("belongs to region %d", c.want)) {
			t.Errorf("CheckRegion(%d, %q) = %v, want error naming region %d", other, c.row, err, c.want)
		}
	}
	if s.Len() != 4 {
		t.Fatalf("Len = %d", s.Len())
	}
	st, en := s.Bounds(0)
	if st != nil || string(en) != "b" {
		t.Errorf("Bounds(0) = %q, %q", st, en)
	}
	st, en = s.Bounds(2)
	if string(st) != "d" || string(en) != "f" {
		t.Errorf("Bounds(2) = %q, %q", st, en)
	}
	st, en = s.Bounds(3)
	if string(st) != "f" || en != nil {
		t.Errorf("Bounds(3) = %q, %q", st, en)
	}
	if err := s.CheckRegion(7, []byte("a")); err == nil {
		t.Error("CheckRegion out of range: no error")
	}
	var none Splits
	if none.Region([]byte("x")) != 0 || none.Len() != 1 || !none.Contains(0, []byte("x")) {
		t.Error("nil Splits is not one region")
	}
}

// TestRegionMatchesLinearScan cross-checks the binary search against the definition.
func TestRegionMatchesLinearScan(t *testing.T) {
	s, err := Uniform(37, "hex:2")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 65536; i += 7 {
		row := []byte{byte(i >> 8), byte(i)}
		want := 0
		for want < len(s) && bytes.Compare(s[want], row) <= 0 {
			want++
		}
		if got := s.Region(row); got != want {
			t.Fatalf("Region(%x) = %d, want %d", row, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	if err := keys("a", "b").Validate(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    Splits
		want string
	}{
		{keys("a", ""), "split point 2 is empty"},
		{keys("b", "a"), "out of order"},
		{keys("a", "a"), "are both"},
	} {
		if err := c.s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%q) = %v, want %q", c.s, err, c.want)
		}
	}
}

func TestWriteTextRoundTrip(t *testing.T) {
	s := keys("\x00", " lead", "#hash", "a\\b", "trail ", "x'y\"z", "\xff\xfe")
	var buf bytes.Buffer
	if err := s.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	want := "\\x00\n\\x20lead\n\\x23hash\na\\x5Cb\ntrail\\x20\nx'y\"z\n\\xFF\\xFE\n"
	if buf.String() != want {
		t.Fatalf("WriteText = %q, want %q", buf.String(), want)
	}
	got, err := ParseSplits(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", s) {
		t.Fatalf("round trip = %q, want %q", got, s)
	}
}

func BenchmarkRegion1000(b *testing.B) {
	s, err := Uniform(1001, "hex")
	if err != nil {
		b.Fatal(err)
	}
	rows := make([][]byte, 4096)
	for i := range rows {
		rows[i] = []byte(fmt.Sprintf("%08x-order-%d", uint32(i)*2654435761, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	sum := 0
	for i := 0; i < b.N; i++ {
		sum += s.Region(rows[i&4095])
	}
	if sum < 0 {
		b.Fatal(sum)
	}
}
