package engine

import (
	"crypto/md5"
	"encoding/hex"
	"strconv"
)

// hfileName is an HFile's name: 32 hex characters (like HBase's own store file names, which must not
// contain '-' or '.'), the MD5 of the run's name seed (Spec.NameSeed) and the file's table, family,
// region and part. Outputs of several runs or workers end up side by side (one bulk-load directory, one
// bucket prefix): runs whose seeds differ never share a name, and an identical run keeps its names.
func hfileName(seed []byte, table, fam string, region, part int) string {
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
	return hex.EncodeToString(sum[:])
}
