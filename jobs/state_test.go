package jobs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type stateFixture struct {
	t      *testing.T
	inDir  string
	outDir string
	st     *State
	n      int
}

func newStateFixture(t *testing.T) *stateFixture {
	root := t.TempDir()
	st, err := OpenState(filepath.Join(root, "state"), "nightly")
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(root, "in")
	os.Mkdir(in, 0o755)
	return &stateFixture{t: t, inDir: in, outDir: filepath.Join(root, "out", "nightly"), st: st}
}

func (f *stateFixture) write(name, content string, mtime time.Time) string {
	p := filepath.Join(f.inDir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// run does what the lead's run orchestration will do: lock, plan, stage,
// begin, commit, record. It returns the plan.
func (f *stateFixture) run(inputs []string, reload bool, wm *Watermark) (*Plan, error) {
	f.t.Helper()
	f.n++
	lock, _, err := f.st.Lock("run nightly")
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	plan, err := f.st.Plan(context.Background(), inputs, reload)
	if err != nil || plan.NoOp() {
		return plan, err
	}
	runID := "run" + string(rune('0'+f.n))
	stg, err := NewRunStaging(f.outDir, runID)
	if err != nil {
		return nil, err
	}
	defer stg.Abort()
	m := stageFiles(f.t, stg, map[string]string{"d/f": "x"})
	m.Inputs, m.Watermark = plan.Load, wm
	rec := RunRecord{RunID: runID, Started: time.Unix(int64(1000+f.n), 0).UTC(), Inputs: plan.Load, Watermark: wm, Output: stg.Final()}
	for _, s := range plan.Skip {
		rec.Skipped = append(rec.Skipped, s.Path)
	}
	if err := f.st.Begin(rec); err != nil {
		return nil, err
	}
	if err := stg.Commit(m); err != nil {
		return nil, err
	}
	rec.Finished, rec.Counts = m.Finished, m.Counts
	return plan, f.st.Record(rec)
}

func paths(in []InputFile) []string {
	var out []string
	for _, i := range in {
		out = append(out, filepath.Base(i.Path))
	}
	return out
}

func TestIncrementalLoads(t *testing.T) {
	f := newStateFixture(t)
	t0 := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	a := f.write("a.csv", "1,2\n", t0)
	b := f.write("b.csv", "3,4\n", t0)

	// First load: everything is new.
	plan, err := f.run([]string{a, b}, false, &Watermark{Column: "ts", Type: "number", Value: "17"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(paths(plan.Load), ",") != "a.csv,b.csv" || len(plan.Skip) != 0 || plan.Load[0].Checksum == "" {
		t.Fatalf("first plan: %+v", plan)
	}

	// Rerun with the same files: nothing to do, and nothing recorded.
	plan, err = f.run([]string{a, b}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.NoOp() || len(plan.Skip) != 2 || plan.Skip[0].LoadedBy != "run1" {
		t.Fatalf("rerun plan: %+v", plan)
	}
	if s := plan.Summary(); !strings.Contains(s, "nothing to do: all 2 inputs were already loaded") {
		t.Errorf("summary: %s", s)
	}
	if plan.Watermark == nil || plan.Watermark.Value != "17" {
		t.Errorf("last watermark: %+v", plan.Watermark)
	}

	// A touched file with the same bytes is still skipped.
	os.Chtimes(a, t0.Add(time.Hour), t0.Add(time.Hour))
	// A new file is loaded alone.
	c := f.write("c.csv", "5,6\n", t0)
	plan, err = f.run([]string{a, b, c}, false, &Watermark{Column: "ts", Type: "number", Value: "25"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(paths(plan.Load), ",") != "c.csv" || len(plan.Skip) != 2 {
		t.Fatalf("new-file plan: load %v skip %d", paths(plan.Load), len(plan.Skip))
	}
	if s := plan.Summary(); s != "load 1 file (1 new), skip 2 already loaded" {
		t.Errorf("summary: %s", s)
	}

	// A loaded file that changed is an error (exit 5) naming it ...
	f.write("b.csv", "3,4,changed\n", t0.Add(2*time.Hour))
	plan, err = f.run([]string{a, b, c}, false, nil)
	if !errors.Is(err, ErrInputChanged) || ExitCode(err) != ExitChanged || !strings.Contains(err.Error(), b) ||
		!strings.Contains(err.Error(), "loaded by run run1") || !strings.Contains(err.Error(), "--reload") {
		t.Fatalf("changed file: %v", err)
	}
	if len(plan.Changed) != 1 {
		t.Errorf("changed: %+v", plan.Changed)
	}
	// ... also when only the content changed (same size, new mtime).
	f.write("c.csv", "7,8\n", t0.Add(3*time.Hour))
	if _, err := f.run([]string{c}, false, nil); !errors.Is(err, ErrInputChanged) {
		t.Errorf("same-size rewrite: %v", err)
	}
	// With reload, changed files are loaded again.
	plan, err = f.run([]string{a, b, c}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(paths(plan.Load), ",") != "b.csv,c.csv" || len(plan.Changed) != 2 {
		t.Fatalf("reload plan: %+v", plan)
	}
	if s := plan.Summary(); s != "load 2 files (0 new, 2 changed since loaded: reloading), skip 1 already loaded" {
		t.Errorf("summary: %s", s)
	}
	// Now the reloaded fingerprints are the reference.
	plan, err = f.run([]string{a, b, c}, false, nil)
	if err != nil || !plan.NoOp() {
		t.Fatalf("after reload: %+v %v", plan, err)
	}

	runs, err := f.st.Runs()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.RunID)
		if r.Job != "nightly" || r.Counts.FilesWritten != 1 || r.Output == "" {
			t.Errorf("run record %+v", r)
		}
	}
	// Runs 2, 4, 5 and 7 were no-ops or failures: nothing recorded.
	if strings.Join(ids, ",") != "run1,run3,run6" {
		t.Errorf("runs = %v", ids)
	}
	if runs[1].Watermark == nil || runs[1].Watermark.Value != "25" {
		t.Errorf("watermark of run3: %+v", runs[1].Watermark)
	}
	if wm, _ := f.st.LastWatermark(); wm == nil || wm.Value != "25" {
		t.Errorf("LastWatermark = %+v", wm)
	}
	for _, r := range runs {
		if m, err := LoadManifest(r.Output); err != nil || m.RunID != r.RunID {
			t.Errorf("output of %s: %v", r.RunID, err)
		}
	}
}

func TestFailedRunLeavesStateUnchanged(t *testing.T) {
	f := newStateFixture(t)
	a := f.write("a.csv", "1\n", time.Unix(1e9, 0))
	lock, _, err := f.st.Lock("run")
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := f.st.Plan(context.Background(), []string{a}, false)
	stg, err := NewRunStaging(f.outDir, "failed")
	if err != nil {
		t.Fatal(err)
	}
	m := stageFiles(t, stg, map[string]string{"d/f": "x"})
	m.Files[0].Bytes = 99 // the commit fails verification
	f.st.Begin(RunRecord{RunID: "failed", Inputs: plan.Load, Output: stg.Final()})
	if err := stg.Commit(m); err == nil {
		t.Fatal("commit succeeded")
	}
	lock.Release()
	// The next run settles the pending record: its output never appeared.
	lock, notes, err := f.st.Lock("run")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if len(notes) != 1 || !strings.Contains(notes[0], "dropped the pending record of uncommitted run failed") {
		t.Errorf("notes: %q", notes)
	}
	runs, _ := f.st.Runs()
	plan, _ = f.st.Plan(context.Background(), []string{a}, false)
	if len(runs) != 0 || len(plan.Load) != 1 {
		t.Errorf("state changed by a failed run: runs %v, plan %+v", runs, plan)
	}
}

func TestCrashBetweenCommitAndRecordIsRecorded(t *testing.T) {
	f := newStateFixture(t)
	a := f.write("a.csv", "1\n", time.Unix(1e9, 0))
	lock, _, _ := f.st.Lock("run")
	plan, _ := f.st.Plan(context.Background(), []string{a}, false)
	stg, _ := NewRunStaging(f.outDir, "r1")
	m := stageFiles(t, stg, map[string]string{"d/f": "x"})
	m.Watermark = &Watermark{Column: "ts", Type: "time", Value: "2026-11-21T00:00:00Z"}
	f.st.Begin(RunRecord{RunID: "r1", Inputs: plan.Load, Output: stg.Final()})
	if err := stg.Commit(m); err != nil {
		t.Fatal(err)
	}
	lock.f.Close() // crash before Record
	lock2, notes, err := f.st.Lock("run")
	if err != nil {
		t.Fatal(err)
	}
	defer lock2.Release()
	if len(notes) != 2 || !strings.Contains(notes[0], "took over the lock of a crashed run") ||
		!strings.Contains(notes[1], "recorded run r1, which committed") {
		t.Errorf("notes: %q", notes)
	}
	runs, _ := f.st.Runs()
	if len(runs) != 1 || runs[0].Counts != m.Counts || runs[0].Watermark == nil || runs[0].Watermark.Value != "2026-11-21T00:00:00Z" {
		t.Fatalf("runs: %+v", runs)
	}
	plan, _ = f.st.Plan(context.Background(), []string{a}, false)
	if !plan.NoOp() {
		t.Errorf("input of the recovered run is not skipped: %+v", plan)
	}
}

func TestConcurrentRunRefused(t *testing.T) {
	f := newStateFixture(t)
	lock, _, err := f.st.Lock("run nightly")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	st2, _ := OpenState(filepath.Dir(f.st.Dir()), "nightly")
	_, _, err = st2.Lock("run nightly")
	if !errors.Is(err, ErrLocked) || ExitCode(err) != 4 || !strings.Contains(err.Error(), "(run nightly)") {
		t.Errorf("second run: %v", err)
	}
	// Other jobs in the same state_dir are independent.
	other, _ := OpenState(filepath.Dir(f.st.Dir()), "hourly")
	l3, _, err := other.Lock("run hourly")
	if err != nil {
		t.Errorf("other job: %v", err)
	} else {
		l3.Release()
	}
}

func TestPlanErrors(t *testing.T) {
	f := newStateFixture(t)
	if _, err := f.st.Plan(context.Background(), []string{"-"}, false); !errors.Is(err, ErrConfig) {
		t.Errorf("stdin: %v", err)
	}
	if _, err := f.st.Plan(context.Background(), []string{filepath.Join(f.inDir, "missing.csv")}, false); ExitCode(err) != ExitIO {
		t.Errorf("missing file: %v", err)
	}
	if plan, err := f.st.Plan(context.Background(), nil, false); err != nil || !plan.NoOp() || plan.Summary() != "nothing to do: no inputs" {
		t.Errorf("no inputs: %v %v", plan, err)
	}
	// Duplicates (same file by two names) are loaded once.
	a := f.write("a.csv", "1\n", time.Unix(1e9, 0))
	plan, err := f.st.Plan(context.Background(), []string{a, filepath.Join(f.inDir, ".", "a.csv")}, false)
	if err != nil || len(plan.Load) != 1 {
		t.Errorf("duplicate input: %+v %v", plan, err)
	}
	if _, err := OpenState(t.TempDir(), "../evil"); !errors.Is(err, ErrConfig) {
		t.Errorf("bad job name: %v", err)
	}
}

func TestWatermarks(t *testing.T) {
	cases := []struct {
		typ    string
		values []string
		want   string
	}{
		{"number", []string{"9", "10", "2.5", "-3", "1e1"}, "10"},
		{"string", []string{"9", "10", "2.5"}, "9"},
		{"time", []string{"2026-11-20", "2026-11-21 10:00:00", "2026-11-21T09:00:00+02:00"}, "2026-11-21T10:00:00Z"},
	}
	for _, c := range cases {
		w := &Watermark{Column: "c", Type: c.typ}
		for _, v := range c.values {
			if err := w.Observe(v); err != nil {
				t.Fatal(err)
			}
		}
		if w.Value != c.want {
			t.Errorf("%s: max of %v = %s, want %s", c.typ, c.values, w.Value, c.want)
		}
	}
	w := &Watermark{Column: "c", Type: "number", Value: "10"}
	if ok, _ := w.After("10.5"); !ok {
		t.Error("10.5 not after 10")
	}
	if ok, _ := w.After("9"); ok {
		t.Error("9 after 10")
	}
	if err := w.Observe("ten"); err == nil || !strings.Contains(err.Error(), "column c") {
		t.Errorf("bad number: %v", err)
	}
	if _, err := CompareWatermarks("time", "yesterday", "2026-01-01"); err == nil {
		t.Error("bad time accepted")
	}
	if _, err := CompareWatermarks("date", "a", "b"); err == nil {
		t.Error("bad type accepted")
	}
	var none *Watermark
	if ok, _ := none.After("anything"); !ok {
		t.Error("nil watermark should let everything through")
	}
}

func TestWriteRuns(t *testing.T) {
	var buf strings.Builder
	if err := WriteRuns(&buf, nil); err != nil || buf.String() != "no runs recorded\n" {
		t.Errorf("empty: %q %v", buf.String(), err)
	}
	buf.Reset()
	runs := []RunRecord{
		{RunID: "r1", Started: time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC), Finished: time.Date(2026, 11, 21, 2, 0, 12, 500e6, time.UTC),
			Inputs: make([]InputFile, 3), Counts: Counts{RowsRead: 1000, RowsFiltered: 7, RowsRejected: 2, CellsWritten: 3000, FilesWritten: 4, BytesWritten: 2 << 20},
			Watermark: &Watermark{Value: "2026-11-21T01:59:00Z"}},
		{RunID: "r2", Started: time.Date(2026, 11, 22, 2, 0, 0, 0, time.UTC), Skipped: []string{"a"}},
	}
	if err := WriteRuns(&buf, runs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(strings.TrimSpace(lines[0]), "RUN") {
		t.Fatalf("table:\n%s", buf.String())
	}
	f1 := strings.Fields(lines[1])
	if strings.Join(f1, " ") != "r1 2026-11-21T02:00:00Z 12.5 3 0 1000 7 2 3000 4 2MiB 2026-11-21T01:59:00Z" {
		t.Errorf("row 1: %q", f1)
	}
	if f2 := strings.Fields(lines[2]); strings.Join(f2, " ") != "r2 2026-11-22T02:00:00Z - 0 1 0 0 0 0 0 0 -" {
		t.Errorf("row 2: %q", f2)
	}
}

func TestNewRunID(t *testing.T) {
	a := NewRunID(time.Date(2026, 11, 22, 5, 30, 0, 0, time.FixedZone("x", 3600)))
	b := NewRunID(time.Date(2026, 11, 22, 5, 30, 1, 0, time.UTC))
	if !strings.HasPrefix(a, "20261122T043000Z-") || len(a) != len("20261122T043000Z-")+8 || a >= b {
		t.Errorf("run ids %s %s", a, b)
	}
	if ValidJobName(a) != nil {
		t.Errorf("run id %s is not a valid directory name", a)
	}
	if NewRunID(time.Unix(0, 0)) == NewRunID(time.Unix(0, 0)) {
		t.Error("run ids of the same second collide")
	}
}
