package hfilewriter

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkBloomSet sets the bits of a batch of keys in a default-sized chunk (128 KiB, 7 hashes),
// as writeBloomChunk.setPending does: the per-key cost of a ROW bloom once the key is hashed.
func BenchmarkBloomSet(b *testing.B) {
	p := BloomParams(128<<10, 0.01, 7)
	bits := make([]byte, p.ByteSize)
	r := rand.New(rand.NewPCG(1, 2))
	hh := make([]uint64, bloomPendingKeys)
	for i := range hh {
		hh[i] = r.Uint64()
	}
	b.SetBytes(int64(len(hh)))
	b.ResetTimer()
	for range b.N {
		for _, h := range hh {
			bloomSet(bits, int32(h>>32), int32(uint32(h)), p.HashCount)
		}
	}
}
