package partition

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/hfload/hfload/internal/kv"
)

// Splits are a table's split points: sorted, unique, non-empty keys. n split points make n+1 regions;
// region i holds the row keys in [s[i-1], s[i]) (region 0 starts at the table start, region n ends at
// the table end). A nil Splits is one region holding every key.
type Splits [][]byte

// Len returns the number of regions (len(s)+1), not the number of split points.
func (s Splits) Len() int { return len(s) + 1 }

// Region returns the region holding row: the number of split points <= row. It does not allocate.
func (s Splits) Region(row []byte) int {
	lo, hi := 0, len(s)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(s[mid], row) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// Bounds returns region i's start key (inclusive) and end key (exclusive). A nil start is the table
// start and a nil end the table end (HBase's empty start/end keys). It panics if i is out of range
// [0, Len()), like a slice index.
func (s Splits) Bounds(i int) (start, end []byte) {
	if i < 0 || i > len(s) {
		panic(fmt.Sprintf("partition: region %d out of range [0, %d)", i, len(s)+1))
	}
	if i > 0 {
		start = s[i-1]
	}
	if i < len(s) {
		end = s[i]
	}
	return start, end
}

// Contains reports whether row lies in region i, i.e. start <= row < end with open ends at the
// table boundaries. It is false for an out-of-range i.
func (s Splits) Contains(i int, row []byte) bool {
	if i < 0 || i > len(s) {
		return false
	}
	if i > 0 && bytes.Compare(row, s[i-1]) < 0 {
		return false
	}
	return i == len(s) || bytes.Compare(row, s[i]) < 0
}

// CheckRegion returns an error naming the key and the region's bounds when row does not lie in region i.
// Writers use it to validate that a file built for region i only holds that region's keys.
func (s Splits) CheckRegion(i int, row []byte) error {
	if i < 0 || i > len(s) {
		return fmt.Errorf("region %d out of range [0, %d)", i, len(s)+1)
	}
	if s.Contains(i, row) {
		return nil
	}
	start, end := s.Bounds(i)
	return fmt.Errorf("row %q is not in region %d [%q, %q): it belongs to region %d",
		kv.ToStringBinary(row), i, kv.ToStringBinary(start), kv.ToStringBinary(end),
		s.Region(row))
}

// Validate checks that the split points are non-empty, sorted and unique.
func (s Splits) Validate() error {
	for i, k := range s {
		if len(k) == 0 {
			return fmt.Errorf("split point %d is empty (the empty key is the table start, not a split point)", i+1)
		}
		if len(k) > kv.MaxRowLength {
			return fmt.Errorf("split point %d is %d bytes, longer than HBase's row limit %d", i+1, len(k), kv.MaxRowLength)
		}
		if i > 0 {
			switch c := bytes.Compare(s[i-1], k); {
			case c == 0:
				return fmt.Errorf("split points %d and %d are both %q", i, i+1, kv.ToStringBinary(k))
			case c > 0:
				return fmt.Errorf("split points out of order: %d %q sorts after %d %q", i, kv.ToStringBinary(s[i-1]),
					i+1, kv.ToStringBinary(k))
			}
		}
	}
	return nil
}

// Strings returns the split points in Bytes.toStringBinary form.
func (s Splits) Strings() []string {
	out := make([]string, len(s))
	for i, k := range s {
		out[i] = splitFileString(k)
	}
	return out
}

// WriteText writes one split point per line in Bytes.toStringBinary form: the format ParseSplits reads
// and the HBase shell's SPLITS_FILE accepts. Leading and trailing spaces are written as \x20 because
// the shell strips lines.
func (s Splits) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, k := range s {
		bw.WriteString(splitFileString(k))
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing split points: %w", err)
	}
	return nil
}

// splitFileString is ToStringBinary with the characters that ParseSplits would read as syntax escaped
// as \xNN: leading spaces and '#', a leading quote or '[', trailing spaces, a trailing '|', the 'S' of
// "SPLITS" and a leading shell prompt, so that the text survives trimming and re-parsing unchanged.
func splitFileString(k []byte) string {
	t := kv.ToStringBinary(k)
	esc := make([]bool, len(t))
	any := false
	mark := func(i int) { esc[i], any = true, true }
	for i := 0; i < len(t) && (t[i] == ' ' || t[i] == '#'); i++ {
		mark(i)
	}
	if len(t) > 0 && strings.IndexByte(`'"[`, t[0]) >= 0 {
		mark(0)
	}
	for i := len(t) - 1; i >= 0 && t[i] == ' '; i-- {
		mark(i)
	}
	if len(t) > 0 && t[len(t)-1] == '|' {
		mark(len(t) - 1)
	}
	for i := 0; ; {
		j := strings.Index(t[i:], "SPLITS")
		if j < 0 {
			break
		}
		mark(i + j)
		i += j + 1
	}
	if isShellPrompt(t) {
		mark(0)
	}
	if !any {
		return t
	}
	var sb strings.Builder
	for i := 0; i < len(t); i++ {
		if esc[i] {
			fmt.Fprintf(&sb, `\x%02X`, t[i])
		} else {
			sb.WriteByte(t[i])
		}
	}
	return sb.String()
}
