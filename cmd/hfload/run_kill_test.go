package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hfload/hfload/jobs"
)

// Issue 4: a run killed with SIGKILL in the middle of writing leaves nothing
// that completebulkload could pick up, and a rerun into the same directory
// succeeds.
func TestRunKilledMidWriteLeavesNothingVisible(t *testing.T) {
	if testing.Short() {
		t.Skip("generates ~50 MB")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "orders.csv")
	rows := writeOrdersTo(t, in, 50<<20, 7)
	out := filepath.Join(dir, "out")
	job := filepath.Join(dir, "orders.yaml")
	if err := os.WriteFile(job, []byte(`input: [`+in+`]
header: true
table: orders
out: `+out+`
split_sample: 4
memory: 256MiB
mapping:
  columns:
    - {name: order_id}
    - {name: customer_id, type: long, cell: "d:c"}
    - {name: status, cell: "d:s"}
  rowkey: [order_id]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", job, "--no-progress"}

	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })

	// Wait for HFile bytes in the staging dir (mid-write); the staging dir alone after 20 s.
	var stagingSeen time.Time
	phase := ""
	deadline := time.Now().Add(60 * time.Second)
	for phase == "" {
		select {
		case err := <-exited:
			t.Fatalf("the run ended before it could be killed: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no staging directory appeared")
		}
		stg, _ := filepath.Glob(filepath.Join(out, jobs.StagingPrefix+"*"))
		if len(stg) == 0 {
			continue
		}
		if stagingSeen.IsZero() {
			stagingSeen = time.Now()
		}
		if files, _ := filepath.Glob(filepath.Join(stg[0], "d", "*")); len(files) > 0 {
			phase = "writing HFiles"
		} else if time.Since(stagingSeen) > 20*time.Second {
			phase = "reading"
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the run was not killed (it finished first?): %v", err)
	}
	t.Logf("killed while %s (%d input rows)", phase, rows)

	// Nothing visible: no family directory, no manifest; debris only under dot names.
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var debris []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") {
			t.Errorf("visible after the kill: %s", e.Name())
		}
		debris = append(debris, e.Name())
	}
	t.Logf("left by the killed run: %v", debris)

	// The rerun takes over, cleans up and commits.
	start := time.Now()
	if code := run(args); code != 0 {
		t.Fatalf("rerun exit %d", code)
	}
	t.Logf("rerun took %.1fs", time.Since(start).Seconds())
	m, err := jobs.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Reconcile(); err != nil {
		t.Fatal(err)
	}
	if m.Counts.RowsRead != rows || m.Counts.RowsKeyed != rows {
		t.Errorf("rerun counts %+v, want %d rows", m.Counts, rows)
	}
	entries, _ = os.ReadDir(out)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), jobs.StagingPrefix) {
			t.Errorf("staging debris left after the rerun: %s", e.Name())
		}
	}
}
