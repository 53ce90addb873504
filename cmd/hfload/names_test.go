package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// Issue 23 item 8: HFile names are the same for an identical rerun and differ when the input content
// (even at the same size) or a setting differs, so outputs of several runs can sit side by side.
func TestHFileNamesFollowContentAndSettings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.csv", "k1,x\nk2,y\n")
	b := write("b.csv", "k1,x\nk2,z\n") // same size, one byte differs
	pa, pb := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	for seed, p := range map[string]string{"1": pa, "2": pb} {
		if code, _, stderr := hfload(t, "gen", "orders", "--rows", "50", "--seed", seed, "--out", p); code != 0 {
			t.Fatal(stderr)
		}
	}
	runs := 0
	name := func(in, cols string, extra ...string) string {
		t.Helper()
		runs++
		out := filepath.Join(dir, "out"+strconv.Itoa(runs))
		args := append([]string{"run", "--input", in, "--columns", cols, "--table", "t", "--out", out,
			"--no-progress", "--timestamp", "1700000000000"}, extra...)
		if code, _, stderr := hfload(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		files, _ := filepath.Glob(filepath.Join(out, "d", "*"))
		if len(files) != 1 {
			t.Fatalf("%v: %d files", args, len(files))
		}
		return filepath.Base(files[0])
	}
	csv, pq := "HBASE_ROW_KEY,d:v", "HBASE_ROW_KEY,d:a,d:b,d:c,d:d,d:e,d:f,d:g"
	first := name(a, csv)
	if again := name(a, csv); again != first {
		t.Errorf("identical rerun: name %s, first run %s", again, first)
	}
	if other := name(b, csv); other == first {
		t.Errorf("CSV input differing in one byte: same name %s", other)
	}
	if gz := name(a, csv, "--compression", "gz"); gz == first {
		t.Errorf("different compression: same name %s", gz)
	}
	if ts := name(a, csv, "--timestamp", "1700000000001"); ts == first {
		t.Errorf("different timestamp: same name %s", ts)
	}
	if w := name(a, csv, "--workers", "1", "--memory", "128MiB"); w != first {
		t.Errorf("workers and memory do not shape the files, but the name changed: %s, first run %s", w, first)
	}
	p1 := name(pa, pq)
	if p2 := name(pb, pq); p2 == p1 {
		t.Errorf("different Parquet inputs: same name %s", p2)
	}
	if again := name(pa, pq); again != p1 {
		t.Errorf("identical Parquet rerun: name %s, first run %s", again, p1)
	}
}
