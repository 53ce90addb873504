package engine

import (
	"crypto/md5"
	"encoding/binary"
	"path/filepath"
	"strconv"
)

// hfilePath returns an HFile's path under the output directory, family "/" name, and its name, a part
// of it: one string for both. The name is 32 hex characters (like HBase's own store file names, which
// must not contain '-' or '.'), the MD5 of the run's name seed (Spec.NameSeed) and the file's table,
// family, region and part. Outputs of several runs or workers end up side by side (one bulk-load
// directory, one bucket prefix): runs whose seeds differ never share a name, and an identical run keeps
// its names.
func hfilePath(seed []byte, table, fam string, region, part int) (rel, name string) {
	var stack [128]byte
	b := append(append(stack[:0], fam...), filepath.Separator)
	rel = string(appendHFileName(b, seed, table, fam, region, part))
	return rel, rel[len(fam)+1:]
}

// appendHFileName appends the name of hfilePath(seed, table, fam, region, part) to dst.
func appendHFileName(dst, seed []byte, table, fam string, region, part int) []byte {
	// MD5 of seed "\x00" table "\x00" fam "\x00" region "\x00" part (decimal), in one buffer: no fmt,
	// no hash object per file.
	var stack [256]byte
	b := append(stack[:0], seed...)
	b = append(b, 0)
	b = append(b, table...)
	b = append(b, 0)
	b = append(b, fam...)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(region), 10)
	b = append(b, 0)
	b = strconv.AppendInt(b, int64(part), 10)
	sum := md5.Sum(b)
	return appendHex(dst, &sum)
}

// appendHex appends the 32 lower-case hex digits of sum to dst, as hex.AppendEncode does, four bytes
// at a time: their nibbles spread one to a byte, and each turned into its digit without a branch or a
// table ('0' + n, plus 'a'-'0'-10 where n > 9).
func appendHex(dst []byte, sum *[16]byte) []byte {
	var out [32]byte
	for i := 0; i < 16; i += 4 {
		x := uint64(binary.BigEndian.Uint32(sum[i:]))
		x = (x | x<<16) & 0x0000FFFF0000FFFF
		x = (x | x<<8) & 0x00FF00FF00FF00FF
		x = (x | x<<4) & 0x0F0F0F0F0F0F0F0F                           // nibble k (from the top) in byte k
		letters := (x + 0x0606060606060606) >> 4 & 0x0101010101010101 // 1 where the nibble is above 9
		binary.BigEndian.PutUint64(out[2*i:], x+0x3030303030303030+letters*('a'-'0'-10))
	}
	return append(dst, out[:]...)
}
