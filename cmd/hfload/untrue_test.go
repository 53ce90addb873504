package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 23 item 1: a truncated or corrupt input is an input I/O error (exit 3) that says so and names
// the file; hfile commands on a file that is no HFile say so instead of quoting a "version".
func TestCorruptInputExitsThree(t *testing.T) {
	dir := t.TempDir()
	var csv bytes.Buffer
	for i := 0; i < 5000; i++ {
		csv.WriteString("k" + strings.Repeat("x", i%7) + ",v\n")
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(csv.Bytes())
	zw.Close()
	pq := filepath.Join(dir, "full.parquet")
	if code, _, stderr := hfload(t, "gen", "orders", "--rows", "500", "--out", pq); code != 0 {
		t.Fatal(stderr)
	}
	pqb, err := os.ReadFile(pq)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(gz.Bytes())
	flipped[len(flipped)-6] ^= 0xff // the CRC-32 of the gzip trailer
	files := map[string][]byte{
		"cut.csv.gz":     gz.Bytes()[:gz.Len()/2],
		"crc.csv.gz":     flipped,
		"empty.csv.gz":   nil,
		"cut.parquet":    pqb[:len(pqb)/2],
		"footer.parquet": append(bytes.Clone(pqb[:len(pqb)-12]), pqb[len(pqb)-8:]...),
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			in := filepath.Join(dir, name)
			if err := os.WriteFile(in, data, 0o644); err != nil {
				t.Fatal(err)
			}
			cols := "HBASE_ROW_KEY,d:v"
			if strings.HasSuffix(name, ".parquet") {
				cols = "HBASE_ROW_KEY,d:customer_id"
			}
			code, _, stderr := hfload(t, "run", "--input", in, "--columns", cols, "--table", "t",
				"--out", filepath.Join(dir, "out-"+name), "--no-progress", "--duplicates", "keep")
			if code != 3 || !strings.Contains(stderr, "truncated or corrupt input "+in+" (") {
				t.Errorf("exit %d, stderr %q; want exit 3 and \"truncated or corrupt input %s (…)\"", code, stderr, in)
			}
		})
	}
	for _, sub := range []string{"inspect", "verify", "dump"} {
		code, _, stderr := hfload(t, "hfile", sub, pq)
		if code == 0 || !strings.Contains(stderr, pq+": not an HFile (no trailer)") {
			t.Errorf("hfile %s on a Parquet file: exit %d, stderr %q; want \"not an HFile (no trailer)\"", sub, code, stderr)
		}
	}
}

// Issue 23 item 2: --duplicates keep writes every copy and counts them (manifest and summary).
func TestDuplicatesKeepCounted(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(in, []byte("k1,a\nk1,b\nk2,c\nk1,d\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := hfload(t, "run", "--input", in, "--columns", "HBASE_ROW_KEY,d:v", "--table", "t",
		"--out", out, "--no-progress", "--duplicates", "keep", "--timestamp", "1")
	if code != 0 {
		t.Fatal(stderr)
	}
	if !strings.Contains(stdout, "4 written, 2 duplicates kept") {
		t.Errorf("summary does not count the kept duplicates:\n%s", stdout)
	}
	raw, err := os.ReadFile(filepath.Join(out, "_manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Counts map[string]int64 `json:"counts"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Counts["duplicates_kept"] != 2 || m.Counts["duplicates"] != 0 || m.Counts["cells_written"] != 4 {
		t.Errorf("manifest counts %v: want duplicates_kept 2, duplicates 0, cells_written 4", m.Counts)
	}
}
