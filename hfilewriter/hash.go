package hfilewriter

import (
	"encoding/binary"
	"unsafe"
)

// HashType is the hash function of a bloom filter (HBase Hash.*_HASH).
type HashType int32

// Hash types stored in bloom metadata.
const (
	HashJenkins HashType = 0
	HashMurmur  HashType = 1 // HBase's MurmurHash2 variant, the default
	HashMurmur3 HashType = 2
)

// Hash computes the bloom hash of data with the given seed.
func (h HashType) Hash(data []byte, seed int32) int32 {
	switch h {
	case HashJenkins:
		return JenkinsHash(data, seed)
	case HashMurmur3:
		return Murmur3Hash(data, seed)
	}
	return MurmurHash(data, seed)
}

// MurmurHash is HBase's MurmurHash (MurmurHash2 with a sign-extending tail, util/MurmurHash.java).
func MurmurHash(data []byte, seed int32) int32 {
	h := uint32(seed) ^ uint32(len(data))
	for ; len(data) >= 4; data = data[4:] {
		h = h*murmurM ^ murmurMix(binary.LittleEndian.Uint32(data))
	}
	t, tl := murmurTail(data)
	return murmurFinish(h, t, tl)
}

const murmurM uint32 = 0x5bd1e995

// murmurMix is MurmurHash's mixing of one 4-byte word k; it does not depend on the seed.
func murmurMix(k uint32) uint32 {
	k *= murmurM
	k ^= k >> 24
	return k * murmurM
}

// murmurPairWords is the longest key (in 4-byte words) murmurHashPair mixes once for both hashes.
const murmurPairWords = 16

// murmurHashPair returns MurmurHash(key, 0) and MurmurHash(key, h1), a bloom key's two hashes. The
// words' mixing and the tail's bytes do not depend on the seed, so for keys of up to murmurPairWords
// words they are taken once for both; keys of up to four words (row keys such as order ids and customer
// order keys) take a path without a loop, longer ones read two words at a time (one 8-byte load).
func murmurHashPair(key []byte) (h1, h2 int32) {
	n := len(key) >> 2
	if n > murmurPairWords {
		h1 = MurmurHash(key, 0)
		return h1, MurmurHash(key, h1)
	}
	l := uint32(len(key))
	t, tl := murmurTail(key[n<<2:])
	switch n {
	case 0:
		h1 = murmurFinish(l, t, tl)
		return h1, murmurFinish(uint32(h1)^l, t, tl)
	case 1:
		k0 := murmurMix(binary.LittleEndian.Uint32(key))
		h1 = murmurFinish(l*murmurM^k0, t, tl)
		return h1, murmurFinish((uint32(h1)^l)*murmurM^k0, t, tl)
	case 2:
		w := binary.LittleEndian.Uint64(key)
		k0, k1 := murmurMix(uint32(w)), murmurMix(uint32(w>>32))
		h1 = murmurFinish((l*murmurM^k0)*murmurM^k1, t, tl)
		return h1, murmurFinish(((uint32(h1)^l)*murmurM^k0)*murmurM^k1, t, tl)
	case 3:
		w := binary.LittleEndian.Uint64(key)
		k0, k1 := murmurMix(uint32(w)), murmurMix(uint32(w>>32))
		k2 := murmurMix(binary.LittleEndian.Uint32(key[8:]))
		h1 = murmurFinish(((l*murmurM^k0)*murmurM^k1)*murmurM^k2, t, tl)
		return h1, murmurFinish((((uint32(h1)^l)*murmurM^k0)*murmurM^k1)*murmurM^k2, t, tl)
	case 4:
		w, x := binary.LittleEndian.Uint64(key), binary.LittleEndian.Uint64(key[8:])
		k0, k1 := murmurMix(uint32(w)), murmurMix(uint32(w>>32))
		k2, k3 := murmurMix(uint32(x)), murmurMix(uint32(x>>32))
		h1 = murmurFinish((((l*murmurM^k0)*murmurM^k1)*murmurM^k2)*murmurM^k3, t, tl)
		return h1, murmurFinish(((((uint32(h1)^l)*murmurM^k0)*murmurM^k1)*murmurM^k2)*murmurM^k3, t, tl)
	}
	return murmurHashPairLong(key, n)
}

