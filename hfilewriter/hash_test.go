package hfilewriter

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"testing"
)

// Vectors from Appendix B of docs/hfile-format.md (Java transcription of HBase's MurmurHash).
func TestMurmurHashVectors(t *testing.T) {
	cases := []struct {
		key    string
		h1, h2 uint32
		bits   []int64
	}{
		{"", 0, 0, []int64{0, 0, 0, 0, 0, 0, 0}},
		{"61", 0x92685f5e, 0x5b2b9c66, []int64{499874, 787516, 1021994, 314224, 601866, 159068, 128574}},
		{"616263", 0x13577c9b, 0xf369e600, []int64{490651, 90779, 309093, 708965, 60261, 460133, 860005}},
		{"61626364", 0x26873021, 0xe0ba3fa1, []int64{471073, 94146, 282781, 659708, 1036635, 364986, 306663}},
		{"726f772d3030303031", 0x13c3fb07, 0x5a6fae3b, []int64{260871, 239938, 829571, 198072, 177139, 892370, 135273}},
		{"80ff01", 0x43863372, 0x68e978c6, []int64{406386, 21448, 599294, 171460, 256374, 364368, 63466}},
	}
	for _, c := range cases {
		key, _ := hex.DecodeString(c.key)
		h1 := MurmurHash(key, 0)
		h2 := MurmurHash(key, h1)
		if uint32(h1) != c.h1 || uint32(h2) != c.h2 {
			t.Errorf("key %q: hashes %08x %08x, want %08x %08x", c.key, uint32(h1), uint32(h2), c.h1, c.h2)
		}
		if p1, p2 := murmurHashPair(key); uint32(p1) != c.h1 || uint32(p2) != c.h2 {
			t.Errorf("key %q: murmurHashPair %08x %08x, want %08x %08x", c.key, uint32(p1), uint32(p2), c.h1, c.h2)
		}
		var got []int64
		BloomBitPositions(HashMurmur, key, 7, 1048576, func(p int64) { got = append(got, p) })
		for i := range got {
			if got[i] != c.bits[i] {
				t.Errorf("key %q: bits %v, want %v", c.key, got, c.bits)
				break
			}
		}
	}
}

// Reference values of MurmurHash3_x86_32 (seed 0) from the algorithm's published test vectors.
func TestMurmur3Vectors(t *testing.T) {
	cases := []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"", 1, 0x514E28B7},
		{"\xff\xff\xff\xff", 0, 0x76293B50},
		{"!Ce\x87", 0, 0xF55B516B},
		{"!Ce", 0, 0x7E4A8634},
		{"!C", 0, 0xA0F7B07A},
		{"!", 0, 0x72661CF4},
	}
	for _, c := range cases {
		if got := uint32(Murmur3Hash([]byte(c.in), int32(c.seed))); got != c.want {
			t.Errorf("murmur3(%q, %d) = %08x, want %08x", c.in, c.seed, got, c.want)
		}
	}
}

func TestJenkinsHashKnown(t *testing.T) {
	// lookup3 hashlittle("Four score and seven years ago", 30, 0) = 0x17770551 and seed 1 = 0xcd628161,
	// from the comments of Bob Jenkins' lookup3.c driver5.
	if got := uint32(JenkinsHash([]byte("Four score and seven years ago"), 0)); got != 0x17770551 {
		t.Errorf("jenkins seed 0 = %08x", got)
	}
	if got := uint32(JenkinsHash([]byte("Four score and seven years ago"), 1)); got != 0xcd628161 {
		t.Errorf("jenkins seed 1 = %08x", got)
	}
	if got := uint32(JenkinsHash(nil, 0)); got != 0xdeadbeef {
		t.Errorf("jenkins empty = %08x", got)
	}
}

// BloomAdd/BloomContains (power-of-two fast path) must set exactly the bits BloomBitPositions computes,
// for power-of-two and other chunk sizes, including keys whose combined hash is negative.
func TestBloomAddMatchesBitPositions(t *testing.T) {
	for _, size := range []int{16, 131072, 1000, 24} {
		for i := 0; i < 2000; i++ {
			key := []byte{byte(i), byte(i >> 8), 0x80, byte(i * 7)}[:1+i%4]
			a := make([]byte, size)
			b := make([]byte, size)
			BloomAdd(a, HashMurmur, key, 7)
			BloomBitPositions(HashMurmur, key, 7, int64(size)*8, func(p int64) { b[p>>3] |= 1 << (p & 7) })
			if string(a) != string(b) {
				t.Fatalf("size %d key %x: fast path differs", size, key)
			}
			if !BloomContains(a, HashMurmur, key, 7) {
				t.Fatalf("size %d key %x: not contained after add", size, key)
			}
		}
	}
}

// bloomSet must set exactly the bits HBase's BloomFilterChunk.add sets (BloomBitPositions, the
// transcription of Java's int arithmetic), for a power-of-two chunk (the mask path) and another size,
// including the hashes whose sum overflows to math.MinInt32 (|x| = 2^31).
func TestBloomSetMatchesBitPositions(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, byteSize := range []int{1 << 17, 3 << 10, 1000} {
		bitSize := int64(byteSize) * 8
		for n := 0; n < 2000; n++ {
			h1, h2 := int32(r.Uint32()), int32(r.Uint32())
			switch n {
			case 0:
				h1, h2 = math.MinInt32, 0
			case 1:
				h1, h2 = math.MaxInt32, 1 // h1 + h2 wraps to MinInt32
			case 2:
				h1, h2 = -1, -1
			}
			got := make([]byte, byteSize)
			bloomSet(got, h1, h2, 7)
			want := make([]byte, byteSize)
			for i := int32(0); i < 7; i++ {
				pos := int64(h1+i*h2) % bitSize
				if pos < 0 {
					pos = -pos
				}
				want[pos>>3] |= 1 << (pos & 7)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("chunk of %d bytes, hashes %d %d: bits differ from Java's arithmetic", byteSize, h1, h2)
			}
		}
	}
}

