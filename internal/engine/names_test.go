package engine

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
)

// hfileName keeps the names of earlier builds: MD5 of the seed and "\x00table\x00family\x00region\x00part".
func TestHFileNameStable(t *testing.T) {
	for _, c := range []struct {
		seed         string
		table, fam   string
		region, part int
	}{
		{"", "t", "d", 0, 0}, {"run-1", "ns:table", "cf", 9999, 3}, {string(make([]byte, 300)), "t", "a", 1, 12},
	} {
		h := md5.New()
		h.Write([]byte(c.seed))
		fmt.Fprintf(h, "\x00%s\x00%s\x00%d\x00%d", c.table, c.fam, c.region, c.part)
		want := hex.EncodeToString(h.Sum(nil))
		if got := hfileName([]byte(c.seed), c.table, c.fam, c.region, c.part); got != want {
			t.Errorf("%+v: %s, want %s", c, got, want)
		}
	}
	if hfileName([]byte("s"), "t", "d", 1, 0) == hfileName([]byte("s"), "t", "d", 10, 0) {
		t.Error("regions 1 and 10 share a name")
	}
	if n := testing.AllocsPerRun(100, func() { hfileName([]byte("seed"), "t", "d", 5, 0) }); n > 1 {
		t.Errorf("%v allocations a name, want 1 (the string)", n)
	}
}

// joinFile is filepath.Join for every directory, fast path or not.
func TestJoinFile(t *testing.T) {
	dirs := []string{"/tmp/out/.hfload-staging-x", "out", "out/", "/", "", ".", "..", "../a", "a/../b", "a//b", "/a/./b",
		"a/.", "a/..", "/tmp/x y/z", "./a", "a/b/c/", "//a", "/..", "a/...", ".hidden/d"}
	for _, dir := range dirs {
		for _, fam := range []string{"d", "cf", ".", "..", "", "a/b"} {
			for _, name := range []string{"0123abcd", "..", "x/../y"} {
				if got, want := joinFile(dir, fam, name), filepath.Join(dir, fam, name); got != want {
					t.Errorf("joinFile(%q, %q, %q) = %q, want %q", dir, fam, name, got, want)
				}
			}
		}
	}
}
