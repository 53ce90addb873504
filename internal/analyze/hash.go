package analyze

import (
	"encoding/binary"
	"math/bits"
)

// hash64 is a 64-bit fingerprint of b: eight bytes at a time, each word folded in by a 128-bit
// multiplication (as wyhash does), the length in the seed, a splitmix64 finalizer. It is fixed (no
// random seed), so reports are reproducible; it is not meant to resist chosen inputs, and nothing
// relies on it being collision-free: equal fingerprints are only suspicions, confirmed on the keys.
func hash64(b []byte) uint64 {
	const k0, k1 = 0x9E3779B97F4A7C15, 0xD6E8FEB86659FD93
	h := uint64(len(b)) * k0
	for len(b) >= 8 {
		hi, lo := bits.Mul64(h^binary.LittleEndian.Uint64(b), k1)
		h = hi ^ lo
		b = b[8:]
	}
	if len(b) > 0 {
		var w uint64
		for i, c := range b {
			w |= uint64(c) << (8 * i)
		}
		hi, lo := bits.Mul64(h^w^k0, k1)
		h = hi ^ lo
	}
	h ^= h >> 30
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 27
	h *= 0x94D049BB133111EB
	h ^= h >> 31
	return h
}
