package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hfload/hfload/internal/version"
)

// TestVersionFromLdflags builds hfload as the Makefile does, with a version stamped at link time, and
// checks that `hfload --version` and a run's manifest (tool_version) report it.
func TestVersionFromLdflags(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "hfload")
	const v = "v0.0.0-test-1-gabcdef"
	build := exec.Command("go", "build", "-ldflags", "-X github.com/hfload/hfload/internal/version.stamped="+v, "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "hfload version "+v {
		t.Fatalf("--version: %q, %v", out, err)
	}
	in := filepath.Join(dir, "in.csv")
	os.WriteFile(in, []byte("a,1\nb,2\n"), 0o644)
	run := exec.Command(bin, "run", "--input", in, "--columns", "HBASE_ROW_KEY,d:v", "--table", "t", "--out", filepath.Join(dir, "out"), "--no-progress")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	var m struct {
		ToolVersion string `json:"tool_version"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "out", "_manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&m); err != nil || m.ToolVersion != v {
		t.Fatalf("manifest tool_version %q (%v)", m.ToolVersion, err)
	}
}

// TestVersionFlag: without a stamp, --version reports the build's version (never an empty one).
func TestVersionFlag(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd()
	root.SetOut(&out)
	root.SetArgs([]string{"--version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); got != "hfload version "+version.String() || version.String() == "" {
		t.Fatalf("--version printed %q", got)
	}
}
