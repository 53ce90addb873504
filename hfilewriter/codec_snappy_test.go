package hfilewriter

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/golang/snappy"
)

// TestSnappyBlocksAreStandardSnappy: the SNAPPY compressor (s2.EncodeSnappy) must write standard
// snappy blocks in Hadoop's framing. Payloads with repeats at distances beyond 64 KiB (4-byte copy
// offsets), incompressible stretches and several Hadoop chunks are decoded chunk by chunk with
// golang/snappy, an independent decoder, and must give the payload back; each chunk must fit the
// 256 KiB buffer Hadoop's SnappyDecompressor reads it into.
func TestSnappyBlocksAreStandardSnappy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	// A random stretch, then zeros (which leave the encoder's hash table entries for the stretch
	// alone): the stretch's repeats 74 KiB later are copies with 4-byte offsets.
	far := append(noise(4<<10), make([]byte, 70<<10)...)
	payloads := map[string][]byte{
		"empty":          nil,
		"short literal":  []byte("abc"),
		"far repeats":    bytes.Repeat(far, 8), // 592 KiB: three chunks
		"incompressible": noise(300 << 10),
		"records":        bytes.Repeat([]byte("\x00\x00\x00\x1a\x00\x00\x00\x05\x00\x06user42\x01dage\x00\x00\x01\x8b\xcf\xe8\x00\x00\x0442\x00\x00"), 5000),
	}
	c, err := newWriteCompressor(CompressionSnappy)
	if err != nil {
		t.Fatal(err)
	}
	const maxInput = 256*1024 - (256*1024/6 + 32)
	for name, p := range payloads {
		got, err := c.appendCompressed(nil, p)
		if err != nil {
			t.Fatal(err)
		}
		if n := binary.BigEndian.Uint32(got); int(n) != len(p) {
			t.Fatalf("%s: outer length %d, want %d", name, n, len(p))
		}
		var out []byte
		chunks, copy4 := 0, 0
		for src := got[4:]; len(src) > 0; chunks++ {
			cl := int(binary.BigEndian.Uint32(src))
			if cl > 256*1024 {
				t.Fatalf("%s: chunk of %d compressed bytes does not fit Hadoop's 256 KiB buffer", name, cl)
			}
			copy4 += snappyTestCopy4(t, src[4:4+cl])
			d, err := snappy.Decode(nil, src[4:4+cl])
			if err != nil {
				t.Fatalf("%s: chunk %d: golang/snappy: %v", name, chunks, err)
			}
			if len(d) > maxInput {
				t.Fatalf("%s: chunk %d holds %d bytes, more than Hadoop's %d", name, chunks, len(d), maxInput)
			}
			out = append(out, d...)
			src = src[4+cl:]
		}
		if !bytes.Equal(out, p) {
			t.Fatalf("%s: decoded %d bytes, not the payload of %d", name, len(out), len(p))
		}
		if name == "far repeats" && copy4 == 0 {
			t.Fatal("far repeats: no copy with a 4-byte offset")
		}
		if want := (len(p) + maxInput - 1) / maxInput; chunks != want {
			t.Fatalf("%s: %d chunks, want %d", name, chunks, want)
		}
		if back, err := decompressBlockPayload(CompressionSnappy.Codec(), got, len(p)); err != nil || !bytes.Equal(back, p) {
			t.Fatalf("%s: reader: %v", name, err)
		}
	}
}

// snappyTestCopy4 walks a raw snappy block's elements and counts the copies with 4-byte offsets
// (tag 11).
func snappyTestCopy4(t *testing.T, b []byte) int {
	t.Helper()
	_, n := binary.Uvarint(b)
	if n <= 0 {
		t.Fatal("bad snappy preamble")
	}
	count := 0
	for b = b[n:]; len(b) > 0; {
		tag := b[0]
		switch tag & 3 {
		case 0: // literal: length-1 in the tag, or in 1-4 following bytes
			l, skip := int(tag>>2)+1, 1
			if x := int(tag >> 2); x >= 60 {
				skip += x - 59
				l = 0
				for i := skip - 1; i >= 1; i-- {
					l = l<<8 | int(b[i])
				}
				l++
			}
			b = b[min(len(b), skip+l):]
		case 1:
			b = b[min(len(b), 2):]
		case 2:
			b = b[min(len(b), 3):]
		case 3:
			count++
			b = b[min(len(b), 5):]
		}
	}
	return count
}

// Hadoop-framed codecs (SNAPPY, LZ4) compress a chunk straight into the output when it has room for
// the chunk's worst case, else into a scratch buffer that is then copied: both give the same bytes,
// after whatever dst held, for one chunk and for several (payloads past the 218,422-byte chunk input),
// compressible and not.
func TestHadoopBlockCompressInPlaceSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	for _, c := range []Compression{CompressionSnappy, CompressionLZ4} {
		for _, n := range []int{0, 1, 100, 64 << 10, 218422, 218423, 600 << 10} {
			src := make([]byte, n)
			for i := range src {
				if rng.IntN(4) == 0 {
					src[i] = byte(rng.Uint32())
				} else {
					src[i] = byte('a' + i%7)
				}
			}
			prefix := []byte("0123456789")
			var outs [2][]byte
			for i, room := range []int{0, 2*n + 1024} {
				comp, err := newWriteCompressorLevel(c, 0)
				if err != nil {
					t.Fatal(err)
				}
				dst := append(make([]byte, 0, len(prefix)+room), prefix...)
				out, err := comp.appendCompressed(dst, src)
				if err != nil {
					t.Fatalf("%s, %d bytes, room %d: %v", c, n, room, err)
				}
				if room > 0 && n > 0 && &out[0] != &dst[:1][0] {
					t.Fatalf("%s, %d bytes: the output moved although dst had room for it", c, n)
				}
				outs[i] = out
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Fatalf("%s, %d bytes: compressed in place differs from compressed and copied", c, n)
			}
			if !bytes.HasPrefix(outs[0], prefix) {
				t.Fatalf("%s, %d bytes: dst's bytes were not kept", c, n)
			}
			got, err := decompressBlockPayloadInto(c.Codec(), outs[0][len(prefix):], n, new([]byte))
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%s, %d bytes: does not decompress to the payload: %v", c, n, err)
			}
		}
	}
}