// bloomSetAll on a folded chunk (writeBloomChunk.fold with every key pending) sets exactly the bits
// bloomSet sets in the whole chunk, folded (the pieces OR-ed together as fold does), for chunk sizes
// that are powers of two (positions by mask) and that are not (by remainder), every fold depth and
// hash count.
func TestBloomSetAllFoldedMatchesFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, chunkBytes := range []int{8, 64, 1024, 4096, 96, 1536, 3 << 7, 1000} {
		for pieces := 1; pieces <= chunkBytes && chunkBytes%pieces == 0; pieces <<= 1 {
			for n := 1; n <= 9; n++ {
				whole := make([]byte, chunkBytes)
				folded := make([]byte, chunkBytes/pieces)
				keys := make([]uint64, 50)
				for k := range keys {
					h1, h2 := int32(rng.Uint32()), int32(rng.Uint32())
					if k == 0 {
						h1, h2 = math.MinInt32, -1 // |x| of the most negative int32, stepping through it
					}
					keys[k] = uint64(uint32(h1))<<32 | uint64(uint32(h2))
					bloomSet(whole, h1, h2, n)
				}
				bloomSetAll(folded, keys, n)
				want := make([]byte, len(folded))
				for p := 0; p < pieces; p++ {
					for i := range want {
						want[i] |= whole[p*len(folded)+i]
					}
				}
				if !bytes.Equal(folded, want) {
					t.Fatalf("chunk of %d bytes folded %d times, %d hashes: bloomSetAll on the folded chunk differs from bloomSet then fold",
						chunkBytes, pieces, n)
				}
			}
		}
	}
}

// murmurHashRef is MurmurHash as written before its words were mixed by murmurMix (a word at a time by
// index, the tail by its length): the reference the faster forms are checked against.
func murmurHashRef(data []byte, seed int32) int32 {
	const m uint32 = 0x5bd1e995
	length := len(data)
	h := uint32(seed) ^ uint32(length)
	len4 := length >> 2
	for i := 0; i < len4; i++ {
		k := uint32(data[i*4]) | uint32(data[i*4+1])<<8 | uint32(data[i*4+2])<<16 | uint32(data[i*4+3])<<24
		k *= m
		k ^= k >> 24
		k *= m
		h *= m
		h ^= k
	}
	left := length - len4<<2
	i := len4 << 2
	if left != 0 {
		if left >= 3 {
			h ^= uint32(int32(int8(data[i+2])) << 16)
		}
		if left >= 2 {
			h ^= uint32(int32(int8(data[i+1])) << 8)
		}
		h ^= uint32(int32(int8(data[i])))
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}

// MurmurHash with any seed, and murmurHashPair (both hashes of a bloom key: its words mixed and its
// tail taken once for keys of up to murmurPairWords words, without a loop for up to two, two MurmurHash
// calls beyond), agree with the reference for every length up to well past murmurPairWords words and
// for bytes with the top bit set (Java's signed tail).
func TestMurmurHashPairMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 9))
	for n := 0; n <= 4*murmurPairWords+9; n++ {
		for iter := 0; iter < 40; iter++ {
			key := make([]byte, n)
			for i := range key {
				key[i] = byte(rng.IntN(256))
			}
			seed := int32(rng.Uint32())
			if got, want := MurmurHash(key, seed), murmurHashRef(key, seed); got != want {
				t.Fatalf("MurmurHash(%x, %d) = %08x, reference %08x", key, seed, uint32(got), uint32(want))
			}
			w1 := murmurHashRef(key, 0)
			w2 := murmurHashRef(key, w1)
			if h1, h2 := murmurHashPair(key); h1 != w1 || h2 != w2 {
				t.Fatalf("murmurHashPair(%x) = %08x %08x, reference %08x %08x", key, uint32(h1), uint32(h2), uint32(w1), uint32(w2))
			}
		}
	}
}

// bloomSetAll sets exactly the bits bloomSet sets key by key, for power-of-two chunks (its own loop)
// and others, with the hashes whose sums wrap or reach math.MinInt32 among the keys.
func TestBloomSetAllMatchesBloomSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 3))
	for _, byteSize := range []int{1, 4, 8, 16, 1 << 10, 1 << 17, 1000, 3 << 10} {
		for _, hashCount := range []int{1, 2, 3, 7, 13} {
			keys := []uint64{1 << 63, math.MaxInt32<<32 | 1, math.MaxUint64} // h1 MinInt32; h1 MaxInt32 and h2 1; both -1
			for range 3000 {
				keys = append(keys, rng.Uint64())
			}
			got, want := make([]byte, byteSize), make([]byte, byteSize)
			bloomSetAll(got, keys, hashCount)
			for _, hh := range keys {
				bloomSet(want, int32(hh>>32), int32(uint32(hh)), hashCount)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("chunk of %d bytes, %d hashes: bloomSetAll's bits differ from bloomSet's", byteSize, hashCount)
			}
			if m := bloomMask(int64(byteSize) * 8); m >= 63 {
				// bloomSetAll's word loop itself, which it takes for these chunks.
				words := make([]byte, byteSize)
				bloomSetWords(words, keys, hashCount, uint32(m))
				if !bytes.Equal(words, want) {
					t.Fatalf("chunk of %d bytes, %d hashes: bloomSetWords' bits differ from bloomSet's", byteSize, hashCount)
				}
			}
		}
	}
}
