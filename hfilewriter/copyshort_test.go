package hfilewriter

import (
	"bytes"
	"testing"
)

// TestCopyShortAndMid: copyShort (0 to 40 bytes) and copyMid (4 to 16) copy src into the front of dst as
// copy does and leave the bytes after it as they were.
func TestCopyShortAndMid(t *testing.T) {
	src := make([]byte, 40)
	for i := range src {
		src[i] = byte(i + 1)
	}
	for n := 0; n <= 40; n++ {
		for name, f := range map[string]func(dst, src []byte){"copyShort": copyShort, "copyMid": copyMid} {
			if name == "copyMid" && (n < 4 || n > 16) {
				continue
			}
			dst := bytes.Repeat([]byte{0xee}, 48)
			want := bytes.Clone(dst)
			copy(want, src[:n])
			f(dst, src[:n])
			if !bytes.Equal(dst, want) {
				t.Fatalf("%s of %d bytes: %x, want %x", name, n, dst, want)
			}
		}
	}
}
