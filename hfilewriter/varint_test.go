package hfilewriter

import (
	"encoding/hex"
	"testing"
)

func TestVLongVectors(t *testing.T) {
	cases := map[int64]string{0: "00", 127: "7f", 128: "8f80", 255: "8fff", 256: "8e0100", -1: "ff", -112: "90",
		-113: "8770", 1 << 40: "8a010000000000", 1<<63 - 1: "887fffffffffffffff"}
	for v, h := range cases {
		got := AppendVLong(nil, v)
		if hex.EncodeToString(got) != h {
			t.Errorf("vlong(%d) = %x, want %s", v, got, h)
		}
		if VLongSize(v) != len(got) {
			t.Errorf("VLongSize(%d) = %d, want %d", v, VLongSize(v), len(got))
		}
		back, n, err := ReadVLong(got)
		if err != nil || back != v || n != len(got) {
			t.Errorf("ReadVLong(%x) = %d, %d, %v", got, back, n, err)
		}
	}
}
