package engine

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// refName is the name of earlier builds: the hex MD5 of the seed and "\x00table\x00family\x00region\x00part".
func refName(seed, table, fam string, region, part int) string {
	h := md5.New()
	h.Write([]byte(seed))
	fmt.Fprintf(h, "\x00%s\x00%s\x00%d\x00%d", table, fam, region, part)
	return hex.EncodeToString(h.Sum(nil))
}

// hfilePath keeps the names of earlier builds: MD5 of the seed and "\x00table\x00family\x00region\x00part".
func TestHFileNameStable(t *testing.T) {
	for _, c := range []struct {
		seed         string
		table, fam   string
		region, part int
	}{
		{"", "t", "d", 0, 0}, {"run-1", "ns:table", "cf", 9999, 3}, {string(make([]byte, 300)), "t", "a", 1, 12},
	} {
		want := refName(c.seed, c.table, c.fam, c.region, c.part)
		if _, got := hfilePath([]byte(c.seed), c.table, c.fam, c.region, c.part); got != want {
			t.Errorf("%+v: %s, want %s", c, got, want)
		}
	}
	_, n1 := hfilePath([]byte("s"), "t", "d", 1, 0)
	if _, n10 := hfilePath([]byte("s"), "t", "d", 10, 0); n1 == n10 {
		t.Error("regions 1 and 10 share a name")
	}
}

// appendHex is hex.AppendEncode of 16 bytes: each byte value in each place, and random sums.
func TestAppendHex(t *testing.T) {
	check := func(sum [16]byte) {
		t.Helper()
		if got, want := string(appendHex([]byte("x/"), &sum)), "x/"+hex.EncodeToString(sum[:]); got != want {
			t.Fatalf("appendHex(%x) = %q, want %q", sum, got, want)
		}
	}
	for v := range 256 {
		for i := range 16 {
			var sum [16]byte
			sum[i] = byte(v)
			sum[(i+7)%16] = byte(255 - v)
			check(sum)
		}
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for range 10000 {
		var sum [16]byte
		for i := range sum {
			sum[i] = byte(rng.Uint32())
		}
		check(sum)
	}
}

// hfilePath is filepath.Join(family, name) and the name (TestHFileNameStable's), in one allocation, for
// short and long families.
func TestHFilePath(t *testing.T) {
	for _, fam := range []string{"d", "cf", string(make([]byte, 200))} {
		for _, region := range []int{0, 7, 10000} {
			rel, name := hfilePath([]byte("seed"), "t", fam, region, 1)
			want := refName("seed", "t", fam, region, 1)
			if name != want || rel != filepath.Join(fam, want) {
				t.Errorf("family %q region %d: %q, %q; want %q, %q", fam[:min(len(fam), 4)], region, rel, name,
					filepath.Join(fam, want), want)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() { hfilePath([]byte("seed"), "t", "d", 5, 0) }); n > 1 {
		t.Errorf("%v allocations a path, want 1 (the string)", n)
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