// murmurHashPairLong is murmurHashPair for keys of 5 to murmurPairWords words (n): two words at a time
// (one 8-byte load), the mixed words kept two to an entry for the second hash, an odd last word after;
// the tail taken after the words (its values live through the loops spilled the loop's).
func murmurHashPairLong(key []byte, n int) (h1, h2 int32) {
	if n > murmurPairWords || n<<2 > len(key) {
		panic("hfilewriter: murmurHashPairLong's key shorter than its words")
	}
	var mixed [murmurPairWords / 2]uint64
	p := unsafe.Pointer(unsafe.SliceData(key))
	l := uint32(len(key))
	h, np := l, n>>1
	for j := 0; j < np; j++ { // 8*j+8 <= 4*n <= len(key)
		w := binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, 8*j))[:])
		k0, k1 := murmurMix(uint32(w)), murmurMix(uint32(w>>32))
		mixed[j&(murmurPairWords/2-1)] = uint64(k1)<<32 | uint64(k0)
		h = (h*murmurM^k0)*murmurM ^ k1
	}
	var odd uint32
	if n&1 != 0 {
		odd = murmurMix(binary.LittleEndian.Uint32(key[n<<2-4:]))
		h = h*murmurM ^ odd
	}
	t, tl := murmurTail(key[n<<2:])
	h1 = murmurFinish(h, t, tl)
	h = uint32(h1) ^ l
	for _, m := range mixed[:np] {
		h = (h*murmurM^uint32(m))*murmurM ^ uint32(m>>32)
	}
	if n&1 != 0 {
		h = h*murmurM ^ odd
	}
	return h1, murmurFinish(h, t, tl)
}

// murmurTail is what MurmurHash XORs into the hash for its tail of at most 3 bytes (sign-extended, as
// Java's bytes are), and the tail's length.
func murmurTail(tail []byte) (uint32, int) {
	var t uint32
	switch len(tail) {
	case 3:
		t = uint32(int32(int8(tail[2]))<<16) ^ uint32(int32(int8(tail[1]))<<8) ^ uint32(int32(int8(tail[0])))
	case 2:
		t = uint32(int32(int8(tail[1]))<<8) ^ uint32(int32(int8(tail[0])))
	case 1:
		t = uint32(int32(int8(tail[0])))
	}
	return t, len(tail)
}

// murmurFinish is MurmurHash after its whole words: the tail given by murmurTail, and the final mix.
func murmurFinish(h, t uint32, tl int) int32 {
	if tl > 0 {
		h ^= t
		h *= murmurM
	}
	h ^= h >> 13
	h *= murmurM
	h ^= h >> 15
	return int32(h)
}

// Murmur3Hash is MurmurHash3_x86_32 (util/MurmurHash3.java).
func Murmur3Hash(data []byte, seed int32) int32 {
	const c1, c2 uint32 = 0xcc9e2d51, 0x1b873593
	h := uint32(seed)
	n := len(data)
	nblocks := n / 4
	for i := 0; i < nblocks; i++ {
		k := binary.LittleEndian.Uint32(data[i*4:])
		k *= c1
		k = k<<15 | k>>17
		k *= c2
		h ^= k
		h = h<<13 | h>>19
		h = h*5 + 0xe6546b64
	}
	var k uint32
	tail := data[nblocks*4:]
	switch len(tail) {
	case 3:
		k ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(tail[0])
		k *= c1
		k = k<<15 | k>>17
		k *= c2
		h ^= k
	}
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return int32(h)
}

