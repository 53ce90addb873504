package jobs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// incrRows writes a CSV "key,name,ts" with one row per ts in tss; key is
// "k<ts>" prefixed by prefix.
func incrCSV(t *testing.T, path, prefix string, tss []string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("key,name,ts\n")
	for i, ts := range tss {
		fmt.Fprintf(&b, "%s%04d,name %d,%s\n", prefix, i, i, ts)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func seq(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

func incrJob(dir string) *Job {
	return &Job{
		Name: "inc", Input: []string{filepath.Join(dir, "in", "*.csv")}, Header: true, Table: "t",
		Out: filepath.Join(dir, "out"), StateDir: filepath.Join(dir, "state"), Timestamp: testTS,
		Columns: "HBASE_ROW_KEY,d:name,d:ts", Memory: Size(64 << 20), Workers: 2,
	}
}

func runsOf(t *testing.T, job *Job) []RunRecord {
	t.Helper()
	st, err := job.OpenState()
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs()
	if err != nil {
		t.Fatal(err)
	}
	return runs
}

// rowsOf returns the distinct row keys of a committed run, sorted.
func rowsOf(t *testing.T, res *ExecuteResult) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, l := range readOutput(t, res.OutDir, res.Manifest) {
		seen[strings.Split(l, "\t")[0]] = true
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// visibleRunDirs lists the directories completebulkload could see under <out>/<job>.
func visibleRunDirs(t *testing.T, job *Job) []string {
	t.Helper()
	es, err := os.ReadDir(job.RunParent())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestIncrementalCycle(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	a := filepath.Join(dir, "in", "a.csv")
	incrCSV(t, a, "a", seq(1, 100))
	job := incrJob(dir)
	ctx := context.Background()

	// First load: everything, into <out>/<job>/<run-id>/, recorded.
	res, err := Execute(ctx, job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if res.NothingToDo || m == nil || m.Counts.RowsRead != 100 || m.Counts.CellsWritten != 200 {
		t.Fatalf("first run: %+v", res)
	}
	if filepath.Dir(res.OutDir) != job.RunParent() || filepath.Base(res.OutDir) != m.RunID {
		t.Errorf("output %s, want %s/<run-id>", res.OutDir, job.RunParent())
	}
	if _, err := LoadManifest(res.OutDir); err != nil {
		t.Errorf("committed manifest: %v", err)
	}
	if got := len(rowsOf(t, res)); got != 100 {
		t.Errorf("rows in HFiles: %d", got)
	}
	runs := runsOf(t, job)
	if len(runs) != 1 || runs[0].RunID != m.RunID || len(runs[0].Inputs) != 1 || runs[0].Output != res.OutDir ||
		runs[0].Counts != m.Counts || !strings.HasPrefix(runs[0].Inputs[0].Checksum, "sha256:") {
		t.Fatalf("runs after first: %+v", runs)
	}
	if len(m.Inputs) != 1 || !m.Inputs[0].SameContent(runs[0].Inputs[0]) || m.Inputs[0].Path != runs[0].Inputs[0].Path ||
		m.Inputs[0].Checksum == "" {
		t.Errorf("manifest inputs %+v, recorded %+v", m.Inputs, runs[0].Inputs)
	}

	// Rerun: nothing new, says so, records nothing, writes nothing.
	var logs []string
	res2, err := Execute(ctx, job, ExecuteOptions{Log: func(s string) { logs = append(logs, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if !res2.NothingToDo || res2.Manifest != nil || !strings.Contains(res2.Message, "already loaded") ||
		!strings.Contains(res2.Summary(), "nothing to do") || ExitCode(err) != ExitOK {
		t.Fatalf("no-op rerun: %+v", res2)
	}
	if got := len(runsOf(t, job)); got != 1 {
		t.Errorf("no-op rerun recorded a run: %d runs", got)
	}
	if got := visibleRunDirs(t, job); len(got) != 1 {
		t.Errorf("run dirs after no-op: %v", got)
	}

	// A new file in the glob is loaded alone.
	b := filepath.Join(dir, "in", "b.csv")
	incrCSV(t, b, "b", seq(101, 130))
	res3, err := Execute(ctx, job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m3 := res3.Manifest
	if m3.Counts.RowsRead != 30 || len(m3.Inputs) != 1 || filepath.Base(m3.Inputs[0].Path) != "b.csv" {
		t.Fatalf("third run loaded %+v from %+v", m3.Counts, m3.Inputs)
	}
	for _, r := range rowsOf(t, res3) {
		if !strings.HasPrefix(r, "b") {
			t.Fatalf("third run loaded row %s of a.csv", r)
		}
	}
	runs = runsOf(t, job)
	if len(runs) != 2 || len(runs[1].Skipped) != 1 || filepath.Base(runs[1].Skipped[0]) != "a.csv" {
		t.Fatalf("runs after third: %+v", runs)
	}

	// A loaded file that changed is refused (exit 5) and the state is unchanged.
	incrCSV(t, a, "a", seq(1, 101))
	_, err = Execute(ctx, job, ExecuteOptions{})
	if !errors.Is(err, ErrInputChanged) || ExitCode(err) != ExitChanged || !strings.Contains(err.Error(), "a.csv") {
		t.Fatalf("changed input: %v", err)
	}
	if got := len(runsOf(t, job)); got != 2 {
		t.Errorf("failed run changed the state: %d runs", got)
	}
	if got := visibleRunDirs(t, job); len(got) != 2 {
		t.Errorf("run dirs after refused run: %v", got)
	}
	// --reload loads it again (only it).
	job.Reload = true
	res5, err := Execute(ctx, job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res5.Manifest.Counts.RowsRead != 101 || len(res5.Manifest.Inputs) != 1 {
		t.Fatalf("reload: %+v", res5.Manifest.Counts)
	}
	if got := len(runsOf(t, job)); got != 3 {
		t.Errorf("runs after reload: %d", got)
	}
}

func TestIncrementalWatermark(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	incrCSV(t, filepath.Join(dir, "in", "a.csv"), "a", seq(1, 100))
	job := incrJob(dir)
	job.Incremental = Incremental{Watermark: "ts", WatermarkType: "number"}
	job.MaxRejects = -1
	ctx := context.Background()

	res, err := Execute(ctx, job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := res.Manifest.Watermark; w == nil || w.Value != "100" || w.Column != "ts" || res.Manifest.Counts.RowsFiltered != 0 {
		t.Fatalf("first watermark: %+v, counts %+v", w, res.Manifest.Counts)
	}

	// b.csv overlaps: ts 50..150 (51 rows at or below 100), plus a row whose ts is not a number and one
	// that is NULL. Rows are numbered from 0 in b, so b0000..b0050 are old.
	tss := append(seq(50, 150), "soon", "")
	incrCSV(t, filepath.Join(dir, "in", "b.csv"), "b", tss)
	res2, err := Execute(ctx, job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := res2.Manifest.Counts
	if c.RowsRead != 103 || c.RowsFiltered != 51 || c.RowsKeyed != 50 || c.RowsRejected != 2 {
		t.Fatalf("counts: %+v", c)
	}
	if err := res2.Manifest.Reconcile(); err != nil {
		t.Fatal(err)
	}
	rows := rowsOf(t, res2)
	if len(rows) != 50 || rows[0] != "b0051" || rows[49] != "b0100" {
		t.Fatalf("loaded rows %d: %v .. %v", len(rows), rows[0], rows[len(rows)-1])
	}
	for _, l := range readOutput(t, res2.OutDir, res2.Manifest) {
		f := strings.Split(l, "\t")
		if strings.Contains(f[1], "ts") {
			if v, _ := strconv.Atoi(f[len(f)-1]); v <= 100 {
				t.Fatalf("cell at or below the watermark: %s", l)
			}
		}
	}
	rej, err := os.ReadFile(filepath.Join(res2.OutDir, "_rejects.jsonl"))
	if err != nil || !strings.Contains(string(rej), "not a number") || !strings.Contains(string(rej), "NULL") {
		t.Fatalf("rejects: %s %v", rej, err)
	}
	runs := runsOf(t, job)
	if len(runs) != 2 || runs[1].Watermark == nil || runs[1].Watermark.Value != "150" {
		t.Fatalf("recorded watermark: %+v", runs[len(runs)-1].Watermark)
	}

	// A new file entirely at or below the mark: every row filtered, an empty run is committed and the
	// mark stays.
	incrCSV(t, filepath.Join(dir, "in", "c.csv"), "c", seq(140, 150))
	res3, err := Execute(ctx, job, ExecuteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := res3.Manifest.Counts; c.RowsFiltered != 11 || c.RowsKeyed != 0 || c.FilesWritten != 0 || res3.Manifest.Watermark.Value != "150" {
		t.Fatalf("all filtered: %+v %+v", c, res3.Manifest.Watermark)
	}
}

func TestIncrementalConcurrentRunRefused(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	incrCSV(t, filepath.Join(dir, "in", "a.csv"), "a", seq(1, 10))
	job := incrJob(dir)
	st, err := job.OpenState()
	if err != nil {
		t.Fatal(err)
	}
	lock, _, err := st.Lock("run inc (the first run)")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Execute(context.Background(), job, ExecuteOptions{})
	if !errors.Is(err, ErrLocked) || ExitCode(err) != ExitLocked || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("second run: %v", err)
	}
	if got := visibleRunDirs(t, job); len(got) != 0 {
		t.Errorf("refused run wrote %v", got)
	}
	lock.Release()
	if _, err := Execute(context.Background(), job, ExecuteOptions{}); err != nil {
		t.Fatalf("after release: %v", err)
	}
}

func TestIncrementalStaleLockTakenOver(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	incrCSV(t, filepath.Join(dir, "in", "a.csv"), "a", seq(1, 10))
	job := incrJob(dir)
	st, err := job.OpenState()
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := startHelper(t, "lock", st.Dir(), "locked") // holds <state>/<job>/lock
	if _, err := Execute(context.Background(), job, ExecuteOptions{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("while the holder lives: %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	var logs []string
	res, err := Execute(context.Background(), job, ExecuteOptions{Log: func(s string) { logs = append(logs, s) }})
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	if !strings.Contains(strings.Join(logs, "\n"), "took over the lock of a crashed run") ||
		!strings.Contains(strings.Join(logs, "\n"), "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("log does not mention the takeover: %q", logs)
	}
	if res.Manifest == nil || len(runsOf(t, job)) != 1 {
		t.Errorf("run not committed and recorded")
	}
}

// The killed-run test re-executes the test binary with incrHelperEnv set; the
// child runs Execute on the job in HFLOAD_INCR_DIR and blocks in the write
// phase (after the first HFile bytes), where the parent SIGKILLs it.
const incrHelperEnv = "HFLOAD_INCR_HELPER"

func TestIncrementalHelperProcess(t *testing.T) {
	if os.Getenv(incrHelperEnv) == "" {
		t.Skip("helper process for the killed-run test")
	}
	job := incrJob(os.Getenv("HFLOAD_INCR_DIR"))
	announced := make(chan struct{}, 1)
	_, err := Execute(context.Background(), job, ExecuteOptions{Progress: func(p Progress) {
		if p.Phase == "write" && p.BytesDone > 0 {
			select {
			case announced <- struct{}{}:
				fmt.Println("writing")
			default:
			}
			time.Sleep(time.Hour)
		}
	}})
	fmt.Println("error", err)
	os.Exit(3)
}

func TestIncrementalKilledRunThenGoodRun(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "in"), 0o755)
	incrCSV(t, filepath.Join(dir, "in", "a.csv"), "a", seq(1, 40000))
	job := incrJob(dir)

	cmd := exec.Command(os.Args[0], "-test.run=^TestIncrementalHelperProcess$", "-test.v=false")
	cmd.Env = append(os.Environ(), incrHelperEnv+"=1", "HFLOAD_INCR_DIR="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line <- sc.Text()
			return
		}
		close(line)
	}()
	select {
	case l := <-line:
		if l != "writing" {
			t.Fatalf("helper: %q", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("helper did not start writing")
	}
	// Mid-run: the staging dir holds partial output.
	stg, _ := filepath.Glob(filepath.Join(job.RunParent(), StagingPrefix+"*"))
	if len(stg) != 1 {
		t.Fatalf("staging dirs while running: %v", stg)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	if got := visibleRunDirs(t, job); len(got) != 0 {
		t.Fatalf("killed run is visible: %v", got)
	}
	if got := len(runsOf(t, job)); got != 0 {
		t.Fatalf("killed run was recorded")
	}
	var logs []string
	res, err := Execute(context.Background(), job, ExecuteOptions{Log: func(s string) { logs = append(logs, s) }})
	if err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if res.Manifest.Counts.RowsRead != 40000 {
		t.Errorf("rerun loaded %d rows", res.Manifest.Counts.RowsRead)
	}
	if err := res.Manifest.Reconcile(); err != nil {
		t.Error(err)
	}
	if !strings.Contains(strings.Join(logs, "\n"), "took over the lock") {
		t.Errorf("logs: %q", logs)
	}
	if got := visibleRunDirs(t, job); len(got) != 1 || got[0] != res.Manifest.RunID {
		t.Errorf("after rerun: %v", got)
	}
	if left, _ := filepath.Glob(filepath.Join(job.RunParent(), StagingPrefix+"*")); len(left) != 0 {
		t.Errorf("staging debris left: %v", left)
	}
	if runs := runsOf(t, job); len(runs) != 1 || runs[0].RunID != res.Manifest.RunID {
		t.Errorf("runs: %+v", runs)
	}
}
