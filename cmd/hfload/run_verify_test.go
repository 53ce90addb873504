package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunVerifyFlag: every --verify level loads the same cells and the summary carries the phase
// timings; an unknown level is a usage error (exit 1) that writes nothing.
func TestRunVerifyFlag(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("id,name\na,1\nk,2\nm,3\nz,4\n"), 0o644)
	for _, level := range []string{"stream", "blocks", "full", "none"} {
		out := filepath.Join(dir, "out-"+level)
		code, stdout, stderr := hfload(t, "run", "--input", in, "--header", "--columns", "HBASE_ROW_KEY,d:name",
			"--table", "t", "--out", out, "--timestamp", "1", "--verify", level, "--no-progress", "--json")
		if code != 0 {
			t.Fatalf("--verify %s: exit %d\n%s\n%s", level, code, stdout, stderr)
		}
		var res struct {
			Manifest struct {
				Counts struct {
					CellsWritten int64 `json:"cells_written"`
				} `json:"counts"`
			} `json:"manifest"`
			ReadSeconds  *float64 `json:"read_seconds"`
			WriteSeconds *float64 `json:"write_seconds"`
		}
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("--verify %s: %v\n%s", level, err, stdout)
		}
		if res.Manifest.Counts.CellsWritten != 4 || res.ReadSeconds == nil || res.WriteSeconds == nil {
			t.Fatalf("--verify %s: cells %d, read/write seconds present %v %v", level,
				res.Manifest.Counts.CellsWritten, res.ReadSeconds != nil, res.WriteSeconds != nil)
		}
	}
	out := filepath.Join(dir, "out-bad")
	code, _, stderr := hfload(t, "run", "--input", in, "--header", "--columns", "HBASE_ROW_KEY,d:name",
		"--table", "t", "--out", out, "--verify", "sometimes", "--no-progress")
	if code != 1 || !strings.Contains(stderr, "--verify") {
		t.Fatalf("--verify sometimes: exit %d, stderr %q; want 1 naming the flag", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a rejected command line created %s", out)
	}
}
