package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"syscall"
	"testing"
)

// gcPercent reads the runtime's GOGC setting without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestCollectAtBudget: the run sets the memory limit to the budget and turns GOGC off under it, and gives
// both settings back afterwards; a GOGC or GOMEMLIMIT of the environment is left as it is.
func TestCollectAtBudget(t *testing.T) {
	const budget = 200 << 20
	limit0, percent0 := debug.SetMemoryLimit(-1), gcPercent()
	check := func(name string, limit int64, percent int) {
		t.Helper()
		if l, p := debug.SetMemoryLimit(-1), gcPercent(); l != limit || p != percent {
			t.Errorf("%s: memory limit %d, GOGC %d; want %d, %d", name, l, p, limit, percent)
		}
	}
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	restore := collectAtBudget(budget)
	check("during the run", budget, -1)
	restore()
	check("after the run", limit0, percent0)

	t.Setenv("GOGC", "150") // the runtime read GOGC at start; the setting of the environment is respected
	restore = collectAtBudget(budget)
	check("GOGC set: during the run", budget, percent0)
	restore()
	check("GOGC set: after the run", limit0, percent0)

	t.Setenv("GOMEMLIMIT", "1GiB")
	restore = collectAtBudget(budget)
	check("GOMEMLIMIT set: during the run", limit0, percent0)
	restore()
	check("GOMEMLIMIT set: after the run", limit0, percent0)
}

// TestRunCollectsAtBudget runs the command as a process of its own, with the runtime's GC trace: a load
// that fits its budget is never collected (GOGC off), and one three times its budget is collected at the
// budget and stays within the budget plus 64 MiB of resident memory.
func TestRunCollectsAtBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("generates ~24 MB and loads it twice")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "orders.csv")
	writeOrdersTo(t, in, 24<<20, 7)
	gcLine := regexp.MustCompile(`(?m)^gc \d+ @`)
	load := func(memory string, budget int64) (collections int, maxRSS int64) {
		t.Helper()
		cmd := exec.Command(os.Args[0], "run", "--input", in, "--header", "--table", "orders",
			"--columns", "HBASE_ROW_KEY,d:customer_id,d:product_id,d:order_ts,d:quantity,d:unit_price,d:status,d:comment",
			"--out", filepath.Join(dir, "out-"+memory), "--split-sample", "4", "--memory", memory, "--no-progress")
		cmd.Env = append(os.Environ(), cliEnv+"=1", "GODEBUG=gctrace=1", "GOGC=", "GOMEMLIMIT=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("--memory %s: %v\n%s", memory, err, stderr.Bytes())
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		return len(gcLine.FindAll(stderr.Bytes(), -1)), ru.Maxrss << 10
	}
	if n, rss := load("256MiB", 256<<20); n != 0 {
		t.Errorf("--memory 256MiB, 24 MB of input: %d collections, want none (peak RSS %d MiB)", n, rss>>20)
	}
	const budget = 32 << 20
	n, rss := load("32MiB", budget)
	if n == 0 {
		t.Errorf("--memory 32MiB, 24 MB of input: no collection")
	}
	if rss > budget+64<<20 {
		t.Errorf("--memory 32MiB: peak RSS %d MiB, want at most the budget + 64 MiB", rss>>20)
	}
	t.Logf("--memory 32MiB: %d collections, peak RSS %d MiB", n, rss>>20)
}