// JenkinsHash is Bob Jenkins' lookup3 hashlittle as in HBase's util/JenkinsHash.java.
func JenkinsHash(key []byte, seed int32) int32 {
	rot := func(v uint32, s uint) uint32 { return v<<s | v>>(32-s) }
	length := len(key)
	a := uint32(0xdeadbeef) + uint32(length) + uint32(seed)
	b, c := a, a
	off := 0
	for ; length > 12; length, off = length-12, off+12 {
		a += binary.LittleEndian.Uint32(key[off:])
		b += binary.LittleEndian.Uint32(key[off+4:])
		c += binary.LittleEndian.Uint32(key[off+8:])
		a -= c
		a ^= rot(c, 4)
		c += b
		b -= a
		b ^= rot(a, 6)
		a += c
		c -= b
		c ^= rot(b, 8)
		b += a
		a -= c
		a ^= rot(c, 16)
		c += b
		b -= a
		b ^= rot(a, 19)
		a += c
		c -= b
		c ^= rot(b, 4)
		b += a
	}
	k := key[off:]
	switch length {
	case 12:
		c += uint32(k[11]) << 24
		fallthrough
	case 11:
		c += uint32(k[10]) << 16
		fallthrough
	case 10:
		c += uint32(k[9]) << 8
		fallthrough
	case 9:
		c += uint32(k[8])
		fallthrough
	case 8:
		b += uint32(k[7]) << 24
		fallthrough
	case 7:
		b += uint32(k[6]) << 16
		fallthrough
	case 6:
		b += uint32(k[5]) << 8
		fallthrough
	case 5:
		b += uint32(k[4])
		fallthrough
	case 4:
		a += uint32(k[3]) << 24
		fallthrough
	case 3:
		a += uint32(k[2]) << 16
		fallthrough
	case 2:
		a += uint32(k[1]) << 8
		fallthrough
	case 1:
		a += uint32(k[0])
	case 0:
		return int32(c)
	}
	c ^= b
	c -= rot(b, 14)
	a ^= c
	a -= rot(c, 11)
	b ^= a
	b -= rot(a, 25)
	c ^= b
	c -= rot(b, 16)
	a ^= c
	a -= rot(c, 4)
	b ^= a
	b -= rot(a, 14)
	c ^= b
	c -= rot(b, 24)
	return int32(c)
}

// BloomBitPositions calls fn with each of the hashCount bit positions of key in a chunk of bitSize bits,
// exactly as HBase's BloomFilterChunk.add / BloomFilterUtil.contains compute them.
func BloomBitPositions(h HashType, key []byte, hashCount int, bitSize int64, fn func(pos int64)) {
	h1 := h.Hash(key, 0)
	h2 := h.Hash(key, h1)
	for i := int32(0); i < int32(hashCount); i++ {
		combined := int64(h1 + i*h2) // int32 wrap-around, as in Java
		pos := combined % bitSize
		if pos < 0 {
			pos = -pos
		}
		fn(pos)
	}
}

// bloomBitPos is one bit position of BloomBitPositions; mask is bitSize-1 when bitSize is a power of two
// (then |x| % bitSize == |x| & mask, and |x| fits since x is a widened int32), else 0.
func bloomBitPos(h1, h2, i int32, bitSize, mask int64) int64 {
	x := int64(h1 + i*h2)
	if mask != 0 {
		s := x >> 63 // |x| without a branch: a hash's sign is a coin toss no branch predictor guesses
		return (x ^ s - s) & mask
	}
	pos := x % bitSize
	if pos < 0 {
		pos = -pos
	}
	return pos
}

func bloomMask(bitSize int64) int64 {
	if bitSize > 0 && bitSize&(bitSize-1) == 0 {
		return bitSize - 1
	}
	return 0
}

// BloomAdd sets key's bits in a bloom chunk (HBase's BloomFilterChunk.add); len(bits)*8 is the chunk's bit size.
func BloomAdd(bits []byte, h HashType, key []byte, hashCount int) {
	h1 := h.Hash(key, 0)
	bloomSet(bits, h1, h.Hash(key, h1), hashCount)
}

// bloomSet sets the bits of a key whose two hashes are h1 and h2 (BloomAdd after hashing).
func bloomSet(bits []byte, h1, h2 int32, hashCount int) {
	bitSize := int64(len(bits)) * 8
	mask := bloomMask(bitSize)
	if mask != 0 {
		bloomSetMasked(bits, h1, h2, hashCount, mask)
		return
	}
	for i := int32(0); i < int32(hashCount); i++ {
		pos := bloomBitPos(h1, h2, i, bitSize, mask)
		bits[pos>>3] |= 1 << (pos & 7)
	}
}

