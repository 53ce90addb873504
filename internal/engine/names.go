package engine

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
)

// hfileName is an HFile's name: 32 hex characters (like HBase's own store file names, which must not
// contain '-' or '.'), the MD5 of the run's name seed (Spec.NameSeed) and the file's table, family,
// region and part. Outputs of several runs or workers end up side by side (one bulk-load directory, one
// bucket prefix): runs whose seeds differ never share a name, and an identical run keeps its names.
func hfileName(seed []byte, table, fam string, region, part int) string {
	h := md5.New()
	h.Write(seed)
	fmt.Fprintf(h, "\x00%s\x00%s\x00%d\x00%d", table, fam, region, part)
	return hex.EncodeToString(h.Sum(nil))
}
