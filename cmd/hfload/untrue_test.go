package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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

// Issue 23 item 7: a family name HBase reserves or refuses fails before any input is read (the input
// here is a cut .gz that would exit 3 if it were read), not at commit after the whole load.
func TestReservedFamilyRefusedBeforeReading(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "cut.csv.gz")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat([]byte("k,v\n"), 10000))
	zw.Close()
	if err := os.WriteFile(in, gz.Bytes()[:gz.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for i, fam := range []string{"recovered.edits", ".hidden", "a/b", "tab\there"} {
		out := filepath.Join(dir, "out"+strconv.Itoa(i))
		code, _, stderr := hfload(t, "run", "--input", in, "--columns", "HBASE_ROW_KEY,"+fam+":v", "--table", "t",
			"--out", out, "--no-progress")
		if code != 1 || !strings.Contains(stderr, "family") || strings.Contains(stderr, "internal error") {
			t.Errorf("family %q: exit %d, stderr %q; want a configuration error (exit 1) naming the family", fam, code, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("family %q: %s exists", fam, out)
		}
	}
}

// Issue 23 item 14: the record limit is a setting (--max-record / max_record), not a hidden 64 MiB.
func TestMaxRecordSetting(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "long.csv")
	// Row 2 has a 2,000-byte quoted field: a good row under the default limit, a bad one under 1 KiB.
	data := "k1,a\nk2,\"" + strings.Repeat("x", 2000) + "\"\nk3,b\n"
	if err := os.WriteFile(in, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(extra ...string) (int, string) {
		t.Helper()
		out := filepath.Join(dir, "out"+strconv.Itoa(len(extra)))
		args := append([]string{"run", "--input", in, "--columns", "HBASE_ROW_KEY,d:v", "--table", "t", "--out", out,
			"--no-progress", "--max-rejects", "-1", "--duplicates", "keep", "--json"}, extra...)
		code, stdout, stderr := hfload(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		return code, stdout
	}
	_, small := run("--max-record", "1KiB")
	if !strings.Contains(small, `"rows_rejected": 1,`) || !strings.Contains(small, `"rows_keyed": 2,`) {
		t.Errorf("--max-record 1KiB: want 1 row rejected and 2 keyed:\n%s", small)
	}
	_, dflt := run()
	if !strings.Contains(dflt, `"rows_rejected": 0,`) || !strings.Contains(dflt, `"rows_keyed": 3,`) {
		t.Errorf("default limit: want every row keyed:\n%s", dflt)
	}
	if code, _, stderr := hfload(t, "run", "--input", in, "--columns", "HBASE_ROW_KEY,d:v", "--table", "t",
		"--out", filepath.Join(dir, "o"), "--max-record", "2GiB"); code != 1 || !strings.Contains(stderr, "max_record") {
		t.Errorf("--max-record 2GiB: exit %d, %s; want a configuration error", code, stderr)
	}
}

// Issue 23 item 9: typos get the closest name: flags, ImportTsv keywords, mapping and header names.
func TestDidYouMean(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("order_id,customer_id\n1,7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	jobs := 0
	job := func(mapping string) string {
		jobs++
		p := filepath.Join(dir, "job"+strconv.Itoa(jobs)+".yaml")
		body := "input: [" + in + "]\nheader: true\ntable: t\nout: " + filepath.Join(dir, "out") + "\nmapping:\n" + mapping
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--colums", "HBASE_ROW_KEY,d:v"}, "unknown flag: --colums (did you mean --columns?)"},
		{[]string{"hfile", "inspect", "--jsn", "f"}, "(did you mean --json?)"},
		{[]string{"run", "--input", in, "--table", "t", "--out", filepath.Join(dir, "o1"), "--columns", "HBASE_ROWKEY,d:v"},
			"did you mean HBASE_ROW_KEY?"},
		{[]string{"run", "--input", in, "--table", "t", "--out", filepath.Join(dir, "o2"), "--columns", "HBASE_ROW_KEY,HBASE_TS_KY"},
			"did you mean HBASE_TS_KEY?"},
		{[]string{"run", job("  columns:\n    - {name: order_id}\n    - {name: customer_id, cell: \"d:c\"}\n  rowkey: [ordr_id]\n")},
			`unknown column "ordr_id" (did you mean "order_id"?`},
		{[]string{"run", job("  columns:\n    - {name: order_id}\n    - {name: custmer_id, cell: \"d:c\"}\n  rowkey: [order_id]\n")},
			`(did you mean "customer_id"?)`},
	}
	for _, c := range cases {
		code, _, stderr := hfload(t, c.args...)
		if code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("hfload %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}

// Issue 23 item 5: one NULL rule, stated once (README, Dialects), referred to by help and docs, and
// the behaviour it states: with a marker an empty unquoted field is an empty cell; without one it is NULL.
func TestOneNullRule(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "n.csv")
	if err := os.WriteFile(in, []byte("k1,,\\N,\"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cells := func(extra ...string) string {
		t.Helper()
		out := filepath.Join(dir, "out"+strconv.Itoa(len(extra)))
		args := append([]string{"run", "--input", in, "--columns", "HBASE_ROW_KEY,d:a,d:b,d:c", "--table", "t",
			"--out", out, "--no-progress", "--timestamp", "1"}, extra...)
		if code, _, stderr := hfload(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", extra, code, stderr)
		}
		files, _ := filepath.Glob(filepath.Join(out, "d", "*"))
		if len(files) != 1 {
			t.Fatalf("%v: %d HFiles", extra, len(files))
		}
		code, stdout, stderr := hfload(t, "hfile", "dump", files[0])
		if code != 0 {
			t.Fatal(stderr)
		}
		return stdout
	}
	// No marker (csv): the empty unquoted field is NULL (no cell), \N is text, "" is an empty cell.
	if got, want := cells(), "k1\td:b\t1\tPut\t\\x5CN\nk1\td:c\t1\tPut\t\n"; got != want {
		t.Errorf("without --null: cells\n%q, want\n%q", got, want)
	}
	// Marker \N: \N is NULL, the empty unquoted field is an empty cell.
	if got, want := cells("--null", `\N`), "k1\td:a\t1\tPut\t\nk1\td:c\t1\tPut\t\n"; got != want {
		t.Errorf("with --null '\\N': cells\n%q, want\n%q", got, want)
	}

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(readme), "**The NULL rule**"); n != 1 {
		t.Errorf("README states the NULL rule %d times, want once", n)
	}
	code, help, _ := hfload(t, "run", "--help")
	if code != 0 {
		t.Fatal("run --help failed")
	}
	for _, line := range strings.Split(help, "\n") {
		if strings.Contains(line, "--null") && (strings.Contains(line, "always") || !strings.Contains(line, "Dialects")) {
			t.Errorf("run --help states its own NULL rule instead of pointing to README Dialects: %q", line)
		}
	}
	docs, _ := filepath.Glob("../../docs/*.md")
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "an empty unquoted CSV field, the `--null` marker") {
			t.Errorf("%s restates the NULL rule (as empty field OR marker); point to README#dialects", d)
		}
	}
}