// bloomSetAll is bloomSet for each key of keys, given by its hashes h1<<32 | h2 (bloomHashes): the
// mask found once, and for a power-of-two chunk (every chunk a writer makes) bloomSetMasked's loop with
// its bounds check left out (a position masked by len(bits)*8-1 is within bits).
func bloomSetAll(bits []byte, keys []uint64, hashCount int) {
	mask := bloomMask(int64(len(bits)) * 8)
	if mask == 0 {
		for _, hh := range keys {
			bloomSet(bits, int32(hh>>32), int32(uint32(hh)), hashCount)
		}
		return
	}
	if mask >= 63 && mask < 1<<32 {
		bloomSetWords(bits, keys, hashCount, uint32(mask))
		return
	}
	m := uint64(mask)
	b := bits[:m>>3+1]
	for _, hh := range keys {
		x, step := int32(hh>>32), int32(uint32(hh))
		for k := hashCount; k > 0; k-- {
			v := int64(x)
			s := v >> 63
			pos := uint64(v^s-s) & m
			b[pos>>3] |= 1 << (pos & 7)
			x += step
		}
	}
}

// bloomSetWords is bloomSetAll's loop for a power-of-two chunk of at least 8 bytes (mask = its bits - 1,
// at least 63): bit pos of the chunk, bit pos&7 of byte pos>>3, is bit pos&63 of the little-endian word
// pos>>6 (every release target is little-endian), set with one instruction (BTS) in a word read and
// written through a pointer; two bits a step, for fewer loop instructions a bit. |x| of a
// widened int32 is taken in 32 bits: for math.MinInt32 both give 1<<31, and the mask (below 1<<32: a
// chunk's bits fit an int32) keeps the same low bits.
func bloomSetWords(bits []byte, keys []uint64, hashCount int, mask uint32) {
	if uint64(mask)+1 != uint64(len(bits))*8 || mask < 63 {
		panic("hfilewriter: bloomSetWords without a power-of-two chunk of whole words")
	}
	wp := unsafe.Pointer(unsafe.SliceData(bits)) // word p>>6 is within bits: p <= mask
	for _, hh := range keys {
		x, step := uint32(hh>>32), uint32(hh)
		// Two bits a step, the odd one after.
		k := hashCount
		for ; k >= 2; k -= 2 {
			y := x + step
			s, t := uint32(int32(x)>>31), uint32(int32(y)>>31)
			p, q := (x^s-s)&mask, (y^t-t)&mask
			*(*uint64)(unsafe.Add(wp, uintptr(p>>6)*8)) |= 1 << (p & 63)
			*(*uint64)(unsafe.Add(wp, uintptr(q>>6)*8)) |= 1 << (q & 63)
			x = y + step
		}
		if k > 0 {
			s := uint32(int32(x) >> 31)
			p := (x ^ s - s) & mask
			*(*uint64)(unsafe.Add(wp, uintptr(p>>6)*8)) |= 1 << (p & 63)
		}
	}
}

// bloomSetMasked sets the hashCount bits of h1 + i*h2 for a power-of-two bit count (mask = bits - 1):
// bloomBitPos's power-of-two path, h1 + i*h2 stepped by adding h2 (the same int32 wrap-around).
func bloomSetMasked(bits []byte, h1, h2 int32, hashCount int, mask int64) {
	for x := h1; hashCount > 0; hashCount-- {
		v := int64(x)
		s := v >> 63
		pos := (v ^ s - s) & mask
		bits[pos>>3] |= 1 << (pos & 7)
		x += h2
	}
}

// BloomContains reports whether all of key's bits are set (HBase's BloomFilterUtil.contains).
func BloomContains(bits []byte, h HashType, key []byte, hashCount int) bool {
	bitSize := int64(len(bits)) * 8
	if bitSize == 0 {
		return false
	}
	mask := bloomMask(bitSize)
	h1 := h.Hash(key, 0)
	h2 := h.Hash(key, h1)
	for i := int32(0); i < int32(hashCount); i++ {
		pos := bloomBitPos(h1, h2, i, bitSize, mask)
		if bits[pos>>3]&(1<<(pos&7)) == 0 {
			return false
		}
	}
	return true
}
