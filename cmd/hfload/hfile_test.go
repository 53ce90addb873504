package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const simpleGolden = "../../hfilewriter/testdata/hbase-2.6.4/simple-v3-none-rowbloom.hfile"

// runHFile runs `hfload hfile args...` and returns stdout and the command's error.
func runHFile(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := newHFileCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), err
}

// simpleCellText is the content of the HBase 2.6.4 simple golden file as cell text, in reverse order
// (so `write` has to sort it).
func simpleCellText() string {
	var sb strings.Builder
	for i := 9; i >= 0; i-- {
		fmt.Fprintf(&sb, "row-%02d\tcf:q\t1700000000000\tPut\tval-%02d\n", i, i)
	}
	return sb.String()
}

func TestHFileWriteMatchesHBaseGolden(t *testing.T) {
	dir := t.TempDir()
	cells := filepath.Join(dir, "cells.txt")
	if err := os.WriteFile(cells, []byte(simpleCellText()), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.hfile")
	if _, err := runHFile(t, "", "write", "--create-time", "0", "--no-tags", cells, out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(simpleGolden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		n := 0
		for n < len(got) && n < len(want) && got[n] == want[n] {
			n++
		}
		t.Fatalf("written file (%d bytes) differs from HBase's (%d bytes) at offset %d", len(got), len(want), n)
	}
	// Same through stdin.
	out2 := filepath.Join(dir, "stdin.hfile")
	if _, err := runHFile(t, simpleCellText(), "write", "--create-time", "0", "--no-tags", "-", out2); err != nil {
		t.Fatal(err)
	}
	if got2, _ := os.ReadFile(out2); !bytes.Equal(got2, want) {
		t.Fatal("file written from stdin differs from HBase's")
	}
}

// TestHFileDumpSeveralFiles: dump with several files prints each file's cells in the order given
// (bench-shapes.sh COMPARE=cells dumps a family's files in one process), and a missing one fails
// naming it after the cells before it.
func TestHFileDumpSeveralFiles(t *testing.T) {
	one, err := runHFile(t, "", "dump", simpleGolden)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cells := filepath.Join(dir, "dump.txt")
	if err := os.WriteFile(cells, []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.hfile")
	if _, err := runHFile(t, "", "write", "--compression", "snappy", cells, other); err != nil {
		t.Fatal(err)
	}
	both, err := runHFile(t, "", "dump", simpleGolden, other, simpleGolden)
	if err != nil {
		t.Fatal(err)
	}
	if want := one + one + one; both != want {
		t.Fatalf("dump of three files:\n%s\nwant:\n%s", both, want)
	}
	missing := filepath.Join(dir, "missing.hfile")
	out, err := runHFile(t, "", "dump", simpleGolden, missing)
	if err == nil || !strings.Contains(err.Error(), "missing.hfile") {
		t.Fatalf("dump with a missing file: %v", err)
	}
	if !strings.HasPrefix(out, one) {
		t.Fatalf("dump with a missing second file printed %q, want the first file's cells first", out)
	}
}

func TestHFileDumpRoundTrip(t *testing.T) {
	dump, err := runHFile(t, "", "dump", simpleGolden)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(simpleCellText(), "\n"), "\n")
	for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
		lines[i], lines[j] = lines[j], lines[i]
	}
	if want := strings.Join(lines, "\n") + "\n"; dump != want {
		t.Fatalf("dump of the golden file:\n%s\nwant:\n%s", dump, want)
	}
	dir := t.TempDir()
	for _, flags := range [][]string{
		{"--compression", "gz", "--encoding", "fast_diff", "--bloom", "rowcol"},
		{"--format-version", "2", "--compression", "snappy", "--encoding", "diff", "--block-size", "64"},
		{"--compression", "zstd", "--encoding", "prefix", "--bloom", "none"},
		{"--compression", "lz4"},
	} {
		cells := filepath.Join(dir, "dump.txt")
		if err := os.WriteFile(cells, []byte(dump), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "rt.hfile")
		args := append(append([]string{"write"}, flags...), cells, out)
		if _, err := runHFile(t, "", args...); err != nil {
			t.Fatalf("%v: %v", flags, err)
		}
		again, err := runHFile(t, "", "dump", out)
		if err != nil {
			t.Fatalf("%v: %v", flags, err)
		}
		if again != dump {
			t.Fatalf("%v: dump after write differs:\n%s", flags, again)
		}
		if msg, err := runHFile(t, "", "verify", out); err != nil || !strings.Contains(msg, "OK (10 cells)") {
			t.Fatalf("%v: verify: %q, %v", flags, msg, err)
		}
	}
}

func TestHFileVerifyAndInspect(t *testing.T) {
	msg, err := runHFile(t, "", "verify", simpleGolden)
	if err != nil || !strings.Contains(msg, "OK") {
		t.Fatalf("verify golden: %q, %v", msg, err)
	}
	data, err := os.ReadFile(simpleGolden)
	if err != nil {
		t.Fatal(err)
	}
	data[100] ^= 0xFF // inside the first data block
	bad := filepath.Join(t.TempDir(), "bad.hfile")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = runHFile(t, "", "verify", simpleGolden, bad)
	if err == nil || !strings.Contains(err.Error(), "bad.hfile") || !strings.Contains(err.Error(), "CRC32C mismatch") {
		t.Fatalf("verify of a corrupted file: %v; want a CRC32C mismatch naming the file", err)
	}

	text, err := runHFile(t, "", "inspect", simpleGolden)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"version=3.3", "hfile.LASTKEY = row-09/cf:q/1700000000000/Put", "BLOOM_FILTER_TYPE = ROW", "DATABLK* count=1"} {
		if !strings.Contains(text, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, text)
		}
	}
	js, err := runHFile(t, "", "inspect", "--json", "../../hfilewriter/testdata/hbase-1.0.0/v2-none-none-row-edge.hfile")
	if err != nil {
		t.Fatal(err)
	}
	var edge struct {
		TimeRange struct{ Min, Max int64 } `json:"timeRange"`
		Bloom     struct{ Chunks int }     `json:"deleteFamilyBloom"`
	}
	if err := json.Unmarshal([]byte(js), &edge); err != nil {
		t.Fatal(err)
	}
	if edge.TimeRange.Min != 0 || edge.TimeRange.Max != 9223372036854775806 || edge.Bloom.Chunks != 1 {
		t.Fatalf("inspect --json of the edge file: %+v", edge)
	}
	js, err = runHFile(t, "", "inspect", "--json", simpleGolden)
	if err != nil {
		t.Fatal(err)
	}
	var info struct {
		EntryCount uint64 `json:"entryCount"`
		LastKey    string `json:"lastKey"`
	}
	if err := json.Unmarshal([]byte(js), &info); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, js)
	}
	if info.EntryCount != 10 || info.LastKey != "row-09/cf:q/1700000000000/Put" {
		t.Fatalf("inspect --json: %+v", info)
	}
}

func TestHFileWriteErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.hfile")
	_, err := runHFile(t, "r1\tcf:q\t1\tPut\tv\nr2\tcf:q\tnotanumber\tPut\tv\n", "write", "-", out)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("parse error: %v; want it to name line 2", err)
	}
	_, err = runHFile(t, "r1\tcf:q\t1\tPut\tv\n\nr1\tcf:q\t1\tPut\tw\n", "write", "-", out)
	if err == nil || !strings.Contains(err.Error(), "lines 1 and 3") {
		t.Fatalf("duplicate key: %v; want it to name lines 1 and 3", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("output file left behind after a failed write")
	}
	if _, err := runHFile(t, "", "write", "--compression", "brotli", "-", out); err == nil {
		t.Fatal("unknown codec accepted")
	}
}

// TestHFileWriteTags: the optional tags column: ttl and visibility (resolved through --labels) are
// written, dump prints them in the form write reads back (ordinals, since HFiles store no label
// names), and v2 refuses tags with a clear error.
func TestHFileWriteTags(t *testing.T) {
	dir := t.TempDir()
	labels := filepath.Join(dir, "labels.txt")
	if err := os.WriteFile(labels, []byte("# from scan 'hbase:labels'\nsecret=1\ntopsecret=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := "r2\tcf:q\t5\tPut\tb\tttl=86400000\n" +
		"r1\tcf:q\t5\tPut\ta\tvisibility=secret|topsecret,ttl=1000\n" +
		"r3\tcf:q\t5\tPut\tc\n"
	out := filepath.Join(dir, "tags.hfile")
	for _, flags := range [][]string{{"--create-time", "0"}, {"--create-time", "0", "--compression", "snappy", "--encoding", "fast_diff"}} {
		args := append(append([]string{"write", "--labels", labels}, flags...), "-", out)
		if _, err := runHFile(t, in, args...); err != nil {
			t.Fatalf("%v: %v", flags, err)
		}
		dump, err := runHFile(t, "", "dump", out)
		if err != nil {
			t.Fatal(err)
		}
		want := "r1\tcf:q\t5\tPut\ta\tvisfmt=1,vis=1,vis=2,ttl=1000\n" +
			"r2\tcf:q\t5\tPut\tb\tttl=86400000\n" +
			"r3\tcf:q\t5\tPut\tc\n"
		if dump != want {
			t.Fatalf("%v: dump:\n%s\nwant:\n%s", flags, dump, want)
		}
		// The dump is valid write input (no labels needed) and yields the same file.
		first, _ := os.ReadFile(out)
		out2 := filepath.Join(dir, "again.hfile")
		args = append(append([]string{"write"}, flags...), "-", out2)
		if _, err := runHFile(t, dump, args...); err != nil {
			t.Fatal(err)
		}
		if second, _ := os.ReadFile(out2); !bytes.Equal(first, second) {
			t.Fatalf("%v: rewriting the dump changed the file", flags)
		}
		if msg, err := runHFile(t, "", "verify", out); err != nil || !strings.Contains(msg, "OK (3 cells)") {
			t.Fatalf("verify: %q %v", msg, err)
		}
	}
	named, err := runHFile(t, "", "dump", "--labels", labels, out)
	if err != nil || !strings.Contains(named, "r1\tcf:q\t5\tPut\ta\tvisibility=secret|topsecret,ttl=1000\n") {
		t.Fatalf("dump --labels: %q %v", named, err)
	}
	_, err = runHFile(t, in, "write", "--labels", labels, "--format-version", "2", "-", out)
	if err == nil || !strings.Contains(err.Error(), "cannot store tags") {
		t.Fatalf("v2 with tags: %v", err)
	}
	_, err = runHFile(t, in, "write", "-", out)
	if err == nil || !strings.Contains(err.Error(), "not in the label map") {
		t.Fatalf("visibility without --labels: %v", err)
	}
}
