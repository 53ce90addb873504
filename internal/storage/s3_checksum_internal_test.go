package storage

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// TestCRC32Combine: the CRC of parts combined equals the CRC of their bytes, for part sizes around
// the powers of two the combination walks and for empty parts.
func TestCRC32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 3<<20+77)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, cuts := range [][]int{
		{0},
		{1},
		{5, 5},
		{len(data) / 2},
		{1 << 20, 1 << 20, 1<<20 + 1},
		{4095, 4096, 4097, 65536, 0, 17},
	} {
		var parts []Part
		off := 0
		for i, n := range append(cuts, -1) {
			if n < 0 { // the rest
				n = len(data) - off
			}
			b := data[off : off+n]
			parts = append(parts, Part{Number: int32(i + 1), Size: int64(n), CRC32: crcBase64(crc32.ChecksumIEEE(b))})
			off += n
		}
		got, ok := objectCRC(parts)
		if want := crcBase64(crc32.ChecksumIEEE(data)); !ok || got != want {
			t.Fatalf("parts %v: combined CRC %s (ok %v), want %s", cuts, got, ok, want)
		}
	}
	if _, ok := objectCRC([]Part{{Number: 1, Size: 5}}); ok {
		t.Fatal("a part without a CRC was combined")
	}
	if c, ok := crcFromBase64(crcBase64(0xdeadbeef)); !ok || c != 0xdeadbeef {
		t.Fatalf("base64 round trip: %x %v", c, ok)
	}
}
