package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hfload runs the test binary as the CLI and returns its exit code, stdout and stderr.
func hfload(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

func TestJobCommands(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(in, 0o755)
	os.WriteFile(filepath.Join(in, "a.csv"), []byte("id,name,ts\n1,a,10\n2,b,20\n3,c,30\n"), 0o644)
	job := filepath.Join(dir, "inc.yaml")
	os.WriteFile(job, []byte(`input: [`+in+`/*.csv]
header: true
table: t
out: `+filepath.Join(dir, "out")+`
state_dir: `+filepath.Join(dir, "state")+`
incremental: {watermark: ts, watermark_type: number}
columns: HBASE_ROW_KEY,d:name,d:ts
`), 0o644)

	if code, out, _ := hfload(t, "validate", job); code != 0 || !strings.Contains(out, "OK") {
		t.Errorf("validate good job: %d %q", code, out)
	}
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("input: [x.csv]\ntable: t\nout: o\ncolumns: HBASE_ROW_KEY,d:a\ncompresion: zstd\n"), 0o644)
	if code, out, _ := hfload(t, "validate", bad); code != 1 || !strings.Contains(out, "invalid") || !strings.Contains(out, "bad.yaml:5: unknown key") {
		t.Errorf("validate bad job: %d %q", code, out)
	}

	code, out, errOut := hfload(t, "plan", job, "--json")
	var plan struct {
		Inputs []struct{ Action string }
		Sample struct{ Rows int64 }
	}
	if code != 0 || json.Unmarshal([]byte(out), &plan) != nil || len(plan.Inputs) != 1 || plan.Inputs[0].Action != "load" || plan.Sample.Rows != 3 {
		t.Errorf("plan: %d %q %q", code, out, errOut)
	}

	if code, _, errOut := hfload(t, "run", job, "--no-progress"); code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	if code, out, _ := hfload(t, "run", job, "--no-progress"); code != 0 || !strings.Contains(out, "nothing to do") {
		t.Errorf("rerun: %d %q", code, out)
	}
	code, out, _ = hfload(t, "runs", job)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 3 || !strings.Contains(lines[1], " 30") ||
		lines[2] != "lock "+filepath.Join(dir, "state", "inc", "lock")+": free" {
		t.Errorf("runs: %d %q", code, out)
	}
	// A loaded file that changed: exit 5.
	os.WriteFile(filepath.Join(in, "a.csv"), []byte("id,name,ts\n1,a,10\n2,b,20\n3,c,31\n"), 0o644)
	if code, _, errOut := hfload(t, "run", job, "--no-progress"); code != 5 || !strings.Contains(errOut, "--reload") {
		t.Errorf("changed input: %d %q", code, errOut)
	}
}
